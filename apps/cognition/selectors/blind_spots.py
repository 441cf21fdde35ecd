"""The blind spots a dream's REM recorded for the actor (apps/cognition/models.BlindSpot), open or resolved, newest
first, each with the nodes its walk went through and the best hits retrieval found for its synthetic query, named in
one query per page whatever the number of rows."""
from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from apps.accounts.models import User
from apps.cognition.models import BlindSpot
from apps.cognition.selectors.listings import PAGE_SIZE, NodeRef, node_refs
from apps.core.exceptions import InvalidInput

OPEN, RESOLVED, ALL = "open", "resolved", "all"
STATUSES = (OPEN, RESOLVED, ALL)


def blind_spots_list(*, actor: User, status: str = OPEN) -> QuerySet[BlindSpot]:
    """The actor's blind spots by ``status`` (open, resolved or all), newest first."""
    if status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)}.", field="status")
    spots = BlindSpot.objects.filter(owner=actor).order_by("-created_at", "-pk")
    if status == OPEN:
        return spots.filter(resolved_at__isnull=True)
    if status == RESOLVED:
        return spots.filter(resolved_at__isnull=False).order_by("-resolved_at", "-pk")
    return spots


@dataclass(frozen=True)
class HitRef:
    node: NodeRef
    score: float


@dataclass(frozen=True)
class BlindSpotRow:
    spot: BlindSpot
    # The walk's nodes in order: the last one's words were the synthetic query.
    walk: list[NodeRef]
    hits: list[HitRef]

    @property
    def region(self) -> NodeRef | None:
        return self.walk[-1] if self.walk else None


def blind_spot_rows(*, actor: User, spots) -> list[BlindSpotRow]:
    """``spots`` with their walk's nodes and best hits, as far as the actor may still read them: one query."""
    spots = list(spots)
    refs = node_refs(actor=actor, node_ids=[node for spot in spots for node in spot.node_ids]
                     + [hit["node_id"] for spot in spots for hit in spot.hits])
    return [BlindSpotRow(spot, [refs[str(node)] for node in spot.node_ids],
                         [HitRef(refs[str(hit["node_id"])], float(hit["score"])) for hit in spot.hits])
            for spot in spots]


def blind_spots_page(*, actor: User, status: str = OPEN, page=1) -> tuple[Page, list[BlindSpotRow]]:
    shown = Paginator(blind_spots_list(actor=actor, status=status), PAGE_SIZE).get_page(page)
    return shown, blind_spot_rows(actor=actor, spots=shown)
