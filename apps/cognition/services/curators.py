"""The admin's curator mode for Context Graph: a staff user with the model's change permission acts on another
user's row as that row's owner would, so every service keeps its own owner checks (a task is decided, an undo
applied, a pad cleared exactly as its owner would do it)."""
from __future__ import annotations

from django.db import models

from apps.accounts.models import User
from apps.core.exceptions import PermissionDenied


def curator_acts_as_owner(*, actor: User, model: type[models.Model], pk, owner_field: str = "owner_id") -> User:
    """The owner of ``model`` row ``pk`` (``owner_field`` names it; a tombstone's is its undo's), for a curator:
    granted by the actor's own staff status and 'change' permission on the model, never by an argument. A row
    that does not exist, or has no owner, leaves the actor as they are: the service then answers not found."""
    meta = model._meta
    if not (actor.is_active and actor.is_staff and actor.has_perm(f"{meta.app_label}.change_{meta.model_name}")):
        raise PermissionDenied(f"Curating other users' {meta.verbose_name_plural} needs staff status and the "
                               f"'change {meta.verbose_name}' permission.")
    owner_id = model.objects.filter(pk=pk).values_list(owner_field, flat=True).first()
    if owner_id is None:
        return actor
    return User.objects.get(pk=owner_id)
