"""Cube writes: register, update, share and revoke, and the statistics selector."""
import json

import pytest
from django.utils import timezone

from apps.core.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.selectors import cube_members, cube_statistics
from apps.cubes.services import cube_register, cube_revoke, cube_share, cube_update
from apps.memories.models import CubeLexeme, Memory
from apps.memories.services import memory_delete
from tests.factories import UserFactory


def test_register_defaults_the_name_to_the_id_and_keeps_the_path_as_text(user, tmp_path):
    path = str(tmp_path / "never-created")
    cube = cube_register(actor=user, cube_id="ai-research_2", path=path)
    cube.refresh_from_db()
    assert (cube.name, cube.owner, cube.path, cube.is_personal) == ("ai-research_2", user, path, False)
    assert not (tmp_path / "never-created").exists()
    assert cube_register(actor=user, cube_id="named", name="  Named  ", description="About").name == "Named"


def test_register_refuses_a_taken_id_naming_it(user, other_user):
    cube_register(actor=user, cube_id="shared-id")
    Cube.objects.filter(pk="shared-id").update(deleted_at=timezone.now())  # unregistered ids stay taken
    with pytest.raises(Conflict) as caught:
        cube_register(actor=other_user, cube_id="shared-id")
    assert "shared-id" in caught.value.message and caught.value.extra["field"] == "cube_id"


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"cube_id": "has space"}, "cube_id"),
    ({"cube_id": "dot.ted"}, "cube_id"),
    ({"cube_id": "x" * 101}, "cube_id"),
    ({"cube_id": ""}, "cube_id"),
    ({"cube_id": None}, "cube_id"),
    ({"cube_id": "ok", "name": ""}, "name"),
    ({"cube_id": "ok", "name": "n" * 201}, "name"),
    ({"cube_id": "ok", "name": "nul\x00"}, "name"),
    ({"cube_id": "ok", "path": "p" * 1001}, "path"),
    ({"cube_id": "ok", "description": 42}, "description"),
])
def test_register_bad_input_names_the_field(user, kwargs, field):
    with pytest.raises(InvalidInput) as caught:
        cube_register(actor=user, **kwargs)
    assert caught.value.field == field
    assert not Cube.objects.filter(owner=user).exists()


def test_register_accepts_the_longest_id(user):
    assert cube_register(actor=user, cube_id="x" * 100).pk == "x" * 100


def test_update_changes_only_the_given_fields(user):
    cube_register(actor=user, cube_id="team", name="Team", description="Old", path="/old")
    cube = cube_update(actor=user, cube_id="team", description="New")
    cube.refresh_from_db()
    assert (cube.name, cube.description, cube.path) == ("Team", "New", "/old")
    with pytest.raises(InvalidInput):
        cube_update(actor=user, cube_id="team", name="  ")


@pytest.fixture
def team(user, other_user):
    return cube_register(actor=user, cube_id="team")


def test_share_grants_and_sharing_again_changes_the_role(team, user, other_user):
    membership = cube_share(actor=user, cube_id="team", user="bob")
    assert (membership.user, membership.role) == (other_user, "reader")
    cube_share(actor=user, cube_id="team", user=str(other_user.pk), role="writer")
    assert list(CubeMembership.objects.filter(cube=team).values_list("user__username", "role")) == [("bob", "writer")]


def test_an_admin_member_shares_and_revokes(team, user, other_user):
    cube_share(actor=user, cube_id="team", user="bob", role="admin")
    carl = UserFactory(username="carl")
    cube_share(actor=other_user, cube_id="team", user="carl", role="writer")
    cube_revoke(actor=other_user, cube_id="team", user=carl.pk)
    assert not CubeMembership.objects.filter(cube=team, user=carl).exists()


@pytest.mark.parametrize(("target", "role", "error", "field"), [
    ("alice", "reader", InvalidInput, "user"),       # yourself (and the owner)
    ("nobody", "reader", NotFound, "user"),
    ("", "reader", InvalidInput, "user"),
    ("bob", "owner", InvalidInput, "role"),
    ("bob", "superuser", InvalidInput, "role"),
])
def test_share_bad_input(team, user, other_user, target, role, error, field):
    with pytest.raises(error) as caught:
        cube_share(actor=user, cube_id="team", user=target, role=role)
    assert caught.value.extra["field"] == field
    assert not CubeMembership.objects.exists()


