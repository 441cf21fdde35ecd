"""Fixtures of the Context Graph tool tests: a token for each of the two users."""
import pytest


@pytest.fixture
def alice_token(user, make_token):
    return make_token(user)


@pytest.fixture
def bob_token(other_user, make_token):
    return make_token(other_user)
