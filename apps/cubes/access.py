"""Who may do what with which cube: the one place the access rules live.

Roles rank owner > admin > writer > reader. Reading a cube (and its memories) needs any role; writing
memories needs writer; administering (rename, share, revoke) needs admin; unregistering or deleting the
cube needs the owner. Staff status gives no access to other users' cubes (the Django admin's curator mode
is separate). An unregistered cube (``deleted_at`` set) is invisible to everybody except its owner, who may
only restore or hard-delete it. A hidden cube (a system cube: a benchmark's throwaway data) is in no set and no
lookup at all, except inside ``hidden_cube_scope`` for that cube, where its owner has it as any cube of theirs.

Every app's selectors and services take their readable and writable cubes from here (``cube_get_for`` and
the ``cube_ids_*`` subqueries), and ``apps.cubes.selectors.access_check`` answers with ``cube_access``, so a
"validate access" answer never disagrees with what happens. See docs/cubes.md.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.db.models import Case, CharField, OuterRef, Q, QuerySet, Subquery, Value, When

from apps.accounts.models import User
from apps.core.exceptions import NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.validation import is_cube_id

WRITE_ROLES = (CubeMembership.Role.WRITER, CubeMembership.Role.ADMIN)
OWNER = "owner"
ROLE_RANK = {"reader": 1, "writer": 2, "admin": 3, OWNER: 4}
ROLE_REASONS = {OWNER: "owner of the cube", "admin": "member with admin", "writer": "member with write",
                "reader": "member with read only"}
# The least role each action needs. Deleting a cube is the owner's; deleting a memory in it is a write.
CUBE_ACTION_ROLE = {"read": "reader", "write": "writer", "admin": "admin", "delete": OWNER}
MEMORY_ACTION_ROLE = {"read": "reader", "write": "writer", "delete": "writer", "admin": "admin"}
PERSONAL_REFUSED = "personal cube: it cannot be unregistered or deleted"


@dataclass(frozen=True)
class AccessDecision:
    has_access: bool
    reason: str
    role: str | None = None


# The hidden cubes the running code may see (hidden_cube_scope): none, on every edge.
_visible_hidden: ContextVar[frozenset[str]] = ContextVar("visible_hidden_cubes", default=frozenset())


@contextmanager
def hidden_cube_scope(cube_id: str) -> Iterator[None]:
    """Inside this block the hidden cube ``cube_id`` is one of its owner's cubes like any other (readable, writable,
    deletable); outside it no list, scope or lookup has it. Only the service that made the cube enters the block."""
    token = _visible_hidden.set(_visible_hidden.get() | {cube_id})
    try:
        yield
    finally:
        _visible_hidden.reset(token)


def _not_hidden() -> Q:
    visible = _visible_hidden.get()
    return Q(hidden=False) | Q(pk__in=sorted(visible)) if visible else Q(hidden=False)


def _live_cubes() -> QuerySet[Cube]:
    return Cube.objects.filter(_not_hidden(), deleted_at__isnull=True)


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
    return NotFound(f"Cube '{cube_id}' not found.", extra={"field": "cube_id"})


def cube_get_from(queryset: QuerySet[Cube], cube_id) -> Cube:
    """The cube ``cube_id`` out of ``queryset`` (one of the actor's cube sets), or "not found"."""
    cube = queryset.filter(pk=cube_id).first() if is_cube_id(cube_id) else None
    if cube is None:
        raise _cube_not_found(cube_id)
    return cube


def cubes_with_role(queryset: QuerySet[Cube], *, actor: User) -> QuerySet[Cube]:
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
    return cubes_with_role(Cube.objects.filter(_not_hidden()), actor=actor).filter(pk=cube_id).first()


def cube_access(*, actor: User, cube_id, action: str, resource: str = "cube") -> AccessDecision:
    """May ``actor`` do ``action`` to the cube (``resource="cube"``) or to a memory in it (``"memory"``)?"""
    cube = _lookup(actor=actor, cube_id=cube_id)
    return _decide(cube, role=cube and cube.role, action=action, resource=resource)


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
                           extra={"field": "cube_id", "role": decision.role})


def cube_get_readable(*, actor: User, cube_id: str) -> Cube:
    return cube_get_from(cubes_readable(actor=actor), cube_id)


def cube_get_writable(*, actor: User, cube_id: str) -> Cube:
    return cube_get_for(actor=actor, cube_id=cube_id, action="write")
