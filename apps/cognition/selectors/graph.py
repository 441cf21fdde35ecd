"""Navigating the graph as Context Graph does: the filters and perspective lock of a search, a node's
neighbourhood (best-first over links both ways) and the recently touched nodes. Reads only; every one starts from
the memories the actor may read, so another user's nodes are never reached."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q
from django.db.models.functions import Greatest
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.limits import (
    NEIGHBORHOOD_HOPS, NEIGHBORHOOD_NODES, NEIGHBORHOOD_SEEDS, PERSPECTIVE_MAX_AGENTS, RECENT_LIMIT,
    RECENT_LOOKBACK_MINUTES, Domain, Johari,
)
from apps.cognition.models import SessionItem
from apps.cognition.services.sessions import session_get
from apps.core.exceptions import InvalidInput
from apps.core.limits import UNIT
from apps.cubes.access import cube_ids_readable
from apps.memories.models import Memory, MemoryLink
from apps.memories.selectors import memories_readable, memory_get
from apps.memories.validation import MAX_ID_CHARS, MemoryFilters, clean_datetime

SORT_BY = ("recency", "importance", "access_count")


def node_filters(*, min_importance=None, johari_quadrants=None, created_after=None, domain=None, agent_ids=None,
                 exclude_agent_ids=None) -> MemoryFilters:
    """A search's filters (min_importance, johari_quadrants, created_after) and perspective lock (domain,
    agent_ids, exclude_agent_ids) as memory filters. A memory without a node profile (stored through another
    profile) is in the open quadrant and the general domain, a profile's defaults."""
    restrict = Q()
    importance = UNIT.clean(min_importance, field="min_importance")
    if importance is not None:
        restrict &= Q(importance__gte=importance)
    if johari_quadrants is not None:
        quadrants = _clean_choices(johari_quadrants, Johari.values, "johari_quadrants")
        johari = Q(node_profile__johari__in=quadrants)
        restrict &= johari | Q(node_profile__isnull=True) if Johari.OPEN in quadrants else johari
    if domain is not None:
        if domain not in Domain.values:
            raise InvalidInput(f"domain must be one of {', '.join(Domain.values)}.", field="domain")
        in_domain = Q(node_profile__domain=domain)
        restrict &= in_domain | Q(node_profile__isnull=True) if domain == Domain.GENERAL else in_domain
    if agent_ids is not None:
        restrict &= Q(agent_id__in=_clean_agents(agent_ids, "agent_ids"))
    if exclude_agent_ids is not None:
        restrict &= ~Q(agent_id__in=_clean_agents(exclude_agent_ids, "exclude_agent_ids"))
    return MemoryFilters(created_after=clean_datetime(created_after, field_name="created_after"),
                         restrict=restrict or None)


def _clean_choices(values, choices, field: str) -> list[str]:
    if not isinstance(values, (list, tuple)):
        raise InvalidInput(f"{field} must be a list of {', '.join(choices)}.", field=field)
    for index, value in enumerate(values):
        if value not in choices:
            raise InvalidInput(f"{field}[{index}] must be one of {', '.join(choices)}.", field=f"{field}[{index}]")
    return list(dict.fromkeys(values))


def _clean_agents(values, field: str) -> list[str]:
    if not isinstance(values, (list, tuple)) or not all(isinstance(value, str) for value in values):
        raise InvalidInput(f"{field} must be a list of agent ids (strings).", field=field)
    if len(values) > PERSPECTIVE_MAX_AGENTS:
        raise InvalidInput(f"{field} has {len(values)} agent ids; at most {PERSPECTIVE_MAX_AGENTS}.", field=field)
    if any(len(value) > MAX_ID_CHARS for value in values):
        raise InvalidInput(f"Each of {field} has at most {MAX_ID_CHARS} characters.", field=field)
    return list(dict.fromkeys(values))


@dataclass(frozen=True)
class Neighborhood:
    # (memory, score) best first: a focal node scores 1, a node reached over links the best product of their
    # weights along a path of at most max_hops links.
    nodes: list[tuple[Memory, float]]
    # (source id, target id, link type, weight) of the links between the nodes returned.
    edges: list[tuple]
    focal_point: list[str]
    # Why there is nothing to show, when there is not.
    note: str = ""


