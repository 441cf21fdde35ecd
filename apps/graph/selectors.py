"""Reads of the live graph: the snapshot a page starts from, and the stored events a socket replays."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, IntegerField, Max, Min, Subquery, Sum, Window
from django.db.models.functions import Left

from apps.accounts.models import User
from apps.cognition.selectors.walks import Rule, Step, ball, readable_cube_ids
from apps.core.exceptions import InvalidInput
from apps.core.limits import NEIGHBOURHOOD_DEPTH, NEIGHBOURHOOD_NODES, SNAPSHOT_NODES
from apps.cubes.access import cube_get_readable, cube_ids_readable
from apps.graph.models import GraphEvent
from apps.memories.models import CubeLexeme, Memory, MemoryLink
from apps.memories.selectors import memory_get

PREVIEW_CHARS = 200
DEFAULT_SNAPSHOT_NODES = SNAPSHOT_NODES.default
MAX_SNAPSHOT_NODES = SNAPSHOT_NODES.high
NODE_COLUMNS = ("id", "kind", "primary_sector", "importance", "strength", "salience", "created_at", "cube_id", "tags",
                "keywords")
# Enough of a node's keywords to name the cluster it falls in (the page's legend), few enough to keep a node small.
NODE_KEYWORDS = 5
EDGE_COLUMNS = ("source_id", "target_id", "link_type", "weight")


def node_payload(memory) -> dict:
    """A graph node from a Memory, or from a row of NODE_COLUMNS plus ``preview``."""
    row = memory if isinstance(memory, dict) else {
        **{column: getattr(memory, column) for column in NODE_COLUMNS}, "preview": memory.content[:PREVIEW_CHARS],
    }
    return {
        "id": str(row["id"]), "content": row["preview"], "kind": row["kind"], "sector": row["primary_sector"],
        "importance": row["importance"], "strength": row["strength"], "salience": row["salience"],
        "created_at": row["created_at"].isoformat(), "cube": row["cube_id"], "tags": row["tags"],
        "keywords": row["keywords"][:NODE_KEYWORDS],
    }


def edge_payload(*, source_id, target_id, link_type, weight) -> dict:
    return {"source": str(source_id), "target": str(target_id), "type": link_type, "weight": weight}


@dataclass(frozen=True)
class GraphSnapshot:
    """Nodes and edges as JSON text, written by PostgreSQL: the REST view sends them as they are, with no
    Python dict to build and render per node or edge (docs/benchmarks.md#live-graph)."""

    nodes_json: str
    edges_json: str
    total_nodes: int
    shown_nodes: int
    last_event_id: int

    @property
    def nodes(self) -> list[dict]:
        return json.loads(self.nodes_json)

    @property
    def edges(self) -> list[dict]:
        return json.loads(self.edges_json)


# One statement over the shown nodes (the filtered, capped node query as a CTE): their total, their count,
# and the nodes and the links among them as JSON arrays, in node_payload's and edge_payload's shapes.
SNAPSHOT_SQL = """
WITH shown AS ({nodes})
SELECT coalesce(max(total), 0), count(*),
       coalesce(json_agg(json_build_object(
           'id', id, 'content', preview, 'kind', kind, 'sector', primary_sector, 'importance', importance,
           'strength', strength, 'salience', salience,
           -- datetime.isoformat()'s form: the fraction only when there is one.
           'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
               || CASE WHEN date_trunc('second', created_at) = created_at THEN ''
                       ELSE to_char(created_at AT TIME ZONE 'UTC', '.US') END || '+00:00',
           'cube', cube_id, 'tags', tags, 'keywords', keywords[1:{node_keywords}])
           ORDER BY created_at DESC, id), '[]')::text,
       (SELECT coalesce(json_agg(json_build_object(
                   'source', link.source_id, 'target', link.target_id, 'type', link.link_type, 'weight', link.weight)
                   ORDER BY link.id), '[]')::text
        FROM {links} AS link
        WHERE link.source_id IN (SELECT id FROM shown) AND link.target_id IN (SELECT id FROM shown))
FROM shown
"""


def graph_snapshot(*, actor: User, cube_id: str | None = None, kind: str | None = None, sector: str | None = None,
                   tag: str | None = None, min_strength: float | None = None, date_from: datetime | None = None,
                   date_to: datetime | None = None, limit: int = DEFAULT_SNAPSHOT_NODES) -> GraphSnapshot:
    """The live memories the actor may read (one cube, or all readable ones), newest first, at most
    ``limit`` of them, with the links among them: one statement (SNAPSHOT_SQL) after the last event id.
    ``tag`` keeps the memories that carry that tag (exactly as stored).

    ``last_event_id`` is read first: subscribing with ``since`` set to it replays every change made
    while the snapshot was being read (a change may then arrive twice; applying it is idempotent)."""
    if not 1 <= limit <= MAX_SNAPSHOT_NODES:
        raise InvalidInput(f"limit must be between 1 and {MAX_SNAPSHOT_NODES}.", field="limit")
    last_event_id = GraphEvent.objects.aggregate(last=Max("id"))["last"] or 0
    memories = Memory.objects.filter(deleted_at__isnull=True)
    if cube_id is not None:
        cube_ids = [cube_get_readable(actor=actor, cube_id=cube_id).pk]
    else:
        cube_ids = cube_ids_readable(actor=actor)
    memories = memories.filter(cube_id__in=cube_ids)
    if not (kind or sector or tag or min_strength is not None or date_from or date_to):
        # Every live memory of the cubes: the triggers' count (CubeLexeme.LIVE_MEMORIES), not a count of rows.
        total = Subquery(
            CubeLexeme.objects.filter(cube_id__in=cube_ids, lexeme=CubeLexeme.LIVE_MEMORIES).values("lexeme")
            .annotate(documents=Sum("documents")).values("documents"),
            output_field=IntegerField(),
        )
    else:
        total = Window(Count("id"))
    if kind:
        memories = memories.filter(kind=kind)
    if sector:
        memories = memories.filter(primary_sector=sector)
    if tag:
        memories = memories.filter(tags__contains=[tag])
    if min_strength is not None:
        memories = memories.filter(strength__gte=min_strength)
    if date_from:
        memories = memories.filter(created_at__gte=date_from)
    if date_to:
        memories = memories.filter(created_at__lte=date_to)
    nodes = (
        memories.order_by("-created_at", "id")
        .annotate(preview=Left("content", PREVIEW_CHARS), total=total)
        .values(*NODE_COLUMNS, "preview", "total")[:limit]
    )
    nodes_sql, params = nodes.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(SNAPSHOT_SQL.format(nodes=nodes_sql, links=MemoryLink._meta.db_table,
                                          node_keywords=NODE_KEYWORDS), params)
        total_nodes, shown_nodes, nodes_json, edges_json = cursor.fetchone()
    return GraphSnapshot(nodes_json=nodes_json, edges_json=edges_json, total_nodes=total_nodes,
                         shown_nodes=shown_nodes, last_event_id=last_event_id)


# A local graph walks every link type both ways: what links to a memory belongs to it as much as what it links to.
EITHER_WAY = Rule(forward=None, backward=None)


@dataclass(frozen=True)
class Neighbourhood:
    """A memory's local graph: its nodes (node_payload plus ``depth``, the fewest links from the centre; the centre
    first, then nearest and strongest first) and the links among them. ``capped``: memories within ``depth`` were
    left out, by ``limit`` or by the walk's bound on links read a hop."""

    centre_id: str
    depth: int
    limit: int
    nodes: list[dict]
    edges: list[dict]
    capped: bool


def graph_neighbourhood(*, actor: User, memory_id, depth: int | None = None,
                        limit: int | None = None) -> Neighbourhood:
    """The live memories the actor may read within ``depth`` links of a memory the actor may read (links of every
    type, followed either way), and the links among them. At most ``limit`` nodes, the memory included: all of
    depth 1 before any of depth 2, and within a depth the strongest first (the best product of link weights from
    the memory). At most depth + 4 statements, whatever the graph's size: the memory, the readable cubes, one a
    hop (cognition's walk, which reads at most ``limit`` nodes' links), the nodes, the links among them."""
    depth = NEIGHBOURHOOD_DEPTH.clean(depth, field="depth")
    limit = NEIGHBOURHOOD_NODES.clean(limit, field="limit")
    centre = str(memory_get(actor=actor, memory_id=memory_id).pk)
    read = ball(sources={centre: 1.0}, readable=readable_cube_ids(actor=actor), rule=EITHER_WAY, hops=depth,
                max_nodes=limit)
    hops = _hops_from(centre, read.steps)
    shown = sorted(hops, key=lambda node: (hops[node], -read.reached[node], node))[:limit]
    nodes = Memory.objects.filter(pk__in=shown).annotate(preview=Left("content", PREVIEW_CHARS))
    rows = {str(row["id"]): row for row in nodes.values(*NODE_COLUMNS, "preview")}
    links = MemoryLink.objects.filter(source_id__in=shown, target_id__in=shown).order_by("-weight", "id")
    return Neighbourhood(
        centre_id=centre, depth=depth, limit=limit,
        nodes=[{**node_payload(rows[node]), "depth": hops[node]} for node in shown if node in rows],
        edges=[edge_payload(**row) for row in links.values(*EDGE_COLUMNS)],
        capped=read.truncated or len(hops) > limit,
    )


def _hops_from(centre: str, steps: dict[str, list[Step]]) -> dict[str, int]:
    """Each node the walk reached -> the fewest links between it and the centre (breadth first over its steps)."""
    hops, level = {centre: 0}, [centre]
    while level:
        following = []
        for node in level:
            for step in steps.get(node, ()):
                if step.to not in hops:
                    hops[step.to] = hops[node] + 1
                    following.append(step.to)
        level = following
    return hops


@dataclass(frozen=True)
class Replay:
    events: list[GraphEvent]
    # False when events after `since` were pruned or exceed the limit: the client must reload the snapshot.
    complete: bool


def graph_events_since(*, actor: User, cube_id: str, since: int, limit: int) -> Replay:
    """Stored events of a readable cube after ``since``, oldest first, at most ``limit``."""
    oldest = GraphEvent.objects.aggregate(oldest=Min("id"))["oldest"]
    if oldest is not None and since < oldest - 1:
        return Replay(events=[], complete=False)
    events = list(
        GraphEvent.objects.filter(cube_id=cube_id, cube_id__in=cube_ids_readable(actor=actor), id__gt=since)
        .order_by("id")[:limit + 1]
    )
    return Replay(events=events[:limit], complete=len(events) <= limit)


def graph_event_get(*, actor: User, event_id: int) -> GraphEvent | None:
    return GraphEvent.objects.filter(pk=event_id, cube_id__in=cube_ids_readable(actor=actor)).first()
