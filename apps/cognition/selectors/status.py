"""What Context Graph's status tools read: the caller's graph in figures, a session's memetic status (its cached UTL
state, the concepts its latest items activated, the next action and the curation inbox), the pulse as a resource,
and the neighbourhood maps that visualize:// draws. Every read starts from the actor: their sessions, their tasks
and the memories of the cubes they may read."""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import Case, Count, Exists, IntegerField, Q, Value, When
from django.db.models.functions import Left

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import (
    CURATION_TASKS_SHOWN, DREAM_MIN_NODES, ENTROPY_SMOOTHING, MAP_NODES, RECENT_ITEMS, TOP_CONCEPTS, Stage,
)
from apps.cognition.models import CgSession, ConsolidationRun, CurationTask, SessionItem
from apps.cognition.services.sessions import pulse_of, session_get
from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.access import cube_ids_readable, cube_ids_writable
from apps.memories.models import SEARCH_CONFIG, Memory, MemoryLink
from apps.memories.selectors import memories_readable, memory_get

# The seed's suggested_action for each pulse suggestion (None: curate when the inbox has work, else ready).
ACTION_FOR_SUGGESTION = {"trigger_dream": "consolidate", "epistemic_action": "clarify", "search_graph": "explore",
                         "get_memetic_status": "curate"}
LABEL_CHARS = 60
# A hub's links beyond this many (the weakest) are not read for a map: the map shows MAP_NODES nodes at most anyway.
LINKS_READ = 1000
# High-priority tasks first, then medium, then low.
PRIORITY_ORDER = Case(When(priority=CurationTask.Priority.HIGH, then=Value(0)),
                      When(priority=CurationTask.Priority.MEDIUM, then=Value(1)), default=Value(2),
                      output_field=IntegerField())


def open_tasks(*, actor: User):
    """The actor's open curation tasks, the most urgent first, then the oldest."""
    return CurationTask.objects.filter(owner=actor, status=CurationTask.Status.OPEN).order_by(PRIORITY_ORDER,
                                                                                               "created_at")


@dataclass(frozen=True)
class RecentItem:
    kind: str
    text: str
    # (node id, score) pairs, best first.
    activated: list[tuple[str, float]]


def session_recent_items(session: CgSession, *, limit: int = RECENT_ITEMS) -> list[RecentItem]:
    """The session's latest items, newest first: one query."""
    rows = (SessionItem.objects.filter(session=session).order_by("-created_at", "-id")
            .values_list("kind", "text", "activated")[:limit])
    return [RecentItem(kind, text, [(entry["node_id"], float(entry["score"])) for entry in activated])
            for kind, text, activated in rows]


def activation_weights(items: list[RecentItem]) -> dict[str, float]:
    """Each activated node's weight: its scores, each discounted by the item's age in items as entropy discounts
    surprise (the newest item counts fully, the one before (1 - 0.3) as much, ...)."""
    weights: dict[str, float] = {}
    for age, item in enumerate(items):
        discount = (1.0 - ENTROPY_SMOOTHING) ** age
        for node_id, score in item.activated:
            weights[node_id] = weights.get(node_id, 0.0) + max(score, 0.0) * discount
    return weights


def node_labels(*, actor: User, node_ids: list[str]) -> dict[str, str]:
    """A short label for each readable live node of ``node_ids``: its Context Graph name, else its first keyword,
    else the start of its content. One query; nodes the actor cannot read (or that are gone) are left out."""
    rows = (memories_readable(actor=actor).filter(pk__in=node_ids)
            .values_list("pk", "node_profile__name", "keywords", Left("content", LABEL_CHARS + 1)))
    return {str(pk): _label(name, keywords, start) for pk, name, keywords, start in rows}


def _label(name: str | None, keywords: list[str], start: str) -> str:
    if name:
        return name
    if keywords:
        return keywords[0]
    return start if len(start) <= LABEL_CHARS else start[:LABEL_CHARS - 1].rstrip() + "…"