def node_neighborhood(*, actor: User, session_id=None, focal_node_id=None, max_hops=None, max_nodes=None,
                      include_edges: bool = True) -> Neighborhood:
    """The nodes around ``focal_node_id``, or around the nodes the session's latest query or store activated
    (``session_id``, else the actor's latest session), found best-first over links in both directions.

    Best-first with a hop limit, one statement a hop: each hop expands the nodes whose best score rose in the
    previous one, at most ``max_nodes`` of them, best first. Scores only fall along a path (weights are at most
    1), so every node of the best ``max_nodes`` has its path's nodes among them too: the beam loses nothing."""
    hops = NEIGHBORHOOD_HOPS.clean(max_hops, field="max_hops")
    limit = NEIGHBORHOOD_NODES.clean(max_nodes, field="max_nodes")
    session = session_get(actor=actor, session_id=session_id) if session_id is not None or focal_node_id is None \
        else None
    readable = list(cube_ids_readable(actor=actor).values_list("id", flat=True))
    if focal_node_id is not None:
        seeds = [str(memory_get(actor=actor, memory_id=focal_node_id, include_deleted=False).pk)]
    else:
        seeds = _session_focus(session, readable)
        if not seeds:
            return Neighborhood([], [], [], note="No focal point: give focal_node_id, or search or store first so "
                                                 "that the session has activated nodes to start from.")
    best = {node: 1.0 for node in seeds}
    frontier = list(seeds)
    for _ in range(hops):
        if not frontier:
            break
        risen: dict[str, float] = {}
        for near, far, weight in _links_of(frontier, readable):
            score = best[near] * weight
            if score > best.get(far, 0.0) and score > risen.get(far, 0.0):
                risen[far] = score
        best.update(risen)
        frontier = sorted(risen, key=lambda node: (-risen[node], node))[:limit]
    chosen = sorted(best, key=lambda node: (node not in seeds, -best[node], node))[:limit]
    memories = {str(pk): memory for pk, memory in Memory.objects.in_bulk(chosen).items()}
    nodes = [(memories[node], best[node]) for node in chosen if node in memories]
    edges = []
    if include_edges and len(chosen) > 1:
        edges = list(MemoryLink.objects.filter(source_id__in=chosen, target_id__in=chosen)
                     .order_by("-weight", "source_id", "target_id")
                     .values_list("source_id", "target_id", "link_type", "weight"))
    return Neighborhood(nodes, edges, seeds)


def _session_focus(session, readable: list[str]) -> list[str]:
    """The best nodes the session's latest query or store activated that are still live and readable."""
    if session is None:
        return []
    activated = (SessionItem.objects.filter(session=session).exclude(activated=[]).order_by("-created_at")
                 .values_list("activated", flat=True).first()) or []
    wanted = [entry["node_id"] for entry in sorted(activated, key=lambda entry: -entry["score"])]
    live = {str(pk) for pk in Memory.objects.filter(pk__in=wanted, cube_id__in=readable, deleted_at__isnull=True)
            .values_list("pk", flat=True)}
    return [node for node in wanted if node in live][:NEIGHBORHOOD_SEEDS]


def _links_of(frontier: list[str], readable: list[str]) -> list[tuple[str, str, float]]:
    """(frontier node, node across a link, weight) for every link of the frontier either way whose far end is a
    live memory the actor may read: one statement, each direction on its own index."""
    outgoing = (MemoryLink.objects.filter(source_id__in=frontier, target__cube_id__in=readable,
                                          target__deleted_at__isnull=True)
                .values_list("source_id", "target_id", "weight"))
    incoming = (MemoryLink.objects.filter(target_id__in=frontier, source__cube_id__in=readable,
                                          source__deleted_at__isnull=True)
                .values_list("target_id", "source_id", "weight"))
    return [(str(near), str(far), weight) for near, far, weight in outgoing.union(incoming, all=True)]


@dataclass(frozen=True)
class RecentContext:
    # (memory, score) in the order asked: score is the node's recency within the window, 1 for just now and 0 at
    # its start.
    nodes: list[tuple[Memory, float]]
    since: datetime
    until: datetime


def node_recent(*, actor: User, session_id=None, lookback_minutes=None, limit=None, sort_by=None,
                now: datetime | None = None) -> RecentContext:
    """The live nodes the actor may read that were accessed (retrieved, searched) or modified in the last
    ``lookback_minutes``; with ``session_id``, only those the session's queries and stores activated in it.
    ``sort_by``: recency (last touched first), importance or access_count (then recency)."""
    minutes = RECENT_LOOKBACK_MINUTES.clean(lookback_minutes, field="lookback_minutes")
    limit = RECENT_LIMIT.clean(limit, field="limit")
    sort_by = sort_by or "recency"
    if sort_by not in SORT_BY:
        raise InvalidInput(f"sort_by must be one of {', '.join(SORT_BY)}.", field="sort_by")
    until = now or timezone.now()
    since = until - timedelta(minutes=minutes)
    queryset = (memories_readable(actor=actor).annotate(touched=Greatest("last_accessed_at", "updated_at"))
                .filter(touched__gte=since, touched__lte=until))
    if session_id is not None:
        session = session_get(actor=actor, session_id=session_id)
        activated = SessionItem.objects.filter(session=session, created_at__gte=since).values_list("activated",
                                                                                                 flat=True)
        queryset = queryset.filter(pk__in={entry["node_id"] for entries in activated for entry in entries})
    order = {"recency": ("-touched", "-pk"), "importance": ("-importance", "-touched", "-pk"),
             "access_count": ("-access_count", "-touched", "-pk")}[sort_by]
    window = (until - since).total_seconds()
    nodes = [(memory, max(0.0, min(1.0, 1 - (until - memory.touched).total_seconds() / window)))
             for memory in queryset.order_by(*order)[:limit]]
    return RecentContext(nodes, since, until)
