"""The access matrix on the REST edge: every role (owner, admin, writer, reader, stranger, staff) against every cube
and memory operation under /api/v1/, and apps.cubes.selectors.access_check agreeing with each answer.

2xx exactly when access_check says has_access; otherwise 404 for whoever cannot read the resource (access_check
gives no role) and 403 for a member refused a stronger action (docs/cubes.md). A refused call changes nothing.
Every case builds its own world, so destructive operations never meet.
"""
import pytest

from apps.cubes.models import Cube, CubeMembership
from apps.cubes.selectors import access_check
from apps.memories.models import Memory
from tests.api.envelope import assert_error
from tests.cubes.access_world import ROLES, World, build_world, unregister_first

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(user, staff_user, store, api_client_for) -> World:
    """build_world, with a REST client per role (carol's read+write token lacks the admin scope)."""
    world = build_world(owner=user, staff=staff_user, store=store)
    world.callers = {role: api_client_for(actor) for role, actor in world.actors.items()}
    return world


def _memory_url(world: World) -> str:
    return f"/api/v1/memories/{world.memory.pk}/"


# operation -> (what access_check is asked, the request, a set-up run before both)
OPERATIONS = {
    "get": (("cube", "read"), lambda c, w: c.get("/api/v1/cubes/team/"), None),
    "list_members": (("cube", "read"), lambda c, w: c.get("/api/v1/cubes/team/members/"), None),
    "update": (("cube", "admin"), lambda c, w: c.patch("/api/v1/cubes/team/", {"name": "Renamed"}, format="json"),
               None),
    "share": (("cube", "admin"), lambda c, w: c.post("/api/v1/cubes/team/members/", {"user": "gina", "role": "reader"},
                                                     format="json"), None),
    "revoke": (("cube", "admin"), lambda c, w: c.delete("/api/v1/cubes/team/members/hank/"), None),
    "unregister": (("cube", "delete"), lambda c, w: c.delete("/api/v1/cubes/team/"), None),
    "hard_delete": (("cube", "delete"), lambda c, w: c.delete("/api/v1/cubes/team/?hard=true"), None),
    "hard_delete_unregistered": (("cube", "delete"), lambda c, w: c.delete("/api/v1/cubes/team/?hard=true"),
                                 unregister_first),
    "restore": (("cube", "delete"), lambda c, w: c.post("/api/v1/cubes/team/restore/"), unregister_first),
    "add_memory": (("cube", "write"), lambda c, w: c.post(
        "/api/v1/memories/", {"content": "Deploys need a second reviewer.", "cube": "team"}, format="json"), None),
    "get_memory": (("memory", "read"), lambda c, w: c.get(_memory_url(w)), None),
    "update_memory": (("memory", "write"), lambda c, w: c.patch(_memory_url(w), {"tags": ["changed"]}, format="json"),
                      None),
    "delete_memory": (("memory", "delete"), lambda c, w: c.delete(_memory_url(w)), None),
    "hard_delete_memory": (("memory", "delete"), lambda c, w: c.delete(_memory_url(w) + "?hard=true"), None),
}
CUBE_ADMIN = {"update", "share", "revoke"}
MEMORY_WRITES = {"add_memory", "update_memory", "delete_memory", "hard_delete_memory"}
READS = {"get", "list_members", "get_memory"}
# docs/cubes.md's table, written out: what each role may do.
ALLOWED = {
    "owner": set(OPERATIONS),
    "admin": READS | CUBE_ADMIN | MEMORY_WRITES,
    "writer": READS | MEMORY_WRITES,
    "reader": READS,
    "stranger": set(),
    "staff": set(),
}
SUCCESS = {"add_memory": 201, "unregister": 204, "hard_delete": 204, "hard_delete_unregistered": 204, "revoke": 204,
           "delete_memory": 204, "hard_delete_memory": 204}


def _state(world: World) -> tuple:
    """Everything a refused call must leave as it was."""
    cube = Cube.objects.filter(pk="team").values_list("name", "deleted_at").first()
    members = sorted(CubeMembership.objects.filter(cube_id="team").values_list("user__username", "role"))
    memories = sorted(Memory.objects.filter(cube_id="team").values_list("content", "tags", "deleted_at"))
    return cube, members, memories


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("role", ROLES)
def test_rest_access_matrix_and_access_check_agree(world, role, operation):
    (resource_type, action), request, setup = OPERATIONS[operation]
    if setup:
        setup(world)
    actor = world.actors[role]
    resource_id = str(world.memory.pk) if resource_type == "memory" else "team"
    decision = access_check(actor=actor, resource_type=resource_type, resource_id=resource_id, action=action)
    assert decision.has_access is (operation in ALLOWED[role]), decision
    before = _state(world)

    response = request(world.callers[role], world)

    if decision.has_access:
        assert response.status_code == SUCCESS.get(operation, 200), response.content
        return
    # Users outside the cube learn nothing: the cube and its memories are simply not found. A member refused a
    # stronger action is told so, with the role that falls short.
    can_read = decision.role is not None
    if role in ("stranger", "staff"):
        assert not can_read, decision
    error = assert_error(response, 403 if can_read else 404)
    if can_read:
        assert error["code"] == "permission_denied", error
    assert _state(world) == before


@pytest.mark.parametrize("role", ROLES)
def test_rest_access_check_endpoint_agrees_with_the_selector(world, role):
    """POST /api/v1/access/check/ answers what access_check answers, for every resource type and action."""
    actor, client = world.actors[role], world.callers[role]
    for resource_type, resource_id in (("cube", "team"), ("memory", str(world.memory.pk)), ("admin", "system")):
        for action in ("read", "write", "delete", "admin"):
            response = client.post("/api/v1/access/check/", {"resource_type": resource_type,
                                                              "resource_id": resource_id, "action": action},
                                   format="json")
            assert response.status_code == 200, response.content
            decision = access_check(actor=actor, resource_type=resource_type, resource_id=resource_id, action=action)
            assert response.json() == {"has_access": decision.has_access, "reason": decision.reason,
                                       "role": decision.role}
