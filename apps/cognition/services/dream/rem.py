"""REM: random walks from the sparse regions of the owner's graph, each ending in a synthetic query answered by the
real retrieval (without reinforcing anything, and unannounced: the dream's own query does not wake it).

- Starts: the owner's live nodes with no more links than the lowest quartile's (at most REM_START_NODES, fewest
  first, then by id), fixed when the phase begins.
- Walk ``i`` draws from ``random.Random(f"{seed}:{i}")`` (the run's recorded seed), so a resumed or repeated run walks
  the same way: a start, then up to REM_HOPS steps over links either way to nodes not yet visited, each chosen with
  probability proportional to exp(weight / REM_TEMPERATURE) (2.0: nearly uniform, so weak links get walked too).
- The query is the last node's words (its first REM_QUERY_CHARS characters); the hits are the owner's nodes the
  retrieval ranks (REM_HITS), the walk's own nodes left out.
  - A hit at dense cosine >= REM_LEAP_COSINE with no path of at most REM_PATH_HOPS links to the last node is a leap:
    a semantic edge of REM_LEAP_WEIGHT from the last node to it, origin rem.
  - The best hit's score under REM_THIN_SCORE: a ``thin`` BlindSpot; else, when the best hit has no path of at most
    REM_PATH_HOPS links to the last node and was not linked as a leap: a ``disconnected`` one. One open blind spot of a
  kind per last node.
- A path of REM_SHORTCUT_HOPS links or more, from a start to the same node, walked REM_SHORTCUT_WALKS times or more
  gets a shortcut edge (origin shortcut) when the two have none: causal if every step followed a causal link forward,
  else semantic; weight min(REM_SHORTCUT_MAX, REM_SHORTCUT_FACTOR x the product of the path's weights). Made when the
  last walk is done, from the counts the checkpoint keeps.
"""
from __future__ import annotations

import math
import random

from django.db import connection
from django.db.models import Q

from apps.cognition.models import BlindSpot
from apps.cognition.services.dream.limits import (
    REM_HITS, REM_HOPS, REM_LEAP_COSINE, REM_LEAP_WEIGHT, REM_PATH_HOPS, REM_QUERY_CHARS, REM_SHORTCUT_FACTOR,
    REM_SHORTCUT_HOPS, REM_SHORTCUT_MAX, REM_SHORTCUT_WALKS, REM_START_NODES, REM_TEMPERATURE, REM_THIN_SCORE,
)
from apps.cognition.services.dream.work import Context, Work
from apps.memories.models import Memory, MemoryLink
from apps.memories.services.retrieval import memory_retrieve


def _starts(ctx: Context) -> list[str]:
    """The sparse regions: the owner's nodes whose link count (either way) is at most the lowest quartile's, fewest
    first, then by id, at most REM_START_NODES."""
    memory, link = Memory._meta.db_table, MemoryLink._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id::text, (SELECT count(*) FROM {link} l WHERE l.source_id = m.id OR l.target_id = m.id) "
            f"AS degree FROM {memory} m WHERE m.owner_id = %(owner)s AND m.cube_id = ANY(%(cubes)s) "
            f"AND m.deleted_at IS NULL ORDER BY degree, m.id",
            {"owner": ctx.owner.pk, "cubes": ctx.cube_ids})
        rows = cursor.fetchall()
    if not rows:
        return []
    quartile = rows[(len(rows) - 1) // 4][1]
    return [node for node, degree in rows if degree <= quartile][:REM_START_NODES]


def _owned_nodes(ctx: Context):
    return Memory.objects.filter(owner=ctx.owner, cube_id__in=ctx.cube_ids, deleted_at__isnull=True)


def _steps(ctx: Context, node: str) -> list[tuple[str, float, str, bool]]:
    """(neighbour, weight, link type, forward) for each link of the node to another of the owner's live nodes,
    in a fixed order. Raw SQL: a walk asks this at every hop, and the ORM took longer to build the statement
    (two ownership subqueries) than PostgreSQL to answer it."""
    memory, link = Memory._meta.db_table, MemoryLink._meta.db_table
    owned = "{0}.owner_id = %(owner)s AND {0}.cube_id = ANY(%(cubes)s) AND {0}.deleted_at IS NULL"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT l.source_id::text, l.target_id::text, l.weight, l.link_type FROM {link} l "
            f"JOIN {memory} s ON s.id = l.source_id JOIN {memory} t ON t.id = l.target_id "
            f"WHERE (l.source_id = %(node)s OR l.target_id = %(node)s) AND {owned.format('s')} AND {owned.format('t')} "
            f"ORDER BY l.id",
            {"node": node, "owner": ctx.owner.pk, "cubes": list(ctx.cube_ids)})
        rows = cursor.fetchall()
    return [(target, weight, link_type, True) if source == node else (source, weight, link_type, False)
            for source, target, weight, link_type in rows]


