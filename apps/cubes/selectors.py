"""Who may read or write which cube. Every memory query goes through these."""
from __future__ import annotations

import re

from django.db.models import Case, CharField, Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from apps.accounts.models import User
from apps.core.exceptions import NotFound, PermissionDenied
from apps.cubes.models import CUBE_ID_PATTERN, Cube, CubeMembership

WRITE_ROLES = (CubeMembership.Role.WRITER, CubeMembership.Role.ADMIN)


def cubes_readable(*, actor: User) -> QuerySet[Cube]:
    return Cube.objects.filter(Q(owner=actor) | Q(memberships__user=actor)).distinct()


def cube_ids_readable(*, actor: User) -> QuerySet:
    """A subquery of readable cube ids, to filter other tables in one SQL statement."""
    return Cube.objects.filter(Q(owner=actor) | Q(memberships__user=actor)).values("id")


def cube_ids_writable(*, actor: User) -> QuerySet:
    return Cube.objects.filter(
        Q(owner=actor) | Q(memberships__user=actor, memberships__role__in=WRITE_ROLES)
    ).values("id")


def _get_cube(queryset: QuerySet[Cube], cube_id) -> Cube:
    # An id that breaks the id pattern (a NUL byte, a slash) cannot exist, so it never reaches SQL.
    valid = isinstance(cube_id, str) and re.fullmatch(CUBE_ID_PATTERN, cube_id)
    cube = queryset.filter(pk=cube_id).first() if valid else None
    if cube is None:
        raise NotFound(f"Cube '{cube_id}' not found.", extra={"field": "cube"})
    return cube


def cube_list(*, actor: User) -> QuerySet[Cube]:
    return cubes_readable(actor=actor).select_related("owner").order_by("-is_personal", "name")


def cube_list_with_stats(*, actor: User) -> QuerySet[Cube]:
    """cube_list plus, in the same query, the actor's role (owner, admin, writer or reader) and the count
    of live memories of each cube."""
    membership_role = CubeMembership.objects.filter(cube=OuterRef("pk"), user=actor).values("role")[:1]
    live_memories = (
        Cube.objects.filter(pk=OuterRef("pk"))
        .annotate(count=Count("memories", filter=Q(memories__deleted_at__isnull=True))).values("count")
    )
    return cube_list(actor=actor).annotate(
        role=Case(When(owner=actor, then=Value("owner")), default=Subquery(membership_role), output_field=CharField()),
        memory_count=Coalesce(Subquery(live_memories, output_field=IntegerField()), Value(0)),
    )


def cube_get_with_stats(*, actor: User, cube_id: str) -> Cube:
    return _get_cube(cube_list_with_stats(actor=actor), cube_id)


def cube_get_readable(*, actor: User, cube_id: str) -> Cube:
    return _get_cube(cubes_readable(actor=actor), cube_id)


def cube_get_writable(*, actor: User, cube_id: str) -> Cube:
    cube = cube_get_readable(actor=actor, cube_id=cube_id)
    if cube.owner_id != actor.pk and not CubeMembership.objects.filter(cube=cube, user=actor, role__in=WRITE_ROLES).exists():
        raise PermissionDenied(f"You may read cube '{cube_id}' but not write to it.", extra={"field": "cube"})
    return cube
