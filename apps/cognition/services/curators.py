"""The curator mode of Context Graph's services (``curator=True``, the admin's): a staff user with the model's change
permission acts on another user's rows. The data scope is the row's owner (their cubes, their graph, the undo kept
for them), so every service keeps its own owner checks; what is recorded (an Event's actor, a task's closed_by, a
tombstone's actor, an annotation's author) names the curator."""
from __future__ import annotations

from django.db.models import QuerySet

from apps.accounts.models import User
from apps.core.exceptions import PermissionDenied


def curator_scope(*, actor: User, curator: bool, rows: QuerySet, owner_field: str = "owner_id") -> User:
    """Whose rows a service acts on: the actor's own; in curator mode the owner of ``rows`` (the row the admin
    names, by a key the caller has parsed; ``owner_field`` says where its owner is, a tombstone's being its undo's),
    granted by the actor's own staff status and 'change' permission on the rows' model, never by the argument. A row
    that does not exist leaves the actor: the service then answers not found, as it would to them."""
    if not curator:
        return actor
    meta = rows.model._meta
    if not (actor.is_active and actor.is_staff and actor.has_perm(f"{meta.app_label}.change_{meta.model_name}")):
        raise PermissionDenied(f"Curating other users' {meta.verbose_name_plural} needs staff status and the "
                               f"'change {meta.verbose_name}' permission.")
    owner_id = rows.values_list(owner_field, flat=True).first()
    if owner_id is None:
        return actor
    return User.objects.get(pk=owner_id)
