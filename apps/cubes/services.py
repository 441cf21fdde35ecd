"""Writes for cubes: register, update, share and revoke, unregister, restore and delete.

Each asks ``apps.cubes.access.cube_get_for`` with the action the write needs (admin for update, share
and revoke; delete, i.e. owner only, for unregister, restore and delete), the very predicate that
``access_check`` answers with, so the two never disagree.
"""
from __future__ import annotations

import re
import secrets
from collections.abc import Iterator

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.accounts.selectors import user_resolve
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.cubes.access import cube_get_for
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.validation import clean_cube_id, clean_cube_name, clean_description, clean_path, clean_role


def _personal_cube_ids(user: User) -> Iterator[str]:
    """``<username slug>-<pk>``, then with a random suffix: anyone may register any free id, so the plain
    one can be taken before the user's first use."""
    base = f"{re.sub(r'[^a-zA-Z0-9_-]+', '-', user.username).strip('-')[:80] or 'user'}-{user.pk}"
    yield base
    for _ in range(3):
        yield f"{base}-{secrets.token_hex(4)}"


def cube_ensure_personal(*, actor: User) -> Cube:
    """The actor's personal default cube, created on first use (users may come from the admin,
    createsuperuser or a migration, so no sign-up path is trusted to have made it)."""
    cube = Cube.objects.filter(owner=actor, is_personal=True).first()
    if cube is not None:
        return cube
    for cube_id in _personal_cube_ids(actor):
        try:
            with transaction.atomic():
                return Cube.objects.create(id=cube_id, name=f"{actor.username}'s memories", owner=actor,
                                           is_personal=True, description="Personal default cube.")
        except IntegrityError:  # made meanwhile by a concurrent first use, or the id is taken
            cube = Cube.objects.filter(owner=actor, is_personal=True).first()
            if cube is not None:
                return cube
    raise Conflict("Could not find a free id for your personal cube; please try again.", code="cube_exists")


def _cube_exists(cube_id: str) -> Conflict:
    return Conflict(f"A cube with id '{cube_id}' already exists: choose another cube_id.", code="cube_exists",
                    extra={"field": "cube_id"})


def cube_register(*, actor: User, cube_id: str, name: str | None = None, description: str = "",
                  path: str = "", hidden: bool = False) -> Cube:
    """A new cube owned by the actor. Ids are global (MemGOS addresses cubes by id alone), so an id taken by
    anyone, even by an unregistered cube, is a Conflict. ``path`` is kept as information only. ``hidden``: a system
    cube that only its service sees (apps.cubes.access.hidden_cube_scope); no edge passes it."""
    cube_id = clean_cube_id(cube_id)
    cube = Cube(
        id=cube_id, owner=actor, name=cube_id if name is None else clean_cube_name(name),
        description=clean_description(description), path=clean_path(path), hidden=bool(hidden),
    )
    if Cube.objects.filter(pk=cube_id).exists():
        raise _cube_exists(cube_id)
    try:
        with transaction.atomic():
            cube.save(force_insert=True)
    except IntegrityError:  # registered by someone else between the check and the insert
        raise _cube_exists(cube_id) from None
    cube.role = "owner"
    return cube


@transaction.atomic
def cube_update(*, actor: User, cube_id: str, name: str | None = None, description: str | None = None,
                path: str | None = None) -> Cube:
    """Rename or re-describe a cube (owner or admin member); None leaves a field as it is."""
    cube = cube_get_for(actor=actor, cube_id=cube_id, action="admin")
    if name is not None:
        cube.name = clean_cube_name(name)
    if description is not None:
        cube.description = clean_description(description)
    if path is not None:
        cube.path = clean_path(path)
    cube.save(update_fields=["name", "description", "path", "updated_at"])
    return cube


def _resolve_user(value, *, field: str = "user") -> User:
    """An active user by username or numeric id (accounts.selectors.user_resolve)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip() or "\x00" in value or len(value) > 150:
        raise InvalidInput(f"{field} must be a username or a user id.", field=field)
    user = user_resolve(identifier=value)
    if user is None or not user.is_active:
        raise NotFound(f"User '{value}' not found.", code="user_not_found", extra={"field": field})
    return user


@transaction.atomic
def cube_share(*, actor: User, cube_id: str, user, role: str = "reader") -> CubeMembership:
    """Grant ``user`` a role in the cube (owner or admin member). Sharing again changes the role."""
    role = clean_role(role)
    cube = cube_get_for(actor=actor, cube_id=cube_id, action="admin")
    target = _resolve_user(user)
    if target.pk == actor.pk:
        raise InvalidInput("You cannot share a cube with yourself.", field="user")
    if target.pk == cube.owner_id:
        raise InvalidInput(f"'{target.username}' owns cube '{cube.pk}' already.", field="user")
    membership, _ = CubeMembership.objects.update_or_create(cube=cube, user=target, defaults={"role": role})
    return membership


@transaction.atomic
def cube_revoke(*, actor: User, cube_id: str, user) -> None:
    """Take a member's access away (owner or admin member)."""
    cube = cube_get_for(actor=actor, cube_id=cube_id, action="admin")
    target = _resolve_user(user)
    deleted, _ = CubeMembership.objects.filter(cube=cube, user=target).delete()
    if not deleted:
        raise NotFound(f"User '{target.username}' is not a member of cube '{cube.pk}'.", code="member_not_found",
                       extra={"field": "user"})


def _owned_for_removal(*, actor: User, cube_id: str) -> Cube:
    """Owner only, and never the personal cube (memories written without a cube land there): both are
    rules of action "delete" in cube_get_for, so access_check gives the same answer."""
    return cube_get_for(actor=actor, cube_id=cube_id, action="delete")


@transaction.atomic
def cube_unregister(*, actor: User, cube_id: str) -> Cube:
    """Soft delete: the cube and its memories disappear for everyone until the owner restores it."""
    cube = _owned_for_removal(actor=actor, cube_id=cube_id)
    if cube.deleted_at is None:
        cube.deleted_at = timezone.now()
        cube.save(update_fields=["deleted_at", "updated_at"])
    return cube


@transaction.atomic
def cube_restore(*, actor: User, cube_id: str) -> Cube:
    """Undo unregister (owner only). Restoring a registered cube changes nothing."""
    cube = _owned_for_removal(actor=actor, cube_id=cube_id)
    if cube.deleted_at is not None:
        cube.deleted_at = None
        cube.save(update_fields=["deleted_at", "updated_at"])
    return cube


@transaction.atomic
def cube_delete(*, actor: User, cube_id: str) -> None:
    """Hard delete (owner only), registered or not: the cube's memories, links and memberships go too."""
    _owned_for_removal(actor=actor, cube_id=cube_id).delete()
