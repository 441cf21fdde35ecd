"""Fixtures of the Context Graph tests: a token for each of the two users, and Bob's REST client."""
import pytest


@pytest.fixture
def alice_token(user, make_token):
    return make_token(user)


@pytest.fixture
def bob_token(other_user, make_token):
    return make_token(other_user)


@pytest.fixture
def bob_api(other_user, api_client_for):
    return api_client_for(other_user)
