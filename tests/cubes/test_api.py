"""REST for cubes under /api/v1/: register, update, unregister/restore/delete, members (share, revoke) and
access checks; isolation on every read, bad input naming the field, lists at a fixed number of queries."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cubes.models import Cube, CubeMembership
from apps.cubes.services import cube_ensure_personal, cube_register, cube_share
from apps.memories.models import Memory
from tests.api.envelope import assert_error
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CUBE_FIELDS = {"id", "name", "description", "path", "owner", "is_personal", "role", "memory_count", "created_at",
               "updated_at"}
MEMBER_FIELDS = {"cube", "user", "user_id", "role", "created_at", "updated_at"}


@pytest.fixture
def team(user):
    return cube_register(actor=user, cube_id="team", name="Team")


@pytest.fixture
def bob_api(other_user, api_client_for):
    return api_client_for(other_user)


def test_register_and_read_back_with_statistics(api, user, store):
    response = api.post("/api/v1/cubes/", {"id": "ai-research", "path": "/data/cubes/ai"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == CUBE_FIELDS
    assert (body["name"], body["owner"], body["role"], body["memory_count"], body["path"]) == \
        ("ai-research", "alice", "owner", 0, "/data/cubes/ai")
    store(user, "Transformers use self-attention.", cube_id="ai-research")
    detail = api.get("/api/v1/cubes/ai-research/").json()
    assert set(detail) == CUBE_FIELDS | {"statistics"}
    stats = detail["statistics"]
    assert (stats["total_memories"], stats["memories_by_kind"], stats["last_accessed"]) == (1, {"memory": 1}, None)
    assert stats["total_size_bytes"] >= len("Transformers use self-attention.")


@pytest.mark.parametrize(("body", "field"), [
    ({"id": "bad id"}, "id"),
    ({"id": "x" * 101}, "id"),
    ({"id": 7}, "id"),
    ({}, "id"),
    ({"id": "ok", "name": "n" * 201}, "name"),
    ({"id": "ok", "path": "p" * 1001}, "path"),
    ({"id": "ok", "owner": "bob"}, "owner"),
])
def test_register_bad_input(api, body, field):
    assert_error(api.post("/api/v1/cubes/", body, format="json"), 400, code="invalid_input", field=field)
    assert not Cube.objects.filter(pk="ok").exists()


def test_register_taken_id_is_a_conflict(api, team):
    assert_error(api.post("/api/v1/cubes/", {"id": "team"}, format="json"), 409, code="cube_exists", field="cube_id")


def test_patch_and_its_errors(api, bob_api, user, team):
    response = api.patch("/api/v1/cubes/team/", {"description": "Our notes"}, format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["name"], response.json()["description"]) == ("Team", "Our notes")
    assert_error(api.patch("/api/v1/cubes/team/", {}, format="json"), 400, code="invalid_input")
    assert_error(api.patch("/api/v1/cubes/team/", {"name": ""}, format="json"), 400, field="name")
    assert_error(bob_api.patch("/api/v1/cubes/team/", {"name": "Bob's"}, format="json"), 404, code="not_found")
    cube_share(actor=user, cube_id="team", user="bob")
    assert_error(bob_api.patch("/api/v1/cubes/team/", {"name": "Bob's"}, format="json"), 403)
    assert Cube.objects.get(pk="team").name == "Team"


def test_unregister_restore_and_hard_delete(api, user, team, store):
    memory = store(user, "Kept while unregistered.", cube_id="team")
    assert api.delete("/api/v1/cubes/team/").status_code == 204
    assert_error(api.get("/api/v1/cubes/team/"), 404)
    assert "team" not in [cube["id"] for cube in api.get("/api/v1/cubes/").json()["results"]]
    response = api.post("/api/v1/cubes/team/restore/")
    assert response.status_code == 200 and response.json()["memory_count"] == 1
    assert api.delete("/api/v1/cubes/team/?hard=true").status_code == 204
    assert not Cube.objects.filter(pk="team").exists() and not Memory.objects.filter(pk=memory.pk).exists()


def test_delete_errors(api, bob_api, user, team):
    personal = cube_ensure_personal(actor=user)
    assert_error(api.delete(f"/api/v1/cubes/{personal.pk}/"), 403)
    assert_error(api.delete("/api/v1/cubes/team/?hard=perhaps"), 400, field="hard")
    assert_error(bob_api.delete("/api/v1/cubes/team/"), 404)
    assert_error(bob_api.post("/api/v1/cubes/team/restore/"), 404)
    cube_share(actor=user, cube_id="team", user="bob", role="admin")
    assert_error(bob_api.delete("/api/v1/cubes/team/?hard=true"), 403)
    assert Cube.objects.filter(pk="team", deleted_at__isnull=True).exists()


def test_members_share_change_and_revoke(api, other_user, team):
    response = api.post("/api/v1/cubes/team/members/", {"user": "bob"}, format="json")
    assert response.status_code == 200, response.content
    assert set(response.json()) == MEMBER_FIELDS
    assert (response.json()["user"], response.json()["role"]) == ("bob", "reader")
    api.post("/api/v1/cubes/team/members/", {"user": str(other_user.pk), "role": "writer"}, format="json")
    members = api.get("/api/v1/cubes/team/members/").json()["results"]
    assert [(m["user"], m["role"]) for m in members] == [("bob", "writer")]
    assert api.delete("/api/v1/cubes/team/members/bob/").status_code == 204
    assert_error(api.delete("/api/v1/cubes/team/members/bob/"), 404, code="member_not_found", field="user")
    assert not CubeMembership.objects.exists()


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"user": "nobody"}, 404, "user"),
    ({"user": "alice"}, 400, "user"),
    ({"user": "bob", "role": "owner"}, 400, "role"),
    ({"user": "bob", "role": "god"}, 400, "role"),
    ({"role": "reader"}, 400, "user"),
    ({"user": "bob", "until": "tomorrow"}, 400, "until"),
])
def test_share_bad_input(api, other_user, team, body, status, field):
    assert_error(api.post("/api/v1/cubes/team/members/", body, format="json"), status, field=field)
    assert not CubeMembership.objects.exists()


def test_unknown_cubes_and_users(api, team):
    for url in ("/api/v1/cubes/nope/", "/api/v1/cubes/nope/members/", "/api/v1/cubes/bad%20id/"):
        assert_error(api.get(url), 404)
    assert_error(api.post("/api/v1/cubes/nope/members/", {"user": "alice"}, format="json"), 404, field="cube")
    assert_error(api.delete("/api/v1/cubes/team/members/nobody/"), 404, code="user_not_found", field="user")


def test_every_read_is_isolated(bob_api, user, team, store):
    """bob, a stranger, finds nothing of alice's cube on any read path; nor does he once unregistered."""
    store(user, "Alice's private note.", cube_id="team")
    assert "team" not in [cube["id"] for cube in bob_api.get("/api/v1/cubes/").json()["results"]]
    for url in ("/api/v1/cubes/team/", "/api/v1/cubes/team/members/"):
        assert_error(bob_api.get(url), 404, code="not_found")
    check = bob_api.post("/api/v1/access/check/", {"resource_type": "cube", "resource_id": "team", "action": "read"},
                         format="json").json()
    assert check == {"has_access": False, "reason": "not a member", "role": None}