def task_counts(*, actor: User) -> dict[str, int]:
    """The actor's open curation tasks: how many (``open``), and how many of high priority (``urgent``)."""
    return CurationTask.objects.filter(owner=actor, status=CurationTask.Status.OPEN).aggregate(
        open=Count("pk"), urgent=Count("pk", filter=Q(priority=CurationTask.Priority.HIGH)))


@dataclass(frozen=True)
class GraphState:
    nodes: int
    edges: int
    cubes: int
    open_tasks: int
    urgent_tasks: int
    session: CgSession | None


def graph_state_get(*, actor: User) -> GraphState:
    """The caller's graph in figures: live nodes and the links among them in the cubes they may read, their open
    curation tasks, and their latest session (four queries)."""
    readable = memories_readable(actor=actor)
    counts = readable.aggregate(nodes=Count("pk"), cubes=Count("cube", distinct=True))
    live = readable.values("pk")
    edges = MemoryLink.objects.filter(source_id__in=live, target_id__in=live).count()
    tasks = task_counts(actor=actor)
    return GraphState(nodes=counts["nodes"], edges=edges, cubes=counts["cubes"], open_tasks=tasks["open"],
                      urgent_tasks=tasks["urgent"], session=session_get(actor=actor))


@dataclass(frozen=True)
class MemeticStatus:
    session: CgSession | None
    stage: Stage
    pulse: utl.Pulse
    concepts: list[str]
    suggested_action: str
    dream_available: bool
    tasks: list[CurationTask]
    open_tasks: int


def pulse_and_stage(session: CgSession | None, *, urgent_task: bool) -> tuple[utl.Pulse, Stage]:
    """A session's pulse and lifecycle stage; without a session, a quiet pulse in infancy (the inbox aside)."""
    if session is None:
        return utl.Pulse(0.0, 0.0, "get_memetic_status" if urgent_task else None), Stage.INFANCY
    return pulse_of(session, urgent_task=urgent_task), utl.stage_of(session.interactions)


def memetic_status_get(*, actor: User, session_id=None) -> MemeticStatus:
    """The session's mental state (the actor's latest when ``session_id`` is left out; another user's session is not
    found, as an unknown one is): its cached entropy and coherence, the concepts its latest items activated most, the
    next action, whether a dream has anything to work on, and the open curation tasks."""
    session = session_get(actor=actor, session_id=session_id)
    tasks = list(open_tasks(actor=actor)[:CURATION_TASKS_SHOWN])
    total = len(tasks) if len(tasks) < CURATION_TASKS_SHOWN else open_tasks(actor=actor).count()
    urgent = any(task.priority == CurationTask.Priority.HIGH for task in tasks)
    pulse, stage = pulse_and_stage(session, urgent_task=urgent)
    concepts = _top_concepts(actor, session_recent_items(session)) if session else []
    action = ACTION_FOR_SUGGESTION.get(pulse.suggested) or ("curate" if tasks else "ready")
    return MemeticStatus(session=session, stage=stage, pulse=pulse, concepts=concepts, suggested_action=action,
                         dream_available=dream_available(actor=actor), tasks=tasks, open_tasks=total)


def _top_concepts(actor: User, items: list[RecentItem]) -> list[str]:
    weights = activation_weights(items)
    ranked = sorted(weights, key=lambda node_id: (-weights[node_id], node_id))
    labels = node_labels(actor=actor, node_ids=ranked[:RECENT_ITEMS])
    concepts: list[str] = []
    for node_id in ranked:
        label = labels.get(node_id)
        if label and label not in concepts:
            concepts.append(label)
        if len(concepts) == TOP_CONCEPTS:
            break
    return concepts


def dream_available(*, actor: User) -> bool:
    """Whether a dream can start: none of the actor's is under way, and it has something to work on (at least
    DREAM_MIN_NODES live nodes in cubes the actor may write, which a dream replays and links). One statement."""
    busy = ConsolidationRun.objects.filter(owner=actor, status__in=ConsolidationRun.ACTIVE)
    writable = Memory.objects.filter(~Exists(busy), cube_id__in=cube_ids_writable(actor=actor), deleted_at__isnull=True)
    return writable[:DREAM_MIN_NODES].count() >= DREAM_MIN_NODES