def walk(ctx: Context, start: str, rng: random.Random) -> list[dict]:
    """The hops of one walk from ``start``: [{"node", "weight", "type", "forward"}] (the start has no weight)."""
    hops = [{"node": start}]
    visited = {start}
    for _ in range(REM_HOPS):
        steps = [step for step in _steps(ctx, hops[-1]["node"]) if step[0] not in visited]
        if not steps:
            break
        chances = [math.exp(weight / REM_TEMPERATURE) for _, weight, _, _ in steps]
        node, weight, link_type, forward = rng.choices(steps, weights=chances)[0]
        hops.append({"node": node, "weight": weight, "type": link_type, "forward": forward})
        visited.add(node)
    return hops


def _near(ctx: Context, node: str, others: set[str]) -> set[str]:
    """Those of ``others`` within REM_PATH_HOPS links of ``node`` (either way, through the owner's live nodes in the
    run's cubes). One statement, a level per hop: a walk's neighbourhood three links out can hold thousands of
    nodes after NREM has linked the graph, and walking it from Python (a statement per level and per ownership
    check, every node sent back and forth) made REM walk 2-3 times a second."""
    if not others:
        return set()
    memory, link = Memory._meta.db_table, MemoryLink._meta.db_table

    def neighbours(level: str) -> str:
        return (f"SELECT l.target_id AS id FROM {link} l JOIN {level} f ON l.source_id = f.id UNION "
                f"SELECT l.source_id FROM {link} l JOIN {level} f ON l.target_id = f.id")

    levels = ["level0 AS (SELECT %(node)s::uuid AS id)"]
    for hop in range(1, REM_PATH_HOPS + 1):
        levels.append(f"level{hop} AS MATERIALIZED (SELECT n.id FROM ({neighbours(f'level{hop - 1}')}) n "
                      f"JOIN {memory} m ON m.id = n.id AND m.owner_id = %(owner)s AND m.cube_id = ANY(%(cubes)s) "
                      f"AND m.deleted_at IS NULL)")
    reached = " UNION ".join(f"SELECT id FROM level{hop}" for hop in range(REM_PATH_HOPS + 1))
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(levels)} SELECT id::text FROM ({reached}) r WHERE id = ANY(%(others)s::uuid[])",
                       {"node": node, "owner": ctx.owner.pk, "cubes": list(ctx.cube_ids), "others": list(others)})
        return {row[0] for row in cursor.fetchall()}


def _owned(ctx: Context, node_ids) -> set[str]:
    return {str(pk) for pk in _owned_nodes(ctx).filter(pk__in=list(node_ids)).values_list("pk", flat=True)}


def _linked(a: str, b: str) -> bool:
    return MemoryLink.objects.filter(Q(source_id=a, target_id=b) | Q(source_id=b, target_id=a)).exists()


