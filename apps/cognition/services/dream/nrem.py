"""NREM: the dream replays what the owner's sessions activated together, and tidies near-duplicates.

Three phases, each worked in batches by the run (runs.py), each batch one transaction:
- ``nrem_replay``: the owner's SessionItems in the run's window (after the last completed NREM's, up to the newest
  when the run was made), oldest first. In each item, a node's activation a is its score over the item's best score
  (so the best is 1). Every pair of the owner's nodes both activated by the item, joined by an edge (either way; each
  edge between them), gets the Hebbian update
      w' = clamp(w (1 - HEBB_DECAY) + eta a_i a_j, WEIGHT_FLOOR, WEIGHT_CEILING)
  item after item, and the edge's last_activated_at becomes the item's time; an edge that ends at the floor is
  pruned. Only co-activated edges change: an edge no item touched keeps its weight (the gardener prunes idle ones).
- ``nrem_link``: pairs co-activated by at least CO_ACTIVATIONS_TO_LINK items of the window, with no edge either way
  (and none the replay changed or pruned), get a semantic edge of CO_ACTIVATION_WEIGHT, origin nrem, from the node
  more strongly activated over those items to the other.
- ``nrem_dedupe``: each memory or summary node of the owner made before the run (and, after a first dream, changed
  since the last one) is compared with its DEDUPE_NEIGHBOURS nearest in its cube. Above MERGE_COSINE with compatible
  priors, the pair is merged by merge_concepts' service (keep_highest: the words stay the best node's), itself
  undoable; from TASK_COSINE up (or above MERGE_COSINE when the priors differ), a potential_merge task is opened.
"""
from __future__ import annotations

import uuid
from collections import defaultdict

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.cognition.models import CgSession, CurationTask, NodeProfile, SessionItem
from apps.cognition.services.curation import MERGEABLE_KINDS, nodes_merge, priors_check
from apps.cognition.services.dream.limits import (
    CO_ACTIVATION_WEIGHT, CO_ACTIVATIONS_TO_LINK, DEDUPE_NEIGHBOURS, HEBB_DECAY, LINK_PAIRS_MAX, MERGE_COSINE,
    SUMMARY_MARK, TASK_COSINE, WEIGHT_CEILING, WEIGHT_FLOOR,
)
from apps.cognition.services.dream.work import Context, Work, pair
from apps.cognition.services.inbox import Proposal, tasks_open
from apps.cognition.services.undo import link_rows
from apps.core.exceptions import DomainError
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.vectors import EXACT_SCOPE_MEMORIES, filtered_vector_scan

MERGE_STRATEGY = "keep_highest"
NAME_CHARS = 60


def hebbian(weight: float, a_i: float, a_j: float, eta: float) -> float:
    """One co-activation's update of an edge's weight (REFERENCE.md's NREM replay)."""
    return min(WEIGHT_CEILING, max(WEIGHT_FLOOR, weight * (1 - HEBB_DECAY) + eta * a_i * a_j))


def dreamable(ctx: Context, node_ids) -> set[str]:
    """Those of the nodes the dream may change: live, the owner's, in a cube the owner may write."""
    valid = []
    for node_id in node_ids:
        try:
            valid.append(uuid.UUID(str(node_id)))
        except ValueError:
            continue
    return {str(pk) for pk in Memory.objects.filter(pk__in=valid, owner=ctx.owner, cube_id__in=ctx.cube_ids,
                                                    deleted_at__isnull=True).values_list("pk", flat=True)}


def activations(activated: list, owned: set[str]) -> dict[str, float]:
    """A SessionItem's owned nodes with their activation: score over the item's best score, in [0, 1]; a node
    listed twice keeps its first (best) score."""
    scores = [(str(entry.get("node_id")), float(entry.get("score") or 0.0)) for entry in activated
              if isinstance(entry, dict)]
    best = max((score for _, score in scores), default=0.0)
    if best <= 0:
        return {}
    found: dict[str, float] = {}
    for node, score in scores:
        if node in owned and node not in found:
            found[node] = min(1.0, max(0.0, score / best))
    return found


