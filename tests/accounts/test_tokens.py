"""API token lifecycle: hashed at rest, expiry, revocation, last use, scopes."""
import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from apps.accounts.selectors import token_get_live
from apps.accounts.services import LAST_USED_RESOLUTION, token_authenticate, token_create, token_revoke
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied

pytestmark = pytest.mark.django_db


def bearer(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_only_a_hash_of_the_token_is_stored(user):
    issued = token_create(actor=user, name="laptop", scopes="read,write")
    row = ApiToken.objects.filter(pk=issued.token.pk).values().get()
    assert issued.raw not in str(row)
    assert row["digest"] == hashlib.sha256(issued.raw.encode()).hexdigest()
    assert issued.raw.startswith(row["prefix"]) and len(row["prefix"]) < len(issued.raw) // 4


def test_a_live_token_authenticates_and_records_its_last_use(user):
    issued = token_create(actor=user, name="agent", scopes=["read"])
    assert issued.token.last_used_at is None
    assert bearer(issued.raw).get("/api/v1/cubes/").status_code == 200
    first_use = ApiToken.objects.get(pk=issued.token.pk).last_used_at
    assert first_use is not None

    bearer(issued.raw).get("/api/v1/cubes/")
    assert ApiToken.objects.get(pk=issued.token.pk).last_used_at == first_use, "written at most once a minute"

    ApiToken.objects.filter(pk=issued.token.pk).update(last_used_at=first_use - LAST_USED_RESOLUTION * 2)
    bearer(issued.raw).get("/api/v1/cubes/")
    assert ApiToken.objects.get(pk=issued.token.pk).last_used_at >= first_use


def test_a_token_authenticates_in_one_statement_with_its_user(user, django_assert_num_queries):
    issued = token_create(actor=user, name="agent", scopes=["read", "write"])
    token_authenticate(raw=issued.raw)  # records the first use
    with django_assert_num_queries(1):
        token = token_authenticate(raw=issued.raw)
        assert token.pk == issued.token.pk and token.scopes == ["read", "write"] and token.name == "agent"
        assert token.user == user and token.user.username == user.username and token.user.is_active
    assert token_authenticate(raw=issued.raw + "x") is None and token_authenticate(raw="") is None


def test_looking_a_token_up_reads_only(user, django_assert_num_queries):
    issued = token_create(actor=user, name="agent", scopes=["read"])
    with django_assert_num_queries(1):
        assert token_get_live(raw=issued.raw).user == user
    assert ApiToken.objects.get(pk=issued.token.pk).last_used_at is None


def test_an_expired_token_is_refused(user):
    issued = token_create(actor=user, name="short", scopes=["read"], expires_at=timezone.now() + timedelta(hours=1))
    assert bearer(issued.raw).get("/api/v1/cubes/").status_code == 200
    ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert bearer(issued.raw).get("/api/v1/cubes/").status_code == 401
    assert token_authenticate(raw=issued.raw) is None


def test_a_revoked_token_is_refused(user):
    issued = token_create(actor=user, name="old", scopes=["read"])
    token_revoke(actor=user, token_id=issued.token.pk)
    assert bearer(issued.raw).get("/api/v1/cubes/").status_code == 401


def test_a_token_of_a_deactivated_user_is_refused(user):
    issued = token_create(actor=user, name="ex-employee", scopes=["read"])
    user.is_active = False
    user.save()
    assert bearer(issued.raw).get("/api/v1/cubes/").status_code == 401


def test_only_the_owner_may_revoke(user, other_user):
    issued = token_create(actor=user, name="mine", scopes=["read"])
    with pytest.raises(NotFound):
        token_revoke(actor=other_user, token_id=issued.token.pk)
    assert token_authenticate(raw=issued.raw) is not None


@pytest.mark.parametrize("scopes, reads, writes", [
    (["read"], 200, 403),
    (["write"], 403, 201),
    (["read", "write"], 200, 201),
])
def test_scopes_are_enforced(user, scopes, reads, writes):
    client = bearer(token_create(actor=user, name="scoped", scopes=scopes).raw)
    assert client.get("/api/v1/memories/").status_code == reads
    assert client.post("/api/v1/memories/retrieve/", {}, format="json").status_code == reads
    assert client.post("/api/v1/memories/", {"content": "Scope check"}, format="json").status_code == writes


def test_the_admin_scope_covers_reads_and_writes(staff_user):
    client = bearer(token_create(actor=staff_user, name="admin", scopes=["admin"]).raw)
    assert client.get("/api/v1/memories/").status_code == 200
    assert client.post("/api/v1/memories/", {"content": "Admin wrote this"}, format="json").status_code == 201


def test_only_staff_may_hold_the_admin_scope(user):
    with pytest.raises(InvalidInput) as caught:
        token_create(actor=user, name="escalate", scopes=["admin"])
    assert caught.value.field == "scopes"


@pytest.mark.parametrize("issuer_scopes, requested, allowed", [
    (["read", "write"], ["read"], True),
    (["read", "write"], ["read", "write"], True),
    (["read", "write"], ["admin"], False),
    (["write"], ["read"], False),
    (["admin"], ["read", "write", "admin"], True),
])
def test_a_token_issues_only_scopes_it_holds(staff_user, issuer_scopes, requested, allowed):
    issuer = token_create(actor=staff_user, name="issuer", scopes=issuer_scopes).token
    if allowed:
        assert token_create(actor=staff_user, name="child", scopes=requested, issuer=issuer).token.scopes == requested
    else:
        with pytest.raises(PermissionDenied):
            token_create(actor=staff_user, name="child", scopes=requested, issuer=issuer)
        assert not ApiToken.objects.filter(name="child").exists()


def test_a_token_name_with_a_nul_byte_is_refused(user):
    with pytest.raises(InvalidInput) as caught:
        token_create(actor=user, name="bad\x00name", scopes=["read"])
    assert caught.value.field == "name"
