"""Token management: list, create (the raw token shown once, stored hashed), revoke."""
import pytest
from django.urls import reverse

from apps.accounts.models import ApiToken, token_digest
from apps.accounts.services import token_authenticate

pytestmark = pytest.mark.django_db


def test_create_shows_the_raw_token_once_and_stores_its_hash(alice, user):
    response = alice.post(reverse("dashboard:token-create"),
                          {"name": "laptop agent", "scopes": ["read", "write"], "expires_in_days": "30"})
    assert response.status_code == 200
    raw = response.context["issued"].raw
    html = response.content.decode()
    assert raw in html and "shown only this once" in html
    assert "no-store" in response["Cache-Control"]
    token = ApiToken.objects.get(user=user)
    assert token.digest == token_digest(raw) and raw not in token.digest
    assert token.scopes == ["read", "write"] and token.name == "laptop agent"
    assert 29 <= (token.expires_at - token.created_at).days <= 30
    assert token_authenticate(raw=raw).pk == token.pk

    listing = alice.get(reverse("dashboard:tokens")).content.decode()
    assert "laptop agent" in listing and token.prefix in listing
    assert raw not in listing


def test_a_token_without_expiry_never_expires(alice, user):
    alice.post(reverse("dashboard:token-create"), {"name": "forever", "scopes": ["read"]})
    token = ApiToken.objects.get(user=user)
    assert token.expires_at is None and token.scopes == ["read"]
    assert "never" in alice.get(reverse("dashboard:tokens")).content.decode()


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "", "scopes": ["read"]}, "name", "Give the token a name"),
        ({"name": "x" * 101, "scopes": ["read"]}, "name", "at most 100 characters"),
        ({"name": "agent", "scopes": []}, "scopes", "at least one scope"),
        ({"name": "agent", "scopes": ["root"]}, "scopes", "Select a valid choice"),
        ({"name": "agent", "scopes": ["admin"]}, "scopes", "Only staff users may hold the admin scope"),
        ({"name": "agent", "scopes": ["read"], "expires_in_days": "0"}, "expires_in_days", "from 1 to 36500"),
        ({"name": "agent", "scopes": ["read"], "expires_in_days": "99999999"}, "expires_in_days", "from 1 to 36500"),
        ({"name": "agent", "scopes": ["read"], "expires_in_days": "soon"}, "expires_in_days", "from 1 to 36500"),
    ],
)
def test_create_errors_are_shown_on_their_field(alice, user, data, field, message):
    response = alice.post(reverse("dashboard:token-create"), data)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == [field] and message in errors[field][0], errors
    assert "issued" not in response.context
    assert not ApiToken.objects.filter(user=user).exists()


def test_staff_may_create_an_admin_token(client_for, staff_user):
    response = client_for(staff_user).post(reverse("dashboard:token-create"), {"name": "ops", "scopes": ["admin"]})
    assert response.status_code == 200
    assert ApiToken.objects.get(user=staff_user).scopes == ["admin"]


def test_revoke_asks_first_then_revokes(alice, user, make_token):
    raw = make_token(user, name="old agent")
    token = ApiToken.objects.get(user=user)
    confirm = alice.get(reverse("dashboard:token-revoke", args=[token.pk]))
    assert "Revoke “old agent”?" in confirm.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None

    response = alice.post(reverse("dashboard:token-revoke", args=[token.pk]), follow=True)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert token_authenticate(raw=raw) is None
    html = response.content.decode()
    assert "revoked" in html
    assert reverse("dashboard:token-revoke", args=[token.pk]) not in html
