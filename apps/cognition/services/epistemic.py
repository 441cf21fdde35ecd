"""epistemic_action: one question about the weakest real spot of a session's context, or none and why.

The spots, in the order they are looked for:
0. the weakest open BlindSpot a dream's REM found in the actor's graph (lowest best score: a synthetic query
   nothing answered well, or answered only by a node more than three links away) whose nodes the actor can still
   read: ask where the missing knowledge comes from (thin) or how the two are related (disconnected). The spot is
   marked resolved (resolved_at) once asked, so it is asked once;
1. an open "ambiguity detected" task of the actor's inbox (those about the session's active nodes first): ask the
   user which of its nodes holds;
2. the closest pair of nodes the session's latest items activated that are close in meaning (cosine >=
   AMBIGUOUS_PAIR_COSINE) yet in different components of the active subgraph: told twice, or in conflict. Asking
   opens an ambiguity task for the pair (low priority), so the question waits in the inbox until someone curates
   the pair; a pair whose task was rejected is never asked about again;
3. the least coherent cluster (connected component of two nodes or more) of the active nodes: the lowest mean
   pairwise cosine, linked but far apart in meaning;
4. the latest query that activated nothing: the graph has a gap there, to fill from outside.
Without ``force`` a question is only asked when the session's coherence is low or its entropy high for its stage
(apps/cognition/utl.py), as the pulse would suggest epistemic_action or a search.

expected_entropy_reduction is an estimate: the session's entropy times the share of its latest items that touched
the spot (activated one of its nodes; for a gap, activated nothing), since settling the spot settles those items.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from django.db.models.functions import Left
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import AMBIGUOUS_PAIR_COSINE, AMBIGUOUS_PAIRS_TRIED, RECENT_ITEMS
from apps.cognition.models import BlindSpot, CgSession, CurationTask
from apps.cognition.selectors.status import RecentItem, activation_weights, open_tasks, session_recent_items
from apps.cognition.services.inbox import task_open
from apps.cognition.services.sessions import session_get
from apps.memories.models import MemoryLink, MemoryVector
from apps.memories.selectors import memories_readable

ASK_USER, SEARCH_EXTERNAL, CLARIFY = "ask_user", "search_external", "clarify"
SNIPPET_CHARS = 120
# Open ambiguity tasks read to find one whose nodes the actor can still read.
TASKS_READ = 20


@dataclass(frozen=True)
class EpistemicQuestion:
    session: CgSession | None
    question: str | None
    action_type: str | None
    target_nodes: list[str]
    expected_entropy_reduction: float
    current_coherence: float
    reason: str
    task: CurationTask | None = None


def epistemic_question(*, actor: User, session_id=None, force: bool = False) -> EpistemicQuestion:
    """The question (see the module), for the actor's session ``session_id`` or their latest."""
    session = session_get(actor=actor, session_id=session_id)
    entropy = session.entropy if session else 0.0
    coherence = session.coherence if session else 0.0

    def none(reason: str) -> EpistemicQuestion:
        return EpistemicQuestion(session, None, None, [], 0.0, round(coherence, 4), reason)

    if not force:
        if session is None or session.interactions == 0:
            return none("Nothing to judge yet: the session has no queries or stores. Pass force=true to ask about "
                        "the open ambiguities of your graph anyway.")
        stage = utl.stage_of(session.interactions)
        if not utl.coherence_is_low(coherence, stage) and not utl.entropy_is_high(entropy, stage):
            high_entropy, low_coherence = utl.THRESHOLDS[stage]
            return none(f"Coherence {coherence:.2f} is not below the {stage.value} threshold {low_coherence} and "
                        f"entropy {entropy:.2f} is not above {high_entropy}: nothing needs clarifying. Pass "
                        "force=true to ask anyway.")
    items = session_recent_items(session) if session else []
    weights = activation_weights(items)
    active = sorted(weights, key=lambda node_id: (-weights[node_id], node_id))[:RECENT_ITEMS]
    found = _blind_spot(actor) or _open_ambiguity(actor, active)
    if found is None:
        graph = _active_graph(actor, active) if len(active) > 1 else ({}, [])
        found = _closest_pair(actor, graph) or _loosest_cluster(actor, active, graph) or _gap(items)
    if found is None:
        return none("No weak spot found: no blind spot or ambiguity is open, and the session's latest items activated "
                    "no nodes "
                    "that could be compared and no query came back empty.")
    question, action_type, targets, reason, task = found
    return EpistemicQuestion(session, question, action_type, targets,
                             round(entropy * _share_touching(items, targets), 4), round(coherence, 4), reason, task)


def _share_touching(items: list[RecentItem], targets: list[str]) -> float:
    if not items:
        return 0.0
    wanted = set(targets)

    def touches(item: RecentItem) -> bool:
        activated = {node_id for node_id, _ in item.activated}
        return bool(wanted & activated) if wanted else not activated

    return sum(1 for item in items if touches(item)) / len(items)


def _snippets(actor: User, node_ids) -> dict[str, str]:
    rows = memories_readable(actor=actor).filter(pk__in=list(node_ids)).values_list("pk", Left("content",
                                                                                               SNIPPET_CHARS + 1))
    return {str(pk): _quoted(text) for pk, text in rows}


