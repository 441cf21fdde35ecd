"""Settling a blind spot (a region a dream's REM found thin or disconnected, apps/cognition/models.BlindSpot): its
owner marks it resolved once they have filled or linked the region, or dismisses it as not worth filling; either way
it leaves the open list, and REM may find the region again later if it is still thin."""
from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import BlindSpot
from apps.cognition.services.curators import curator_scope
from apps.core.exceptions import Conflict, NotFound


def _parse(blind_spot_id) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(blind_spot_id))
    except ValueError:
        return None


def blind_spot_resolve(*, actor: User, blind_spot_id, curator: bool = False) -> BlindSpot:
    """Mark one of the actor's open blind spots resolved (now). Another user's or an unknown one is not found; one
    resolved already is a Conflict. ``curator``: any user's, as its owner would (the admin's action)."""
    parsed = _parse(blind_spot_id)
    owner = curator_scope(actor=actor, curator=curator, rows=BlindSpot.objects.filter(pk=parsed)) if parsed else actor
    with transaction.atomic():
        spot = BlindSpot.objects.select_for_update().filter(owner=owner, pk=parsed).first() if parsed else None
        if spot is None:
            raise NotFound(f"Blind spot {str(blind_spot_id)[:80]} not found: it is not one of yours.",
                           extra={"field": "blind_spot_id",
                                  "suggestion": "List your blind spots (GET /api/v1/cognition/blind-spots/)."})
        if spot.resolved_at is not None:
            raise Conflict(f"Blind spot {spot.pk} was resolved already, on {spot.resolved_at:%Y-%m-%d %H:%M} UTC.",
                           code="already_resolved", extra={"field": "blind_spot_id"})
        spot.resolved_at = timezone.now()
        spot.save(update_fields=["resolved_at"])
    return spot
