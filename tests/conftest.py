"""Fixtures shared by every test package: users, tokens, authenticated clients, stored memories.

Everything here is real: the embedded PostgreSQL with pgvector, the real MiniLM model.
"""
import pytest
from rest_framework.test import APIClient

from apps.accounts.services import token_create
from apps.memories.services import memory_store
from tests.factories import UserFactory


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
