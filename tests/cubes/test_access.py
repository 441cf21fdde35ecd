import pytest
from django.utils import timezone

from apps.chat.models import ChatSession
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.access import cube_get_readable, cube_get_writable, cube_ids_readable, cube_ids_writable
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.selectors import access_check, cube_list, cube_statistics
from apps.cubes.services import (
    cube_delete, cube_ensure_personal, cube_restore, cube_revoke, cube_share, cube_unregister, cube_update,
)
from apps.memories.models import Memory
from apps.memories.selectors import memory_get
from apps.memories.services import memory_delete, memory_store, memory_update
from tests.cubes.access_world import ROLES, World, build_world, unregister_first
from tests.factories import UserFactory


def test_every_user_gets_one_personal_cube_on_first_use(user):
    cube = cube_ensure_personal(actor=user)
    assert cube.is_personal and cube.owner == user
    assert cube_ensure_personal(actor=user) == cube
    assert Cube.objects.filter(owner=user).count() == 1


def test_personal_cube_ids_are_valid_slugs_for_any_username(db):
    user = UserFactory(username="dana.o'neil+work@example.com")
    cube = cube_ensure_personal(actor=user)
    assert cube.id == f"dana-o-neil-work-example-com-{user.pk}"
    cube.full_clean()


def test_roles_decide_read_and_write(user, other_user):
    cube = Cube.objects.create(id="team", name="Team", owner=user)
    with pytest.raises(NotFound):
        cube_get_readable(actor=other_user, cube_id="team")
    CubeMembership.objects.create(cube=cube, user=other_user, role="reader")
    assert cube_get_readable(actor=other_user, cube_id="team") == cube
    with pytest.raises(PermissionDenied):
        cube_get_writable(actor=other_user, cube_id="team")
    CubeMembership.objects.filter(cube=cube).update(role="writer")
    assert cube_get_writable(actor=other_user, cube_id="team") == cube


def test_cube_list_shows_own_and_shared_cubes_only(user, other_user, django_assert_num_queries):
    cube_ensure_personal(actor=user)
    cube_ensure_personal(actor=other_user)
    shared = Cube.objects.create(id="shared", name="Shared", owner=other_user)
    CubeMembership.objects.create(cube=shared, user=user, role="reader")
    Cube.objects.create(id="private", name="Private", owner=other_user)
    with django_assert_num_queries(1):
        cubes = list(cube_list(actor=user))
        owners = [cube.owner.username for cube in cubes]
    assert [cube.id for cube in cubes][0].startswith("alice")
    assert {cube.id for cube in cubes} == {cubes[0].id, "shared"}
    assert owners == ["alice", "bob"]


@pytest.mark.parametrize("cube_id", ["../etc", "a b", "x\x00", ""])
def test_malformed_cube_ids_are_simply_not_found(user, cube_id):
    with pytest.raises(NotFound):
        cube_get_readable(actor=user, cube_id=cube_id)


# --- The access matrix: every role against every cube operation, and access_check agreeing with each. ---

@pytest.fixture
def world(user, staff_user, store) -> World:
    return build_world(owner=user, staff=staff_user, store=store)


