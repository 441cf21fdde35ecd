"""The access matrix on the MCP edge (memgos profile, the SDK's client in process): every role (owner, admin, writer,
reader, stranger, staff) against every memory and cube tool, and validate_access agreeing with
apps.cubes.selectors.access_check and with what happens.

Success exactly when access_check says has_access; otherwise not_found_error (NOT_FOUND) for whoever cannot read
the resource, authorization_error (FORBIDDEN) for a member refused a stronger action (docs/cubes.md). A refused
call changes nothing. Every case builds its own world (transaction=True: MCP tools run in worker threads).
"""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from apps.cubes.models import Cube, CubeMembership
from apps.cubes.selectors import access_check
from apps.memories.models import Memory
from tests.cubes.access_world import ROLES, World, build_world
from tests.mcp.support import envelope, in_process

pytestmark = pytest.mark.django_db(transaction=True)  # asyncio_mode is auto


@pytest.fixture
def world(user, staff_user, store, make_token) -> World:
    """build_world, with an MCP token per role (carol's read+write token lacks the admin scope)."""
    world = build_world(owner=user, staff=staff_user, store=store)
    world.callers = {role: make_token(actor) for role, actor in world.actors.items()}
    return world


def _address(world: World) -> dict:
    return {"memory_id": str(world.memory.pk), "cube_id": "team"}


# tool -> (what access_check (and validate_access) is asked, the tool's arguments, the parameter an error names)
OPERATIONS = {
    "add_memory": (("cube", "write"), lambda w: {"memory_content": "Deploys need a second reviewer.",
                                                  "mem_cube_id": "team"}, "mem_cube_id"),
    "get_memory": (("memory", "read"), _address, "memory_id"),
    "update_memory": (("memory", "write"), lambda w: {**_address(w), "updated_content": "Ship on Thursdays too."},
                      None),
    "delete_memory": (("memory", "delete"), _address, None),
    "cube_info": (("cube", "read"), lambda w: {"cube_id": "team"}, "cube_id"),
    "search_memories": (("cube", "read"), lambda w: {"query": "when does the team ship", "cube_ids": ["team"]},
                        "cube_ids"),
}
READS = {"get_memory", "cube_info", "search_memories"}
WRITES = {"add_memory", "update_memory", "delete_memory"}
# docs/cubes.md's table, written out: what each role may do.
ALLOWED = {"owner": READS | WRITES, "admin": READS | WRITES, "writer": READS | WRITES, "reader": READS,
           "stranger": set(), "staff": set()}


@database_sync_to_async
def _decide(world: World, role: str, resource_type: str, action: str):
    resource_id = str(world.memory.pk) if resource_type == "memory" else "team"
    return resource_id, access_check(actor=world.actors[role], resource_type=resource_type, resource_id=resource_id,
                                     action=action)


@database_sync_to_async
def _state() -> tuple:
    """Everything a refused call must leave as it was."""
    memories = sorted(Memory.objects.filter(cube_id="team").values_list("content", "deleted_at"))
    members = sorted(CubeMembership.objects.filter(cube_id="team").values_list("user__username", "role"))
    return Cube.objects.filter(pk="team").values_list("name", "deleted_at").first(), members, memories


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("role", ROLES)
async def test_memgos_access_matrix_and_validate_access_agree(world, role, operation):
    (resource_type, action), arguments, parameter = OPERATIONS[operation]
    resource_id, decision = await _decide(world, role, resource_type, action)
    assert decision.has_access is (operation in ALLOWED[role]), decision
    before = await _state()

    async with in_process(world.callers[role], profile="memgos") as client:
        validated = envelope(await client.call_tool("validate_access", {
            "user_id": world.actors[role].username, "resource_type": resource_type, "resource_id": resource_id,
            "action": action}))
        result = await client.call_tool(operation, arguments(world))
    payload = envelope(result)

    access = validated["access"]
    assert validated["success"] is True
    assert (access["has_access"], access["reason"]) == (decision.has_access, decision.reason)
    assert access["user_id"] == str(world.actors[role].pk)
    assert payload["success"] is decision.has_access, payload
    if decision.has_access:
        if operation == "search_memories":
            [group] = payload["results"]["text_mem"]
            assert group["cube_id"] == "team" and str(world.memory.pk) in {m["id"] for m in group["memories"]}
        return
    # Users outside the cube learn nothing: the cube and its memories are simply not found. A member refused a
    # stronger action is told so.
    can_read = decision.role is not None
    if role in ("stranger", "staff"):
        assert not can_read, decision
    error = payload["error"]
    expected = ("authorization_error", "FORBIDDEN") if can_read else ("not_found_error", "NOT_FOUND")
    assert (error["type"], error["code"]) == expected, error
    if parameter is not None and not can_read:
        assert error["details"]["parameter"] == parameter, error
    assert await _state() == before


@pytest.mark.parametrize("role", ROLES)
async def test_validate_access_answers_as_access_check_for_every_resource_and_action(world, role):
    checks = [(resource_type, action) for resource_type in ("cube", "memory", "admin")
              for action in ("read", "write", "delete", "admin")]
    async with in_process(world.callers[role], profile="memgos") as client:
        for resource_type, action in checks:
            resource_id, decision = await _decide(world, role, resource_type, action)
            if resource_type == "admin":
                resource_id = "system"
                decision = await database_sync_to_async(access_check)(
                    actor=world.actors[role], resource_type="admin", resource_id="system", action=action)
            payload = envelope(await client.call_tool("validate_access", {
                "user_id": world.actors[role].username, "resource_type": resource_type, "resource_id": resource_id,
                "action": action}))
            access = payload["access"]
            assert (access["has_access"], access["reason"]) == (decision.has_access, decision.reason), \
                (resource_type, action)