# --- nrem_replay --------------------------------------------------------------------------------------------------

def replay(ctx: Context, cursor, size: int) -> Work:
    after, upto = ctx.windows["replay"]
    start = after if cursor is None else cursor
    items = list(SessionItem.objects.filter(session__owner=ctx.owner, pk__gt=start, pk__lte=upto)
                 .order_by("pk").values_list("pk", "activated", "created_at")[:size])
    work = Work(items=len(items), cursor=items[-1][0] if items else start)
    work.done = len(items) < size or work.cursor >= upto
    if not items:
        if cursor is None:
            work.notes.append("NREM replay: no session item since the last dream, so nothing was replayed (a dream "
                              "replays what Context Graph's queries and stores activated).")
        return work
    owned = dreamable(ctx, {entry.get("node_id") for _, activated, _ in items for entry in activated
                         if isinstance(entry, dict)})
    occurrences = []
    for _, activated, when in items:
        active = activations(activated, owned)
        nodes = list(active)
        occurrences.extend((pair(a, b), active[a], active[b], when)
                           for index, a in enumerate(nodes) for b in nodes[index + 1:])
    involved = {node for key, _, _, _ in occurrences for node in key}
    links = list(MemoryLink.objects.select_for_update().filter(source_id__in=involved, target_id__in=involved)
                 .order_by("pk")) if involved else []
    by_pair: dict[tuple[str, str], list[MemoryLink]] = defaultdict(list)
    for link in links:
        by_pair[pair(link.source_id, link.target_id)].append(link)
    before = {link.pk: link.weight for link in links}
    pruned: dict[int, MemoryLink] = {}
    changed: dict[int, MemoryLink] = {}
    for key, a_i, a_j, when in occurrences:
        for link in by_pair.get(key, ()):
            if link.pk in pruned:
                continue
            weight = hebbian(link.weight, a_i, a_j, ctx.eta)
            if weight <= WEIGHT_FLOOR:
                pruned[link.pk] = link
                changed.pop(link.pk, None)
                continue
            link.weight = weight
            link.last_activated_at = max(filter(None, (link.last_activated_at, when)))
            changed[link.pk] = link
    work.counters["items_replayed"] += len(items)
    if not pruned and not changed:
        return work
    first = [pk for pk in [*changed, *pruned] if pk not in ctx.seen_links and pk not in ctx.made_links]
    work.link_rows = link_rows(first)  # read before the write: the links as they were
    now = timezone.now()
    for link in changed.values():
        link.updated_at = now
    MemoryLink.objects.bulk_update(list(changed.values()), ["weight", "last_activated_at", "updated_at"])
    MemoryLink.objects.filter(pk__in=list(pruned)).delete()
    first_seen = set(first)
    for pk, link in changed.items():
        if pk in first_seen:
            direction = ("edges_strengthened" if link.weight > before[pk] else
                         "edges_weakened" if link.weight < before[pk] else "edges_reactivated")
            work.counters[direction] += 1
    work.counters["edges_pruned"] += len(pruned)
    work.detail = {
        "reweighted": [[str(link.source_id), str(link.target_id), before[pk], link.weight]
                       for pk, link in changed.items()],
        "pruned": [[str(link.source_id), str(link.target_id), before[pk]] for pk, link in pruned.items()],
    }
    for link in [*changed.values(), *pruned.values()]:
        work.touched |= {str(link.source_id), str(link.target_id)}
        work.relinked.add(str(link.source_id))
    return work


# --- nrem_link ----------------------------------------------------------------------------------------------------