@dataclass(frozen=True)
class PulseState:
    session: CgSession | None
    stage: Stage
    pulse: utl.Pulse
    pending_tasks: int
    urgent_tasks: int


def pulse_state_get(*, actor: User) -> PulseState:
    """The pulse of the actor's current (latest) session with its lifecycle stage and the curation tasks waiting."""
    session = session_get(actor=actor)
    tasks = task_counts(actor=actor)
    pulse, stage = pulse_and_stage(session, urgent_task=tasks["urgent"] > 0)
    return PulseState(session=session, stage=stage, pulse=pulse, pending_tasks=tasks["open"],
                      urgent_tasks=tasks["urgent"])


@dataclass(frozen=True)
class GraphMap:
    """Nodes {id: label} (in the order they were reached) and the links among them, for a drawing."""

    nodes: dict[str, str]
    edges: list[tuple[str, str, str, float]]
    focal: str | None
    # How many more nodes matched or were in reach than the map shows (at least: a hub's weakest links are not read).
    left_out: int


def node_neighbourhood_map(*, actor: User, node_id, hops: int = 2, limit: int = MAP_NODES) -> GraphMap:
    """The readable live nodes within ``hops`` links of ``node_id`` (both directions), the strongest links first, at
    most ``limit`` nodes, and every link among them. A node the actor cannot read is not found."""
    focal = memory_get(actor=actor, memory_id=node_id, include_deleted=False)
    readable = memories_readable(actor=actor).values("pk")
    reached, frontier, left_out = [str(focal.pk)], {str(focal.pk)}, 0
    for _ in range(hops):
        links = (MemoryLink.objects.filter(Q(source_id__in=frontier) | Q(target_id__in=frontier),
                                           source_id__in=readable, target_id__in=readable)
                 .order_by("-weight", "source_id", "target_id").values_list("source_id", "target_id")[:LINKS_READ])
        found = []
        for source, target in links:
            for end in (str(source), str(target)):
                if end not in reached and end not in found:
                    found.append(end)
        room = max(0, limit - len(reached))
        left_out += max(0, len(found) - room)
        reached.extend(found[:room])
        frontier = set(found[:room])
        if not frontier:
            break
    return _map(actor, reached, focal=str(focal.pk), left_out=left_out)


def topic_map(*, actor: User, scope: str, topic: str, limit: int = MAP_NODES) -> GraphMap:
    """The readable live nodes of one cube (``scope`` its id, or ``all`` for every readable cube) that match
    ``topic`` as full text, best first, at most ``limit``, and the links among them."""
    words = " ".join(topic.split())
    if not words:
        raise InvalidInput("topic is empty: name what the map is about, e.g. visualize://all/deployment.",
                           field="topic")
    nodes = memories_readable(actor=actor)
    if scope != "all":
        if not cube_ids_readable(actor=actor).filter(id=scope).exists():
            raise NotFound(f"Cube '{scope}' not found: use one of your cubes' ids, or all.", extra={"field": "scope"})
        nodes = nodes.filter(cube_id=scope)
    query = SearchQuery(words, config=SEARCH_CONFIG, search_type="websearch")
    matched = [str(pk) for pk in nodes.filter(search_vector=query)
               .annotate(rank=SearchRank("search_vector", query)).order_by("-rank", "pk")
               .values_list("pk", flat=True)[:limit + 1]]
    return _map(actor, matched[:limit], focal=None, left_out=max(0, len(matched) - limit))


def _map(actor: User, node_ids: list[str], *, focal: str | None, left_out: int) -> GraphMap:
    labels = node_labels(actor=actor, node_ids=node_ids)
    shown = [node_id for node_id in node_ids if node_id in labels]
    edges = [(str(source), str(target), link_type, weight) for source, target, link_type, weight in
             MemoryLink.objects.filter(source_id__in=shown, target_id__in=shown)
             .order_by("-weight", "source_id", "target_id").values_list("source_id", "target_id", "link_type",
                                                                        "weight")]
    return GraphMap(nodes={node_id: labels[node_id] for node_id in shown}, edges=edges, focal=focal,
                    left_out=left_out)
