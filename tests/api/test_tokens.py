"""Contracts of /api/v1/tokens/."""
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/v1/tokens/"
TOKEN_FIELDS = {"id", "name", "prefix", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at"}


def bearer(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_create_returns_the_token_once_and_it_works(api, user):
    expires = (timezone.now() + timedelta(days=30)).isoformat()
    response = api.post(URL, {"name": "ci", "scopes": ["read"], "expires_at": expires}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == TOKEN_FIELDS | {"token", "warning"}
    assert body["scopes"] == ["read"] and body["name"] == "ci" and body["expires_at"]
    assert body["token"].startswith(body["prefix"])
    assert "cannot be shown again" in body["warning"]
    assert bearer(body["token"]).get("/api/v1/memories/").status_code == 200

    listing = api.get(URL).json()
    assert body["token"] not in str(listing)
    created = next(token for token in listing["results"] if token["id"] == body["id"])
    assert set(created) == TOKEN_FIELDS


def test_scopes_may_be_a_comma_separated_string(api):
    response = api.post(URL, {"name": "script", "scopes": "read, write"}, format="json")
    assert response.status_code == 201
    assert response.json()["scopes"] == ["read", "write"]


def test_list_shows_only_your_tokens_newest_first(api, user, make_token):
    make_token(user, name="older")
    make_token(user, name="newer")
    body = api.get(URL).json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert [token["name"] for token in body["results"]][:2] == ["newer", "older"]
    assert body["count"] == ApiToken.objects.filter(user=user).count()


def test_revoke_stops_the_token_at_once(api, user, make_token):
    raw = make_token(user, name="to-revoke")
    token = ApiToken.objects.get(name="to-revoke")
    assert bearer(raw).get(URL).status_code == 200
    response = api.delete(f"{URL}{token.pk}/")
    assert response.status_code == 204 and response.content == b""
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert_error(bearer(raw).get(URL), 401, code="authentication_failed")
    assert api.delete(f"{URL}{token.pk}/").status_code == 204, "revoking twice is not an error"


@pytest.mark.parametrize("token_id", ["999999", "abc", "99999999999999999999999"])
def test_revoking_an_unknown_token_is_not_found(api, token_id):
    assert_error(api.delete(f"{URL}{token_id}/"), 404, code="not_found")


def test_a_read_token_cannot_create_or_revoke_tokens(read_api, user):
    assert_error(read_api.post(URL, {"name": "x", "scopes": ["read"]}, format="json"), 403, code="permission_denied")
    own = ApiToken.objects.get(user=user)
    assert_error(read_api.delete(f"{URL}{own.pk}/"), 403)
    assert ApiToken.objects.filter(user=user).count() == 1


def test_a_token_cannot_create_a_stronger_token(staff_user, api_client_for):
    writer = api_client_for(staff_user, scopes=("read", "write"))
    assert_error(writer.post(URL, {"name": "x", "scopes": ["admin"]}, format="json"), 403, field="scopes")
    write_only = api_client_for(staff_user, scopes=("write",))
    assert_error(write_only.post(URL, {"name": "x", "scopes": ["read"]}, format="json"), 403, field="scopes")
    admin = api_client_for(staff_user, scopes=("admin",))
    response = admin.post(URL, {"name": "x", "scopes": ["read", "write", "admin"]}, format="json")
    assert response.status_code == 201
    assert not ApiToken.objects.filter(name="x").exclude(pk=response.json()["id"]).exists()


def test_a_session_may_create_any_scope_it_is_entitled_to(staff_user):
    client = APIClient(enforce_csrf_checks=False)
    client.force_login(staff_user)
    response = client.post(URL, {"name": "from-browser", "scopes": "admin"}, format="json")
    assert response.status_code == 201
    assert response.json()["scopes"] == ["admin"]


@pytest.mark.parametrize("body, field", [
    ({"scopes": ["read"]}, "name"),
    ({"name": "", "scopes": ["read"]}, "name"),
    ({"name": "   ", "scopes": ["read"]}, "name"),
    ({"name": "n" * 101, "scopes": ["read"]}, "name"),
    ({"name": "nul\u0000", "scopes": ["read"]}, "name"),
    ({"name": 5, "scopes": ["read"]}, "name"),
    ({"name": "x"}, "scopes"),
    ({"name": "x", "scopes": []}, "scopes"),
    ({"name": "x", "scopes": ""}, "scopes"),
    ({"name": "x", "scopes": ["read", "root"]}, "scopes"),
    ({"name": "x", "scopes": 7}, "scopes"),
    ({"name": "x", "scopes": [1]}, "scopes"),
    ({"name": "x", "scopes": ["admin"]}, "scopes"),
    ({"name": "x", "scopes": ["read"], "expires_at": "next week"}, "expires_at"),
    ({"name": "x", "scopes": ["read"], "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
    ({"name": "x", "scopes": ["read"], "user": "bob"}, "user"),
])
def test_create_refuses_bad_input(api, user, body, field):
    before = ApiToken.objects.count()
    assert_error(api.post(URL, body, format="json"), 400, code="invalid_input", field=field)
    assert ApiToken.objects.count() == before