def dream_walks(ctx: Context, cursor, size: int) -> Work:
    state = dict(ctx.state)
    work = Work(state=state)
    if "starts" not in state:
        state.update(starts=_starts(ctx), paths={})
    total = ctx.run.budget.get("synthetic_query_count", 0)
    start_index = cursor or 0
    indices = list(range(start_index, min(total, start_index + size)))
    work.items, work.cursor = len(indices), start_index + len(indices)
    work.done = work.cursor >= total
    if not state["starts"]:
        work.done, work.items = True, 0
        work.notes.append("REM: the graph has no node of yours to walk from.")
        return work
    leaps, spots, made = [], [], []
    spotted = set(state.get("spotted", []))
    for index in indices:
        rng = random.Random(f"{ctx.run.seed}:{index}")
        hops = walk(ctx, rng.choice(state["starts"]), rng)
        _count_paths(state["paths"], hops)
        last = hops[-1]["node"]
        walked = {hop["node"] for hop in hops}
        content = _owned_nodes(ctx).filter(pk=last).values_list("content", flat=True).first() or ""
        query = " ".join(content.split())[:REM_QUERY_CHARS]
        # Without diversity: the walk's own nodes come back first and are left out of the hits, but would lower the
        # score of every hit like them, and the blind spots read those scores (REM_THIN_SCORE).
        found = memory_retrieve(actor=ctx.owner, text=query, limit=REM_HITS + len(walked), reinforce=False,
                                diversify=False).items
        owned = _owned(ctx, [item.memory.pk for item in found])
        hits = [item for item in found if str(item.memory.pk) in owned and str(item.memory.pk) not in walked]
        hits = hits[:REM_HITS]
        near = _near(ctx, last, {str(item.memory.pk) for item in hits})
        linked = set()
        for hit in hits:
            target = str(hit.memory.pk)
            if hit.dense >= REM_LEAP_COSINE and target not in near and not _linked(last, target):
                made.append(MemoryLink.objects.create(
                    source_id=last, target_id=target, link_type=MemoryLink.LinkType.SEMANTIC, weight=REM_LEAP_WEIGHT,
                    origin=MemoryLink.Origin.REM))
                linked.add(target)
                leaps.append([last, target, round(hit.dense, 6)])
        best = hits[0] if hits else None
        kind = (BlindSpot.Kind.THIN if best is None or best.score < REM_THIN_SCORE else
                BlindSpot.Kind.DISCONNECTED if str(best.memory.pk) not in near | linked else None)
        if kind is not None and _new_spot(ctx, spotted, kind, last):
            spots.append(BlindSpot(
                owner=ctx.owner, run=ctx.run, kind=kind, query=query, node_ids=[hop["node"] for hop in hops],
                best_score=best.score if best else 0.0,
                hits=[{"node_id": str(hit.memory.pk), "score": round(hit.score, 6), "dense": round(hit.dense, 6)}
                      for hit in hits[:3]]))
    state["spotted"] = sorted(spotted)
    if work.done:
        made.extend(_shortcuts(state["paths"], work))
    BlindSpot.objects.bulk_create(spots)
    work.counters["walks"] += len(indices)
    work.counters["blind_spots_discovered"] += len(spots)
    work.counters["leaps_linked"] += len(leaps)
    work.made_links = [link.pk for link in made]
    work.detail.update(leaps=leaps, blind_spots=[str(spot.pk) for spot in spots])
    for link in made:
        work.touched |= {str(link.source_id), str(link.target_id)}
        work.relinked.add(str(link.source_id))
    if work.done and not state["paths"] and total:
        work.notes.append("REM: no walk went 3 links or more, so no path could earn a shortcut.")
    return work


def _new_spot(ctx: Context, spotted: set[str], kind: str, last: str) -> bool:
    """One blind spot of a kind per last node while it is open (this run's, or an earlier one still unresolved)."""
    key = f"{kind}:{last}"
    if key in spotted:
        return False
    spotted.add(key)
    return not any(str(node_ids[-1]) == last for node_ids in BlindSpot.objects.filter(
        owner=ctx.owner, kind=kind, resolved_at__isnull=True, node_ids__contains=[last]).values_list(
        "node_ids", flat=True))


def _count_paths(paths: dict, hops: list[dict]) -> None:
    """Count the walk's paths of REM_SHORTCUT_HOPS links or more from its start (the first walk's hops are kept)."""
    start = hops[0]["node"]
    for end in range(REM_SHORTCUT_HOPS, len(hops)):
        key = f"{start}>{hops[end]['node']}"
        known = paths.setdefault(key, {"count": 0, "hops": hops[1:end + 1]})
        known["count"] += 1


def _causal(hops: list[dict]) -> bool:
    return all(hop["type"] == MemoryLink.LinkType.CAUSAL and hop["forward"] for hop in hops)


def _shortcuts(paths: dict, work: Work) -> list[MemoryLink]:
    made = []
    # Causal ones first, then the most walked: of two paths between the same nodes, the better one wins.
    for key in sorted(paths, key=lambda key: (not _causal(paths[key]["hops"]), -paths[key]["count"], key)):
        path = paths[key]
        if path["count"] < REM_SHORTCUT_WALKS:
            continue
        start, end = key.split(">")
        if _linked(start, end):
            continue
        product = math.prod(hop["weight"] for hop in path["hops"])
        causal = _causal(path["hops"])
        made.append(MemoryLink.objects.create(
            source_id=start, target_id=end, weight=round(min(REM_SHORTCUT_MAX, REM_SHORTCUT_FACTOR * product), 6),
            link_type=MemoryLink.LinkType.CAUSAL if causal else MemoryLink.LinkType.SEMANTIC,
            origin=MemoryLink.Origin.SHORTCUT))
        work.detail.setdefault("shortcuts", []).append([start, end, path["count"], len(path["hops"])])
    work.counters["shortcuts_created"] += len(made)
    return made