def test_an_admin_member_cannot_share_with_the_owner_or_themselves(team, user, other_user):
    cube_share(actor=user, cube_id="team", user="bob", role="admin")
    for target in ("alice", "bob"):
        with pytest.raises(InvalidInput):
            cube_share(actor=other_user, cube_id="team", user=target, role="writer")
    assert CubeMembership.objects.get(cube=team).role == "admin"


def test_inactive_users_cannot_be_shared_with(team, user):
    UserFactory(username="gone", is_active=False)
    with pytest.raises(NotFound):
        cube_share(actor=user, cube_id="team", user="gone")


def test_revoke_of_a_non_member_is_not_found_naming_the_user(team, user, other_user):
    with pytest.raises(NotFound) as caught:
        cube_revoke(actor=user, cube_id="team", user="bob")
    assert "bob" in caught.value.message and caught.value.extra["field"] == "user"


def test_unknown_and_foreign_cubes_are_not_found_for_every_write(user, other_user):
    cube_register(actor=other_user, cube_id="bobs")
    for cube_id in ("bobs", "missing", "bad id"):
        for write in (lambda: cube_update(actor=user, cube_id=cube_id, name="x"),
                      lambda: cube_share(actor=user, cube_id=cube_id, user="bob"),
                      lambda: cube_revoke(actor=user, cube_id=cube_id, user="bob")):
            with pytest.raises(NotFound):
                write()


def test_a_reader_cannot_administer(team, user, other_user):
    cube_share(actor=user, cube_id="team", user="bob")
    with pytest.raises(PermissionDenied, match="member with read only"):
        cube_update(actor=other_user, cube_id="team", name="Mine now")


def test_statistics_count_live_memories_by_kind_with_their_bytes(team, user, other_user, store):
    memory = store(user, "Café au lait at nine", cube_id="team", metadata={"source": "diary"})
    store(user, "A decision about coffee", cube_id="team", kind="decision")
    gone = store(user, "Deleted, not counted", cube_id="team")
    memory_delete(actor=user, memory_id=gone.pk)
    store(user, "Another cube entirely")
    seen = timezone.now()
    Memory.objects.filter(pk=memory.pk).update(last_accessed_at=seen)
    Memory.objects.filter(pk=gone.pk).update(last_accessed_at=seen + timezone.timedelta(days=1))
    live = list(Memory.objects.filter(cube=team, deleted_at__isnull=True))
    expected_bytes = sum(len(m.content.encode()) + len(json.dumps(m.metadata).encode()) for m in live)
    cube_share(actor=user, cube_id="team", user="bob")
    stats = cube_statistics(actor=other_user, cube_id="team")
    assert stats == {"total_memories": 2, "memories_by_kind": {"memory": 1, "decision": 1},
                     "total_size_bytes": expected_bytes, "last_accessed": seen}
    assert expected_bytes > len("Café au lait at nine") + len("A decision about coffee")


def test_statistics_of_an_empty_cube(team, user, django_assert_max_num_queries):
    with django_assert_max_num_queries(2):
        stats = cube_statistics(actor=user, cube_id="team")
    assert stats == {"total_memories": 0, "memories_by_kind": {}, "total_size_bytes": 0, "last_accessed": None}


def test_statistics_and_members_are_not_found_for_strangers(team, other_user):
    for read in (cube_statistics, cube_members):
        with pytest.raises(NotFound):
            read(actor=other_user, cube_id="team")


def test_members_list_in_one_query(team, user, django_assert_max_num_queries):
    for name in ("dora", "cid", "ben"):
        cube_share(actor=user, cube_id="team", user=UserFactory(username=name).username, role="writer")
    with django_assert_max_num_queries(2):
        members = [(m.user.username, m.role) for m in cube_members(actor=user, cube_id="team")]
    assert members == [("ben", "writer"), ("cid", "writer"), ("dora", "writer")]


def test_deleting_a_user_takes_their_cubes_and_memories(team, user, other_user, store):
    """The cascade from the account reaches cubes whose memories feed the lexeme-count triggers."""
    store(user, "Personal note of a leaving user")
    store(user, "Team note of a leaving user", cube_id="team")
    kept = store(other_user, "Bob stays")
    user.delete()
    assert not Cube.objects.filter(owner_id=user.pk).exists()
    assert list(Memory.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not CubeLexeme.objects.filter(cube_id="team").exists()
    assert CubeLexeme.objects.get(cube_id=kept.cube_id, lexeme=CubeLexeme.LIVE_MEMORIES).documents == 1