# operation -> (what access_check is asked, the real call, a set-up run before both)
OPERATIONS = {
    "get": (("cube", "read"), lambda actor, w: cube_get_readable(actor=actor, cube_id="team"), None),
    "update": (("cube", "admin"), lambda actor, w: cube_update(actor=actor, cube_id="team", name="Renamed"), None),
    "share": (("cube", "admin"), lambda actor, w: cube_share(actor=actor, cube_id="team", user="gina"), None),
    "revoke": (("cube", "admin"), lambda actor, w: cube_revoke(actor=actor, cube_id="team", user="hank"), None),
    "unregister": (("cube", "delete"), lambda actor, w: cube_unregister(actor=actor, cube_id="team"), None),
    "restore": (("cube", "delete"), lambda actor, w: cube_restore(actor=actor, cube_id="team"), unregister_first),
    "delete": (("cube", "delete"), lambda actor, w: cube_delete(actor=actor, cube_id="team"), None),
    "add_memory": (("cube", "write"), lambda actor, w: memory_store(
        actor=actor, content="Deploys need a second reviewer.", cube_id="team"), None),
    "update_memory": (("memory", "write"), lambda actor, w: memory_update(
        actor=actor, memory_id=w.memory.pk, tags=["changed"]), None),
    "delete_memory": (("memory", "delete"), lambda actor, w: memory_delete(actor=actor, memory_id=w.memory.pk), None),
}
ALLOWED = {
    "owner": set(OPERATIONS),
    "admin": {"get", "update", "share", "revoke", "add_memory", "update_memory", "delete_memory"},
    "writer": {"get", "add_memory", "update_memory", "delete_memory"},
    "reader": {"get"},
    "stranger": set(),
    "staff": set(),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("role", ROLES)
def test_access_matrix_and_access_check_agree(world, role, operation):
    (resource_type, action), run, setup = OPERATIONS[operation]
    if setup:
        setup(world)
    actor = world.actors[role]
    resource_id = str(world.memory.pk) if resource_type == "memory" else "team"
    decision = access_check(actor=actor, resource_type=resource_type, resource_id=resource_id, action=action)
    try:
        run(actor, world)
    except (NotFound, PermissionDenied) as exc:
        succeeded = False
        # Users outside the cube learn nothing: its memories and the cube itself are simply not found.
        if role in ("stranger", "staff"):
            assert isinstance(exc, NotFound), exc
    else:
        succeeded = True
    assert succeeded is (operation in ALLOWED[role])
    assert decision.has_access is succeeded, decision


@pytest.mark.parametrize(("role", "resource_type", "action", "reason"), [
    ("owner", "cube", "delete", "owner of the cube"),
    ("admin", "cube", "admin", "member with admin"),
    ("writer", "cube", "write", "member with write"),
    ("reader", "cube", "read", "member with read only"),
    ("stranger", "cube", "read", "not a member"),
    ("staff", "cube", "read", "not a member"),
    ("stranger", "memory", "read", "memory not found"),
    ("staff", "admin", "admin", "staff user"),
    ("owner", "admin", "read", "not staff"),
])
def test_access_check_gives_the_reason(world, role, resource_type, action, reason):
    resource_id = str(world.memory.pk) if resource_type == "memory" else "team"
    decision = access_check(actor=world.actors[role], resource_type=resource_type, resource_id=resource_id,
                            action=action)
    assert decision.reason == reason
    assert decision.has_access is (reason not in ("not a member", "memory not found", "not staff"))


def test_access_check_reports_the_role_that_falls_short(world):
    decision = access_check(actor=world.actors["reader"], resource_type="cube", resource_id="team", action="write")
    assert (decision.has_access, decision.role) == (False, "reader")
    assert decision.reason.startswith("member with read only")


@pytest.mark.parametrize("resource_id", ["nope", "../etc", "x" * 101, "", None, 42])
def test_access_check_on_unknown_cubes(user, resource_id):
    decision = access_check(actor=user, resource_type="cube", resource_id=resource_id, action="read")
    assert (decision.has_access, decision.reason, decision.role) == (False, "cube not found", None)


@pytest.mark.parametrize("resource_id", ["not-a-uuid", "6f1c2b9e-0000-4000-8000-000000000000"])
def test_access_check_on_unknown_memories(user, resource_id):
    decision = access_check(actor=user, resource_type="memory", resource_id=resource_id, action="read")
    assert (decision.has_access, decision.reason) == (False, "memory not found")


@pytest.mark.parametrize(("field", "kwargs"), [
    ("resource_type", {"resource_type": "project", "action": "read"}),
    ("action", {"resource_type": "cube", "action": "own"}),
])
def test_access_check_refuses_unknown_types_and_actions(user, field, kwargs):
    with pytest.raises(InvalidInput) as caught:
        access_check(actor=user, resource_id="x", **kwargs)
    assert caught.value.field == field


def test_personal_cube_cannot_be_unregistered_or_deleted(user):
    personal = cube_ensure_personal(actor=user)
    decision = access_check(actor=user, resource_type="cube", resource_id=personal.pk, action="delete")
    assert not decision.has_access and "personal" in decision.reason
    for remove in (cube_unregister, cube_delete):
        with pytest.raises(PermissionDenied):
            remove(actor=user, cube_id=personal.pk)
    assert Cube.objects.filter(pk=personal.pk, deleted_at__isnull=True).exists()


def test_unregistered_cube_vanishes_with_its_memories_until_restored(world):
    owner, reader = world.actors["owner"], world.actors["reader"]
    cube_unregister(actor=owner, cube_id="team")
    for actor in (owner, reader):
        assert not cube_ids_readable(actor=actor).filter(id="team").exists()
        assert not cube_ids_writable(actor=actor).filter(id="team").exists()
        assert "team" not in {cube.pk for cube in cube_list(actor=actor)}
        with pytest.raises(NotFound):
            memory_get(actor=actor, memory_id=world.memory.pk)
        with pytest.raises(NotFound):
            cube_statistics(actor=actor, cube_id="team")
        with pytest.raises(NotFound):
            memory_store(actor=actor, content="Into a cube that is gone.", cube_id="team")
    decision = access_check(actor=owner, resource_type="cube", resource_id="team", action="read")
    assert (decision.has_access, decision.reason) == (False, "cube is unregistered: restore it first")
    assert access_check(actor=reader, resource_type="cube", resource_id="team", action="read").reason == \
        "cube not found"
    with pytest.raises(NotFound):
        cube_restore(actor=reader, cube_id="team")
    cube_restore(actor=owner, cube_id="team")
    assert memory_get(actor=reader, memory_id=world.memory.pk) == world.memory


def test_hard_delete_takes_memories_and_memberships(world):
    cube_delete(actor=world.actors["owner"], cube_id="team")
    assert not Cube.objects.filter(pk="team").exists()
    assert not Memory.objects.filter(pk=world.memory.pk).exists()
    assert not CubeMembership.objects.filter(cube_id="team").exists()


def test_chat_sessions_are_their_owners_only(user, other_user, staff_user):
    session = ChatSession.objects.create(owner=user, title="Hello", last_activity=timezone.now())
    for action in ("read", "write", "delete", "admin"):
        decision = access_check(actor=user, resource_type="chat", resource_id=session.pk, action=action)
        assert (decision.has_access, decision.reason) == (True, "owner of the chat session")
    for actor in (other_user, staff_user):
        decision = access_check(actor=actor, resource_type="chat", resource_id=session.pk, action="read")
        assert (decision.has_access, decision.reason) == (False, "chat session not found")
    assert not access_check(actor=user, resource_type="chat", resource_id="chat_nope", action="read").has_access
    assert not access_check(actor=user, resource_type="chat", resource_id="chat_\x00", action="read").has_access


def test_a_squatted_personal_cube_id_gets_a_suffix(user, other_user):
    squatted = f"alice-{user.pk}"
    Cube.objects.create(id=squatted, name="Not alice's", owner=other_user)
    cube = cube_ensure_personal(actor=user)
    assert cube.owner == user and cube.is_personal and cube.pk.startswith(f"{squatted}-")
    assert cube_ensure_personal(actor=user) == cube
