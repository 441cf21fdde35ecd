"""Who may do what with which cube: the one place the access rules live.

Roles rank owner > admin > writer > reader. Reading a cube (and its memories) needs any role; writing
memories needs writer; administering (rename, share, revoke) needs admin; unregistering or deleting the
cube needs the owner. Staff status gives no access to other users' cubes (the Django admin's curator mode
is separate); resource "admin" is granted to staff only. An unregistered cube (``deleted_at`` set) is
invisible to everybody except its owner, who may only restore or hard-delete it.

``access_check`` answers with these rules, and the services ask the same predicates (``cube_get_for``
and the ``cube_ids_*`` subqueries), so a "validate access" answer never disagrees with what happens.
See docs/cubes.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    Case, CharField, Count, F, Func, IntegerField, Max, OuterRef, Q, QuerySet, Subquery, Sum, TextField, Value, When,
)
from django.db.models.functions import Cast, Coalesce

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.validation import is_cube_id

WRITE_ROLES = (CubeMembership.Role.WRITER, CubeMembership.Role.ADMIN)
OWNER = "owner"
ROLE_RANK = {"reader": 1, "writer": 2, "admin": 3, OWNER: 4}
ROLE_REASONS = {OWNER: "owner of the cube", "admin": "member with admin", "writer": "member with write",
                "reader": "member with read only"}
RESOURCE_TYPES = ("cube", "memory", "chat", "admin")
ACTIONS = ("read", "write", "delete", "admin")
# The least role each action needs. Deleting a cube is the owner's; deleting a memory in it is a write.
CUBE_ACTION_ROLE = {"read": "reader", "write": "writer", "admin": "admin", "delete": OWNER}
MEMORY_ACTION_ROLE = {"read": "reader", "write": "writer", "delete": "writer", "admin": "admin"}
PERSONAL_REFUSED = "personal cube: it cannot be unregistered or deleted"


@dataclass(frozen=True)
class AccessDecision:
    has_access: bool
    reason: str
    role: str | None = None


def _live_cubes() -> QuerySet[Cube]:
    return Cube.objects.filter(deleted_at__isnull=True)


def cubes_readable(*, actor: User) -> QuerySet[Cube]:
    return _live_cubes().filter(Q(owner=actor) | Q(memberships__user=actor)).distinct()


def cube_ids_readable(*, actor: User) -> QuerySet:
    """A subquery of readable cube ids, to filter other tables in one SQL statement."""
    return _live_cubes().filter(Q(owner=actor) | Q(memberships__user=actor)).values("id")


def cube_ids_writable(*, actor: User) -> QuerySet:
    return _live_cubes().filter(
        Q(owner=actor) | Q(memberships__user=actor, memberships__role__in=WRITE_ROLES)
    ).values("id")


def _cube_not_found(cube_id) -> NotFound:
    return NotFound(f"Cube '{cube_id}' not found.", extra={"field": "cube"})


def _get_cube(queryset: QuerySet[Cube], cube_id) -> Cube:
    cube = queryset.filter(pk=cube_id).first() if is_cube_id(cube_id) else None
    if cube is None:
        raise _cube_not_found(cube_id)
    return cube


def _with_role(queryset: QuerySet[Cube], actor: User) -> QuerySet[Cube]:
    """Annotate ``role``: owner, the actor's membership role, or None - in the same query."""
    membership_role = CubeMembership.objects.filter(cube=OuterRef("pk"), user=actor).values("role")[:1]
    return queryset.annotate(
        role=Case(When(owner=actor, then=Value(OWNER)), default=Subquery(membership_role), output_field=CharField()),
    )


def _decide(cube: Cube | None, *, role: str | None, action: str, resource: str = "cube") -> AccessDecision:
    """The rule itself, for a cube looked up with the actor's role (None: no such cube). ``resource`` is
    "cube" for the cube itself or "memory" for one of its memories (deleting a memory is a write)."""
    if cube is None:
        return AccessDecision(False, "cube not found")
    removes_cube = resource == "cube" and action == "delete"
    if cube.deleted_at is not None:
        if role != OWNER:
            return AccessDecision(False, "cube not found")
        if not removes_cube:
            return AccessDecision(False, "cube is unregistered: restore it first", role)
    if role is None:
        return AccessDecision(False, "not a member")
    if removes_cube and cube.is_personal:
        return AccessDecision(False, PERSONAL_REFUSED, role)
    needed = (CUBE_ACTION_ROLE if resource == "cube" else MEMORY_ACTION_ROLE)[action]
    if ROLE_RANK[role] >= ROLE_RANK[needed]:
        return AccessDecision(True, ROLE_REASONS[role], role)
    return AccessDecision(False, f"{ROLE_REASONS[role]} ({action} needs {needed} or higher)", role)


def cube_allows(cube: Cube, action: str) -> bool:
    """Whether the actor whose role ``cube`` was read with (cube_get_with_stats, cube_get_for) may take
    ``action`` on it: the pages ask this to show only the controls that will work."""
    return _decide(cube, role=cube.role, action=action).has_access


def _lookup(*, actor: User, cube_id) -> Cube | None:
    if not is_cube_id(cube_id):
        return None
    return _with_role(Cube.objects.all(), actor).filter(pk=cube_id).first()