def test_unregistered_cubes_are_hidden_from_members_too(api, bob_api, user, team):
    cube_share(actor=user, cube_id="team", user="bob")
    assert bob_api.get("/api/v1/cubes/team/").status_code == 200
    api.delete("/api/v1/cubes/team/")
    for url in ("/api/v1/cubes/team/", "/api/v1/cubes/team/members/"):
        assert_error(bob_api.get(url), 404)
    assert "team" not in [cube["id"] for cube in bob_api.get("/api/v1/cubes/").json()["results"]]


@pytest.mark.parametrize(("role", "action", "expected"), [
    ("reader", "read", {"has_access": True, "reason": "member with read only", "role": "reader"}),
    ("writer", "write", {"has_access": True, "reason": "member with write", "role": "writer"}),
    ("writer", "delete", None),
])
def test_access_check_for_the_caller(api, bob_api, user, team, role, action, expected):
    cube_share(actor=user, cube_id="team", user="bob", role=role)
    response = bob_api.post("/api/v1/access/check/", {"resource_type": "cube", "resource_id": "team",
                                                      "action": action}, format="json")
    assert response.status_code == 200, response.content
    if expected:
        assert response.json() == expected
    else:
        assert response.json()["has_access"] is False and response.json()["role"] == "writer"
    owner = api.post("/api/v1/access/check/", {"resource_type": "cube", "resource_id": "team", "action": "delete"},
                     format="json").json()
    assert owner == {"has_access": True, "reason": "owner of the cube", "role": "owner"}