def _quoted(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= SNIPPET_CHARS else f'"{flat[:SNIPPET_CHARS - 1].rstrip()}…"'


def _blind_spot(actor: User):
    spots = list(BlindSpot.objects.filter(owner=actor, resolved_at__isnull=True)
                 .order_by("best_score", "created_at", "id")[:TASKS_READ])
    if not spots:
        return None
    snippets = _snippets(actor, {str(node) for spot in spots for node in spot.node_ids}
                         | {str(hit.get("node_id")) for spot in spots for hit in spot.hits if isinstance(hit, dict)})
    for spot in spots:
        last = str(spot.node_ids[-1]) if spot.node_ids else None
        if last not in snippets:  # the walk's node is gone or no longer readable: not a real spot now
            continue
        best = next((str(hit.get("node_id")) for hit in spot.hits if isinstance(hit, dict)
                     and str(hit.get("node_id")) in snippets and str(hit.get("node_id")) != last), None)
        if spot.kind == BlindSpot.Kind.DISCONNECTED and best is not None:
            question = (f"{snippets[last]} and {snippets[best]} answer each other (a dream's synthetic query) but "
                        "are more than three links apart: how are they related?")
            action_type, targets = CLARIFY, [last, best]
        else:
            question = (f"Your graph answers {snippets[last]} poorly (its best match scores {spot.best_score:.2f}): "
                        "what is missing here, and where should it come from (the user, a document, a search)?")
            action_type, targets = SEARCH_EXTERNAL, [last]
        reason = (f"Open blind spot {spot.pk} ({spot.kind}, best score {spot.best_score:.2f}) found by a dream's REM "
                  "walk: the weakest spot of your graph it knows.")
        BlindSpot.objects.filter(pk=spot.pk).update(resolved_at=timezone.now())
        return question, action_type, targets, reason, None
    return None


def _open_ambiguity(actor: User, active: list[str]):
    tasks = list(open_tasks(actor=actor).filter(task_type=CurationTask.TaskType.AMBIGUITY_DETECTED)[:TASKS_READ])
    if not tasks:
        return None
    snippets = _snippets(actor, {str(node) for task in tasks for node in task.node_ids})
    active_set = set(active)
    readable = [task for task in tasks if all(str(node) in snippets for node in task.node_ids)]
    # Those about the session's active nodes first; open_tasks already put the urgent and then the oldest first.
    readable.sort(key=lambda task: not active_set & {str(node) for node in task.node_ids})
    if not readable:
        return None
    task = readable[0]
    nodes = [str(node) for node in task.node_ids]
    told = " or ".join(snippets[node] for node in nodes)
    question = f"Which of these holds: {told}?" if len(nodes) > 1 else f"Is this still right: {told}?"
    return (question, ASK_USER, nodes, f"Open curation task {task.pk} ({task.priority} priority): {task.reason}",
            task)


def _active_graph(actor: User, active: list[str]) -> tuple[dict[str, np.ndarray], list[set[str]]]:
    """The vectors of the active nodes the actor can still read, and their connected components."""
    readable = memories_readable(actor=actor).filter(pk__in=active).values("pk")
    vectors = {str(memory_id): np.asarray(vector, dtype=np.float64) for memory_id, vector in
               MemoryVector.objects.filter(memory_id__in=readable).values_list("memory_id", "embedding")}
    nodes = [node_id for node_id in active if node_id in vectors]
    edges = [(str(a), str(b)) for a, b in MemoryLink.objects.filter(source_id__in=nodes, target_id__in=nodes)
             .values_list("source_id", "target_id")] if len(nodes) > 1 else []
    return vectors, utl.components(nodes, edges)


def _closest_pair(actor: User, graph: tuple[dict[str, np.ndarray], list[set[str]]]):
    vectors, groups = graph
    component = {node: index for index, group in enumerate(groups) for node in group}
    pairs = sorted(((utl.cosine(vectors[a], vectors[b]), a, b) for a, b in combinations(sorted(component), 2)
                    if component[a] != component[b]), reverse=True)
    for similarity, a, b in [pair for pair in pairs if pair[0] >= AMBIGUOUS_PAIR_COSINE][:AMBIGUOUS_PAIRS_TRIED]:
        reason = (f"Two nodes this session activated are close in meaning (cosine {similarity:.2f}) but nothing "
                  "links them: the same thing told twice, or in conflict.")
        task = task_open(owner=actor, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED, node_ids=[a, b],
                         reason=reason, suggested_tool=CurationTask.SuggestedTool.ANNOTATE_NODE,
                         priority=CurationTask.Priority.LOW)
        if task is None:  # the actor rejected this pair's task before: never asked again
            continue
        snippets = _snippets(actor, [a, b])
        question = (f"{snippets[a]} and {snippets[b]} are close in meaning but not linked: is one a correction, a "
                    "newer version or a duplicate of the other, or are they separate facts?")
        return question, CLARIFY, [a, b], reason, task
    return None


def _loosest_cluster(actor: User, active: list[str], graph: tuple[dict[str, np.ndarray], list[set[str]]]):
    vectors, groups = graph
    clusters = []
    for group in groups:
        members = sorted(group)
        if len(members) < 2:
            continue
        cohesion = float(np.mean([utl.cosine(vectors[a], vectors[b]) for a, b in combinations(members, 2)]))
        clusters.append((cohesion, members))
    if not clusters:
        return None
    cohesion, members = min(clusters)
    shown = sorted(members, key=active.index)[:5]
    snippets = _snippets(actor, shown)
    told = ", ".join(snippets[node] for node in shown)
    reason = (f"The least coherent cluster of the session's active nodes: {len(members)} linked nodes whose mean "
              f"similarity is {cohesion:.2f}.")
    return f"What ties these together: {told}? They are linked but far apart in meaning.", CLARIFY, shown, reason, None


def _gap(items: list[RecentItem]):
    empty = next((item for item in items if item.kind == "query" and not item.activated), None)
    if empty is None:
        return None
    asked = _quoted(empty.text)
    return (f"Nothing in your graph answers {asked}: where should this knowledge come from (a document, the user, "
            "a search)?", SEARCH_EXTERNAL, [], "The session's latest query without an answer in the graph.", None)
