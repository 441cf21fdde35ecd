import pytest
from django.test import Client


@pytest.fixture
def client_for():
    def make(user):
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def alice(user, client_for):
    """A test client logged in as alice (the shared `user` fixture)."""
    return client_for(user)


@pytest.fixture
def bob(other_user, client_for):
    return client_for(other_user)