def cube_get_for(*, actor: User, cube_id, action: str) -> Cube:
    """The cube, if the actor may do ``action`` (read|write|admin|delete) to it. A cube the actor cannot
    read (a stranger's, or an unregistered one that is not theirs) is not found; one they can read but not
    act on is PermissionDenied with the reason. Unregistered cubes reach their owner for "delete" only."""
    cube = _lookup(actor=actor, cube_id=cube_id)
    decision = _decide(cube, role=cube and cube.role, action=action)
    if decision.has_access:
        return cube
    if cube is None or decision.role is None or (cube.deleted_at is not None and action != "delete"):
        raise _cube_not_found(cube_id)
    verb = {"write": "write to", "admin": "administer"}.get(action, action)
    raise PermissionDenied(f"You may read cube '{cube_id}' but not {verb} it: {decision.reason}.",
                           extra={"field": "cube", "role": decision.role})


def cube_get_readable(*, actor: User, cube_id: str) -> Cube:
    return _get_cube(cubes_readable(actor=actor), cube_id)


def cube_get_writable(*, actor: User, cube_id: str) -> Cube:
    return cube_get_for(actor=actor, cube_id=cube_id, action="write")


def cube_list(*, actor: User) -> QuerySet[Cube]:
    return cubes_readable(actor=actor).select_related("owner").order_by("-is_personal", "name")


def cube_list_with_stats(*, actor: User) -> QuerySet[Cube]:
    """cube_list plus, in the same query, the actor's role (owner, admin, writer or reader) and the count
    of live memories of each cube, read from the count the memory triggers keep (CubeLexeme): counting
    the memories took 100 ms for a cube of 100k (docs/benchmarks.md)."""
    from apps.memories.models import CubeLexeme  # memories import this module

    live_memories = CubeLexeme.objects.filter(cube=OuterRef("pk"), lexeme=CubeLexeme.LIVE_MEMORIES).values("documents")
    return _with_role(cube_list(actor=actor), actor).annotate(
        memory_count=Coalesce(Subquery(live_memories, output_field=IntegerField()), Value(0)),
    )


def cubes_unregistered(*, actor: User) -> QuerySet[Cube]:
    """The actor's own unregistered cubes: only their owner sees them, to restore or delete them for good."""
    return Cube.objects.filter(owner=actor, deleted_at__isnull=False).order_by("-deleted_at")


def cube_get_with_stats(*, actor: User, cube_id: str) -> Cube:
    return _get_cube(cube_list_with_stats(actor=actor), cube_id)


def cube_members(*, actor: User, cube_id: str) -> QuerySet[CubeMembership]:
    """The memberships of a cube the actor can read (any member may see who shares it), by username."""
    cube = cube_get_readable(actor=actor, cube_id=cube_id)
    return CubeMembership.objects.filter(cube=cube).select_related("user").order_by("user__username")


class OctetLength(Func):
    function = "octet_length"
    output_field = IntegerField()


def cube_statistics(*, actor: User, cube_id: str) -> dict:
    """Live memories of a readable cube: total, by kind, bytes (content plus metadata as JSON text, as
    Postgres stores them) and the latest access. One lookup plus one grouped aggregate query."""
    cube = cube_get_readable(actor=actor, cube_id=cube_id)
    rows = (
        cube.memories.filter(deleted_at__isnull=True).order_by().values("kind")
        .annotate(count=Count("pk"), size=Sum(OctetLength(F("content")) + OctetLength(Cast("metadata", TextField()))),
                  last=Max("last_accessed_at"))
    )
    by_kind = {row["kind"]: row["count"] for row in rows}
    accessed = [row["last"] for row in rows if row["last"] is not None]
    return {
        "total_memories": sum(by_kind.values()),
        "memories_by_kind": by_kind,
        "total_size_bytes": sum(row["size"] or 0 for row in rows),
        "last_accessed": max(accessed, default=None),
    }


def _memory_decision(*, actor: User, memory_id, action: str) -> AccessDecision:
    """A memory's access is its cube's; a memory the actor cannot read is "memory not found" (no leak)."""
    from apps.memories.selectors import memory_get  # memories import this module

    try:
        memory = memory_get(actor=actor, memory_id=memory_id)
    except NotFound:
        return AccessDecision(False, "memory not found")
    cube = _lookup(actor=actor, cube_id=memory.cube_id)
    return _decide(cube, role=cube.role, action=action, resource="memory")


def _chat_decision(*, actor: User, session_id) -> AccessDecision:
    """Chat sessions are private to their owner, for every action."""
    from apps.chat.selectors import chat_session_get  # apps.chat depends on cubes, not the other way round

    try:
        chat_session_get(actor=actor, session_id=session_id)
    except NotFound:
        return AccessDecision(False, "chat session not found")
    return AccessDecision(True, "owner of the chat session", OWNER)


def access_check(*, actor: User, resource_type: str, resource_id, action: str) -> AccessDecision:
    """May ``actor`` do ``action`` to the resource? The same rules the services enforce (see module doc)."""
    if resource_type not in RESOURCE_TYPES:
        raise InvalidInput(f"resource_type must be one of {', '.join(RESOURCE_TYPES)}.", field="resource_type")
    if action not in ACTIONS:
        raise InvalidInput(f"action must be one of {', '.join(ACTIONS)}.", field="action")
    if resource_type == "admin":
        if actor.is_active and actor.is_staff:
            return AccessDecision(True, "staff user", "staff")
        return AccessDecision(False, "not staff")
    if resource_type == "memory":
        return _memory_decision(actor=actor, memory_id=resource_id, action=action)
    if resource_type == "chat":
        return _chat_decision(actor=actor, session_id=resource_id)
    cube = _lookup(actor=actor, cube_id=resource_id)
    return _decide(cube, role=cube and cube.role, action=action)
