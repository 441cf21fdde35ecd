"""Fixtures shared by every test package: users, tokens, authenticated clients, stored memories.

Everything here is real: the embedded PostgreSQL with pgvector, the real MiniLM model.
"""
import os
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.services import token_create
from apps.memories.services import memory_store
from tests.browser import DESKTOP, PHONE, assert_no_sideways_scroll
from tests.factories import UserFactory
from tests.optional import skip_missing


def pytest_collection_modifyitems(config, items):
    # The optional groups (redis, network, netns): skipped with the reason where the resource is missing.
    skip_missing(items)


@pytest.fixture
def user(db):
    return UserFactory(username="alice")


@pytest.fixture
def other_user(db):
    return UserFactory(username="bob")


@pytest.fixture
def staff_user(db):
    return UserFactory(username="carol", is_staff=True, is_superuser=True)


@pytest.fixture
def make_token():
    def make(user, scopes=("read", "write"), **kwargs):
        return token_create(actor=user, name=kwargs.pop("name", "test"), scopes=list(scopes), **kwargs).raw

    return make


@pytest.fixture
def api_client_for(make_token):
    def make(user, scopes=("read", "write")):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(user, scopes)}")
        return client

    return make


@pytest.fixture
def api(user, api_client_for):
    """A REST client authenticated as `user` with a read+write token."""
    return api_client_for(user)


@pytest.fixture
def store():
    """Store a memory through the service layer: store(user, "content", **fields) -> Memory."""
    def make(actor, content, **fields):
        fields.setdefault("primary_sector", "semantic")
        return memory_store(actor=actor, content=content, **fields).memory

    return make


@pytest.fixture
def client_for():
    def make(user):
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def alice(user, client_for):
    """A test client (pages) logged in as alice (the `user` fixture)."""
    return client_for(user)


@pytest.fixture
def bob(other_user, client_for):
    return client_for(other_user)


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where browser tests put screenshots: ENGRAM_SCREENSHOTS_DIR (docs/screenshots to refresh the docs' pictures)
    or a temporary folder."""
    folder = Path(os.environ.get("ENGRAM_SCREENSHOTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shoot(shots):
    """shoot(page, name): check a browser page's layout and screenshot it at desktop and phone widths, into
    ``shots``."""
    folder = shots

    def take(page, name: str) -> None:
        for viewport, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(viewport)
            assert_no_sideways_scroll(page, name)
            page.screenshot(path=str(folder / f"{name}{suffix}.png"), full_page=True)
        page.set_viewport_size(DESKTOP)

    return take
