"""Reads of cubes: the actor's cubes with their role and memory counts, members, statistics, and
``access_check``, which answers "may this actor do this to that resource" for every resource type.

The rules themselves live in ``apps.cubes.access``; a memory's or a chat session's answer comes from the
selectors of the app that owns it. Resource "admin" is granted to staff only. See docs/cubes.md.
"""
from __future__ import annotations

from django.db.models import Count, F, Func, IntegerField, Max, OuterRef, QuerySet, Subquery, Sum, TextField, Value
from django.db.models.functions import Cast, Coalesce

from apps.accounts.models import User
from apps.chat.selectors import chat_session_access
from apps.core.exceptions import InvalidInput
from apps.cubes.access import (
    AccessDecision, cube_access, cube_get_from, cube_get_readable, cubes_readable, cubes_with_role,
)
from apps.cubes.models import Cube, CubeMembership
from apps.memories.models import CubeLexeme
from apps.memories.selectors import memory_access

RESOURCE_TYPES = ("cube", "memory", "chat", "admin")
ACTIONS = ("read", "write", "delete", "admin")


def cube_list(*, actor: User) -> QuerySet[Cube]:
    return cubes_readable(actor=actor).select_related("owner").order_by("-is_personal", "name")


def cube_list_with_stats(*, actor: User) -> QuerySet[Cube]:
    """cube_list plus, in the same query, the actor's role (owner, admin, writer or reader) and the count
    of live memories of each cube, read from the count the memory triggers keep (CubeLexeme), so the list
    never counts a cube's memories row by row (docs/benchmarks.md#retrieve-and-search-latency)."""
    live_memories = CubeLexeme.objects.filter(cube=OuterRef("pk"), lexeme=CubeLexeme.LIVE_MEMORIES).values("documents")
    return cubes_with_role(cube_list(actor=actor), actor=actor).annotate(
        memory_count=Coalesce(Subquery(live_memories, output_field=IntegerField()), Value(0)),
    )


def cubes_unregistered(*, actor: User) -> QuerySet[Cube]:
    """The actor's own unregistered cubes: only their owner sees them, to restore or delete them for good."""
    return Cube.objects.filter(owner=actor, deleted_at__isnull=False, hidden=False).order_by("-deleted_at")


def cube_get_unregistered(*, actor: User, cube_id: str) -> Cube:
    """One of the actor's own unregistered cubes (its page shows it to them, to restore); else not found."""
    return cube_get_from(cubes_unregistered(actor=actor), cube_id)


def cube_get_with_stats(*, actor: User, cube_id: str) -> Cube:
    return cube_get_from(cube_list_with_stats(actor=actor), cube_id)


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
        return memory_access(actor=actor, memory_id=resource_id, action=action)
    if resource_type == "chat":
        return chat_session_access(actor=actor, session_id=resource_id)
    return cube_access(actor=actor, cube_id=resource_id, action=action)