def _co_activated_pairs(ctx: Context) -> list[list]:
    """[source, target, count, last time] for the owner's node pairs co-activated by at least CO_ACTIVATIONS_TO_LINK
    items of the window with no edge either way, ordered by their ids: one statement. The source is the node with
    the larger summed activation over those items (on a tie, the smaller id), so the edge does not depend on ids."""
    after, upto = ctx.windows["replay"]
    item, session = SessionItem._meta.db_table, CgSession._meta.db_table
    memory, link = Memory._meta.db_table, MemoryLink._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH listed AS (SELECT i.id AS item, i.created_at, e.value->>'node_id' AS node, "
            f"  greatest(coalesce((e.value->>'score')::float8, 0), 0) AS score "
            f"  FROM {item} i JOIN {session} s ON s.id = i.session_id "
            f"  CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(i.activated) = 'array' "
            f"    THEN i.activated ELSE '[]'::jsonb END) e "
            f"  WHERE s.owner_id = %(owner)s AND i.id > %(after)s AND i.id <= %(upto)s "
            f"    AND jsonb_typeof(e.value) = 'object' AND jsonb_typeof(e.value->'score') = 'number' "
            f"    AND (e.value->>'node_id') ~ '^[0-9a-fA-F-]{{36}}$'), "
            f"acts AS (SELECT item, created_at, node, max(score) / nullif(max(max(score)) OVER (PARTITION BY item), 0) "
            f"  AS activation FROM listed GROUP BY item, created_at, node), "
            f"owned AS (SELECT a.item, a.created_at, a.activation, m.id AS node FROM acts a "
            f"  JOIN {memory} m ON m.id = a.node::uuid WHERE a.activation IS NOT NULL "
            f"  AND m.owner_id = %(owner)s AND m.cube_id = ANY(%(cubes)s) AND m.deleted_at IS NULL) "
            f"SELECT p.a::text, p.b::text, p.n, p.last_at, p.sum_a >= p.sum_b FROM ("
            f"  SELECT x.node AS a, y.node AS b, count(*) AS n, max(x.created_at) AS last_at, "
            f"    sum(x.activation) AS sum_a, sum(y.activation) AS sum_b "
            f"  FROM owned x JOIN owned y ON x.item = y.item AND x.node < y.node "
            f"  GROUP BY x.node, y.node HAVING count(*) >= %(times)s) p "
            f"WHERE NOT EXISTS (SELECT 1 FROM {link} l WHERE (l.source_id = p.a AND l.target_id = p.b) "
            f"  OR (l.source_id = p.b AND l.target_id = p.a)) "
            f"ORDER BY p.a, p.b LIMIT %(cap)s",
            {"owner": ctx.owner.pk, "after": after, "upto": upto, "cubes": ctx.cube_ids,
             "times": CO_ACTIVATIONS_TO_LINK, "cap": LINK_PAIRS_MAX})
        rows = cursor.fetchall()
    return [[a, b, n, last_at.isoformat()] if a_leads else [b, a, n, last_at.isoformat()]
            for a, b, n, last_at, a_leads in rows if pair(a, b) not in ctx.changed_pairs]


def link(ctx: Context, cursor, size: int) -> Work:
    work = Work()
    start = cursor or 0
    if "pairs" not in ctx.state:
        # The pairs are found once, kept in the run's list "pairs" (one item each) and linked batch by batch.
        found = _co_activated_pairs(ctx)
        work.state, work.appended = {"pairs": len(found)}, {"pairs": found}
        if len(found) >= LINK_PAIRS_MAX:
            work.notes.append(f"NREM link: more than {LINK_PAIRS_MAX} pairs qualified; the first {LINK_PAIRS_MAX} "
                              "(by id) were linked, the next dream links the rest.")
        total, chunk = len(found), found[:size]
    else:
        total, chunk = ctx.state["pairs"], ctx.listed("pairs", start, start + size)
    work.items, work.cursor = len(chunk), start + len(chunk)
    work.counters["pairs_examined"] += len(chunk)
    work.done = work.cursor >= total
    if not total:
        work.notes.append(f"NREM link: no pair of nodes without an edge was co-activated {CO_ACTIVATIONS_TO_LINK} "
                          "times or more.")
    if not chunk:
        return work
    owned = dreamable(ctx, {node for a, b, _, _ in chunk for node in (a, b)})
    wanted = [(a, b, count, when) for a, b, count, when in chunk if a in owned and b in owned]
    ends = {node for a, b, _, _ in wanted for node in (a, b)}
    linked = {pair(source, target) for source, target in MemoryLink.objects.filter(
        source_id__in=ends, target_id__in=ends).values_list("source_id", "target_id")}
    made = MemoryLink.objects.bulk_create([
        MemoryLink(source_id=a, target_id=b, link_type=MemoryLink.LinkType.SEMANTIC, weight=CO_ACTIVATION_WEIGHT,
                   origin=MemoryLink.Origin.NREM, last_activated_at=parse_datetime(when))
        for a, b, _, when in wanted if pair(a, b) not in linked])
    work.made_links = [link_.pk for link_ in made]
    work.counters["new_edges_created"] += len(made)
    counts = {pair(a, b): count for a, b, count, _ in wanted}
    work.detail = {"created": [[str(link_.source_id), str(link_.target_id), link_.weight,
                                counts[pair(link_.source_id, link_.target_id)]] for link_ in made]}
    for link_ in made:
        work.touched |= {str(link_.source_id), str(link_.target_id)}
        work.relinked.add(str(link_.source_id))
    return work


