"""Writes for cubes."""
from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from apps.accounts.models import User
from apps.cubes.models import Cube


def _personal_cube_id(user: User) -> str:
    base = re.sub(r"[^a-zA-Z0-9_-]+", "-", user.username).strip("-")[:80] or "user"
    return f"{base}-{user.pk}"


def cube_ensure_personal(*, actor: User) -> Cube:
    """The actor's personal default cube, created on first use (users may come from the admin,
    createsuperuser or a migration, so no sign-up path is trusted to have made it)."""
    cube = Cube.objects.filter(owner=actor, is_personal=True).first()
    if cube is not None:
        return cube
    try:
        with transaction.atomic():
            return Cube.objects.create(
                id=_personal_cube_id(actor), name=f"{actor.username}'s memories", owner=actor, is_personal=True,
                description="Personal default cube.",
            )
    except IntegrityError:
        return Cube.objects.get(owner=actor, is_personal=True)
