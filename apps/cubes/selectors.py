"""Who may read or write which cube. Every memory query goes through these."""
from __future__ import annotations

from django.db.models import Q, QuerySet

from apps.accounts.models import User
from apps.core.exceptions import NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership

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


def cube_list(*, actor: User) -> QuerySet[Cube]:
    return cubes_readable(actor=actor).select_related("owner").order_by("-is_personal", "name")


def cube_get_readable(*, actor: User, cube_id: str) -> Cube:
    cube = cubes_readable(actor=actor).filter(pk=cube_id).first()
    if cube is None:
        raise NotFound(f"Cube '{cube_id}' not found.", extra={"field": "cube"})
    return cube


def cube_get_writable(*, actor: User, cube_id: str) -> Cube:
    cube = cube_get_readable(actor=actor, cube_id=cube_id)
    if cube.owner_id != actor.pk and not CubeMembership.objects.filter(cube=cube, user=actor, role__in=WRITE_ROLES).exists():
        raise PermissionDenied(f"You may read cube '{cube_id}' but not write to it.", extra={"field": "cube"})
    return cube