# --- nrem_dedupe --------------------------------------------------------------------------------------------------

def _candidates(ctx: Context, cursor, size: int) -> list[tuple[str, bool]]:
    """The next ``size`` nodes as they stood when the run started, each with whether it is still live: a node this
    run merged away stays in the set, so the count compared does not depend on the order of random ids."""
    started = ctx.windows["started"]
    nodes = Memory.objects.filter(Q(deleted_at__isnull=True) | Q(deleted_at__gte=started), owner=ctx.owner,
                                  cube_id__in=ctx.cube_ids, kind__in=MERGEABLE_KINDS, created_at__lt=started)
    if ctx.windows.get("dedupe_since"):
        nodes = nodes.filter(updated_at__gte=ctx.windows["dedupe_since"])
    # A gardener cycle compares only its window's nodes (ids after "after", up to "upto"); a dream every node.
    if ctx.windows.get("after"):
        nodes = nodes.filter(pk__gt=ctx.windows["after"])
    if ctx.windows.get("upto"):
        nodes = nodes.filter(pk__lte=ctx.windows["upto"])
    if cursor:
        nodes = nodes.filter(pk__gt=cursor)
    return [(str(pk), deleted is None)
            for pk, deleted in nodes.order_by("pk").values_list("pk", "deleted_at")[:size]]


def nearest(ctx: Context, candidates: list[str], *, floor: float = TASK_COSINE, k: int = DEDUPE_NEIGHBOURS,
            without_summaries: bool = False) -> dict[str, list[tuple[str, float]]]:
    """Each candidate's ``k`` nearest mergeable nodes of the owner in its cube at cosine >= ``floor``, best first
    (``without_summaries``: dream summaries are no one's neighbour): one statement, exact when the owner has at most
    EXACT_SCOPE_MEMORIES live nodes, else through HNSW."""
    memory, vector = Memory._meta.db_table, MemoryVector._meta.db_table
    scope = Memory.objects.filter(owner=ctx.owner, cube_id__in=ctx.cube_ids, deleted_at__isnull=True)
    exact = scope[:EXACT_SCOPE_MEMORIES + 1].count() <= EXACT_SCOPE_MEMORIES
    near_sql = (f"SELECT v.memory_id, v.embedding <=> c.embedding AS distance FROM {vector} v "
                f"JOIN {memory} m ON m.id = v.memory_id WHERE m.cube_id = cm.cube_id AND m.owner_id = %(owner)s "
                f"AND m.deleted_at IS NULL AND m.kind = ANY(%(kinds)s) AND v.memory_id <> c.memory_id"
                + (" AND NOT (m.metadata ? %(mark)s)" if without_summaries else ""))
    if exact:  # OFFSET 0 keeps the comparison exact, off the index
        near_sql = f"SELECT * FROM ({near_sql} OFFSET 0) compared"
    sql = (f"SELECT c.memory_id::text, n.memory_id::text, 1 - n.distance FROM {vector} c "
           f"JOIN {memory} cm ON cm.id = c.memory_id "
           f"CROSS JOIN LATERAL ({near_sql} ORDER BY distance LIMIT %(k)s) n "
           f"WHERE c.memory_id = ANY(%(ids)s::uuid[]) AND 1 - n.distance >= %(floor)s")
    params = {"owner": ctx.owner.pk, "kinds": list(MERGEABLE_KINDS), "k": k, "ids": candidates, "floor": floor,
              "mark": SUMMARY_MARK}
    if exact:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    else:
        with filtered_vector_scan(), connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    found: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for candidate, neighbour, cosine in rows:
        found[candidate].append((neighbour, float(cosine)))
    for neighbours in found.values():
        neighbours.sort(key=lambda item: (-item[1], item[0]))
    return found