@pytest.mark.parametrize(("body", "field"), [
    ({"resource_type": "planet", "resource_id": "x", "action": "read"}, "resource_type"),
    ({"resource_type": "cube", "resource_id": "x", "action": "fly"}, "action"),
    ({"resource_type": "cube", "action": "read"}, "resource_id"),
    ({"resource_type": "cube", "resource_id": 5, "action": "read"}, "resource_id"),
])
def test_access_check_bad_input(api, body, field):
    assert_error(api.post("/api/v1/access/check/", body, format="json"), 400, code="invalid_input", field=field)


def test_staff_get_admin_but_not_other_users_cubes(staff_user, api_client_for, team):
    staff = api_client_for(staff_user)
    check = staff.post("/api/v1/access/check/", {"resource_type": "admin", "resource_id": "", "action": "admin"},
                       format="json").json()
    assert check == {"has_access": True, "reason": "staff user", "role": "staff"}
    assert_error(staff.get("/api/v1/cubes/team/"), 404)


def test_writes_need_the_write_scope(user, api_client_for, team):
    reader = api_client_for(user, scopes=("read",))
    assert reader.get("/api/v1/cubes/team/").status_code == 200
    assert_error(reader.post("/api/v1/cubes/", {"id": "more"}, format="json"), 403)
    assert_error(reader.delete("/api/v1/cubes/team/"), 403)


def _queries(api, url: str) -> int:
    api.get(url)  # the token's first use of the run records last_used_at: one more query, once
    with CaptureQueriesContext(connection) as captured:
        assert api.get(url).status_code == 200
    return len(captured)


def test_cube_list_queries_do_not_grow_with_rows(api, user, store, django_assert_max_num_queries):
    cube_register(actor=user, cube_id="c0")
    few = _queries(api, "/api/v1/cubes/")
    for n in range(1, 6):
        cube_register(actor=user, cube_id=f"c{n}")
        store(user, f"note {n}", cube_id=f"c{n}")
    with django_assert_max_num_queries(few):
        assert len(api.get("/api/v1/cubes/").json()["results"]) == 6
    assert few <= 3  # token + COUNT + page


def test_members_list_queries_do_not_grow_with_rows(api, user, team, django_assert_max_num_queries):
    cube_share(actor=user, cube_id="team", user=UserFactory(username="m0").username)
    few = _queries(api, "/api/v1/cubes/team/members/")
    for n in range(1, 6):
        cube_share(actor=user, cube_id="team", user=UserFactory(username=f"m{n}").username, role="writer")
    with django_assert_max_num_queries(few):
        assert len(api.get("/api/v1/cubes/team/members/").json()["results"]) == 6
    assert few <= 4  # token + cube + COUNT + page


def test_memory_count_follows_stores_deletes_restores_and_moves(api, user, team, store):
    from apps.memories.services import memory_delete, memory_restore, memory_update

    def counts():
        return {cube["id"]: cube["memory_count"] for cube in api.get("/api/v1/cubes/").json()["results"]}

    personal = cube_ensure_personal(actor=user).pk
    assert counts() == {personal: 0, "team": 0}
    kept, gone, moved = (store(user, text, cube_id="team") for text in ("Kept.", "Deleted.", "Moved."))
    assert counts() == {personal: 0, "team": 3}
    memory_delete(actor=user, memory_id=gone.pk)  # soft: not counted, until restored
    assert counts()["team"] == 2
    memory_restore(actor=user, memory_id=gone.pk)
    assert counts()["team"] == 3
    Memory.objects.filter(pk=moved.pk).update(cube_id=personal)
    assert counts() == {personal: 1, "team": 2}
    memory_delete(actor=user, memory_id=kept.pk, soft=False)
    memory_update(actor=user, memory_id=gone.pk, content="Deleted, then restored and edited.")
    assert counts() == {personal: 1, "team": 1}
    assert api.get("/api/v1/cubes/team/").json()["memory_count"] == 1