def _name(sources: list[Memory]) -> str:
    """The merged node's name: the best source's Context Graph name, else the start of its content."""
    best = max(sources, key=lambda memory: (memory.importance, memory.created_at))
    name = NodeProfile.objects.filter(memory=best).exclude(name="").values_list("name", flat=True).first()
    if name:
        return name
    words = " ".join(best.content.split())
    return words if len(words) <= NAME_CHARS else words[:NAME_CHARS - 1].rsplit(" ", 1)[0] + "…"


def dedupe(ctx: Context, cursor, size: int) -> Work:
    batch = _candidates(ctx, cursor, size)
    work = Work(items=len(batch), cursor=batch[-1][0] if batch else cursor)
    work.done = len(batch) < size
    if not batch:
        if cursor is None:
            work.notes.append("NREM dedupe: no memory or summary node changed since the last dream.")
        return work
    work.counters["nodes_compared"] += len(batch)
    candidates = [node for node, live in batch if live]
    nearest_nodes = nearest(ctx, candidates) if candidates else {}
    gone: set[str] = set()
    proposals: dict[tuple[str, str], Proposal] = {}
    merges = []
    for candidate in candidates:
        if candidate in gone:
            continue
        near = [(node, cosine) for node, cosine in nearest_nodes.get(candidate, ()) if node not in gone]
        for node, cosine in near:
            if cosine <= MERGE_COSINE:
                proposals.setdefault(pair(candidate, node), Proposal(
                    [candidate, node], f"Near-duplicates (cosine {cosine:.3f}) found by a dream: merge_concepts "
                                       "would join them.", CurationTask.SuggestedTool.MERGE_CONCEPTS))
                continue
            sources = list(Memory.objects.filter(pk__in=[candidate, node], deleted_at__isnull=True))
            priors = priors_check(sources) if len(sources) == 2 else None
            if priors is None or not priors.compatible:
                why = priors.why if priors else "one of them is gone"
                proposals.setdefault(pair(candidate, node), Proposal(
                    [candidate, node], f"Near-duplicates (cosine {cosine:.3f}) that a dream did not merge: {why}. "
                                       "merge_concepts links them unless force_merge.",
                    CurationTask.SuggestedTool.MERGE_CONCEPTS))
                continue
            try:
                with transaction.atomic():  # a refused merge leaves nothing behind
                    merged = nodes_merge(actor=ctx.owner, source_node_ids=[candidate, node],
                                         target_name=_name(sources), merge_strategy=MERGE_STRATEGY)
            except DomainError as exc:
                work.notes.append(f"NREM dedupe: {candidate} and {node} were not merged: {exc.message}")
                continue
            gone |= {candidate, node}
            work.merges.append(merged.reversal_hash)
            merges.append({"merged_node_id": str(merged.merged.pk), "merged_from": [candidate, node],
                           "cosine": round(cosine, 6), "reversal_hash": merged.reversal_hash})
            work.touched |= {candidate, node, str(merged.merged.pk)}
            break
    work.counters["merges"] += len(merges)
    work.counters["nodes_merged"] += 2 * len(merges)
    wanted = [proposal for key, proposal in proposals.items() if not set(key) & gone]
    opened_since = timezone.now()
    tasks = [task for task in tasks_open(owner=ctx.owner, task_type=CurationTask.TaskType.POTENTIAL_MERGE,
                                         proposals=wanted) if task is not None]
    new_tasks = [str(task.pk) for task in tasks if task.created_at >= opened_since]
    work.counters["tasks_opened"] += len(new_tasks)
    work.detail = {"merges": merges, "tasks": new_tasks}
    return work
