"""What the immune system and the critique read of the graph: the live, unquarantined nodes of the cubes the actor
may read, the nodes nearest several vectors at once, where the graph's vectors lie around their centroid, directed
causal paths, and the quarantine awaiting review. Reads only; every one starts from the actor's cubes."""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Exists, OuterRef, QuerySet

from apps.accounts.models import User
from apps.core.halfvec import halfvec_text
from apps.cognition.models import Event, NodeProfile
from apps.cubes.access import cube_ids_readable, cube_ids_writable
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.vectors import EXACT_SCOPE_MEMORIES, filtered_vector_scan, vector_text

VECTORS = MemoryVector._meta.db_table


def quarantined(outer: str = "pk") -> Exists:
    """True for a memory (``outer`` names its id in the enclosing query) held in quarantine: read through the partial
    index on quarantined profiles, so the few quarantined rows are all it touches."""
    return Exists(NodeProfile.objects.filter(memory_id=OuterRef(outer), quarantined=True))


def readable_cube_ids(actor: User) -> list[str]:
    return list(cube_ids_readable(actor=actor).values_list("id", flat=True))


def live_nodes(cube_ids: list[str], *, exclude_id=None) -> QuerySet[Memory]:
    """The live, unquarantined memories of ``cube_ids`` (the new node of a store left out)."""
    scope = Memory.objects.filter(cube_id__in=cube_ids, deleted_at__isnull=True).filter(~quarantined())
    return scope.exclude(pk=exclude_id) if exclude_id is not None else scope


def nearest_nodes(scope: QuerySet[Memory], vectors: list, *, k: int) -> list[list[tuple[str, float]]]:
    """For each vector, the ``k`` memories of ``scope`` whose content vectors are nearest, with their cosine, best
    first: one statement for all the vectors, compared exactly in a small scope and through HNSW in a large one."""
    if not vectors:
        return []
    try:
        scope_sql, scope_params = scope.order_by().values("pk").query.sql_with_params()
    except EmptyResultSet:  # no readable cube
        return [[] for _ in vectors]
    exact = scope[:EXACT_SCOPE_MEMORIES + 1].count() <= EXACT_SCOPE_MEMORIES
    nearest = (f"SELECT v.memory_id, v.embedding <=> n.q AS distance FROM {VECTORS} v "
               f"WHERE v.memory_id IN ({scope_sql})")
    if exact:  # OFFSET 0 keeps the exact comparison off the index
        nearest = f"SELECT * FROM ({nearest} OFFSET 0) AS compared"
    sql = (f"SELECT n.ord - 1, c.memory_id, 1 - c.distance FROM unnest(%s::halfvec[]) WITH ORDINALITY AS n(q, ord) "
           f"CROSS JOIN LATERAL ({nearest} ORDER BY distance LIMIT %s) AS c ORDER BY 1, 3 DESC")
    params = [[halfvec_text(vector) for vector in vectors], *scope_params, k]
    found: list[list[tuple[str, float]]] = [[] for _ in vectors]
    if exact:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    else:
        with filtered_vector_scan(), connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    for index, memory_id, cosine in rows:
        found[index].append((str(memory_id), float(cosine)))
    return found


@dataclass(frozen=True)
class CentroidDistances:
    nodes: int
    # The sampled nodes' cosine distances to their centroid (mean, population standard deviation), and the given
    # vector's; None without nodes.
    mean: float | None
    sd: float | None
    distance: float | None


def centroid_distances(scope: QuerySet[Memory], vector, *, sample: int) -> CentroidDistances:
    """Where ``vector`` lies from the centroid of the latest ``sample`` memories of ``scope``, beside where they
    lie from it: one statement, bounded by the sample whatever the graph's size."""
    try:
        sample_sql, sample_params = (scope.order_by("-created_at").values("pk")[:sample]
                                     .query.sql_with_params())
    except EmptyResultSet:
        return CentroidDistances(0, None, None, None)
    sql = (f"WITH sample AS MATERIALIZED (SELECT v.embedding::vector AS e FROM {VECTORS} v "
           f"WHERE v.memory_id IN ({sample_sql})), "
           "centroid AS MATERIALIZED (SELECT avg(e) AS c, count(*) AS n FROM sample), "
           "distances AS (SELECT s.e <=> centroid.c AS d FROM sample s, centroid) "
           "SELECT centroid.n, (SELECT avg(d) FROM distances), (SELECT stddev_pop(d) FROM distances), "
           "%s::vector <=> centroid.c FROM centroid")
    with connection.cursor() as cursor:
        cursor.execute(sql, [*sample_params, vector_text(vector)])
        nodes, mean, sd, distance = cursor.fetchone()
    if not nodes:
        return CentroidDistances(0, None, None, None)
    return CentroidDistances(int(nodes), float(mean), float(sd), float(distance))


def causal_path(*, cube_ids: list[str], start: str, goal: str, max_hops: int, max_nodes: int) -> list[str] | None:
    """A directed path of causal links from ``start`` to ``goal`` through live memories of ``cube_ids`` (the
    fewest hops; strongest links first among equals), or None within ``max_hops`` hops and ``max_nodes`` nodes.
    One statement a hop."""
    start, goal = str(start), str(goal)
    if start == goal:
        return [start]
    parent: dict[str, str | None] = {start: None}
    frontier = [start]
    for _ in range(max_hops):
        if not frontier:
            return None
        rows = (MemoryLink.objects.filter(source_id__in=frontier, link_type=MemoryLink.LinkType.CAUSAL,
                                          target__cube_id__in=cube_ids, target__deleted_at__isnull=True)
                .order_by("-weight", "target_id").values_list("source_id", "target_id"))
        reached = []
        for source, target in rows:
            source, target = str(source), str(target)
            if target in parent:
                continue
            parent[target] = source
            if target == goal:
                path = [goal]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1]
            reached.append(target)
            if len(parent) >= max_nodes:
                return None
        frontier = reached
    return None


def causal_links(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """The causal links among ``pairs`` (source, target), with their weights."""
    if not pairs:
        return {}
    sources = {source for source, _ in pairs}
    targets = {target for _, target in pairs}
    wanted = set(pairs)
    rows = MemoryLink.objects.filter(source_id__in=sources, target_id__in=targets,
                                     link_type=MemoryLink.LinkType.CAUSAL).values_list("source_id", "target_id",
                                                                                       "weight")
    return {(str(s), str(t)): w for s, t, w in rows if (str(s), str(t)) in wanted}


def quarantine_list(*, actor: User) -> QuerySet[NodeProfile]:
    """The live quarantined nodes the actor may review (release or forget): those of the cubes they may write,
    newest first."""
    return (NodeProfile.objects.filter(quarantined=True, memory__deleted_at__isnull=True,
                                       memory__cube_id__in=cube_ids_writable(actor=actor))
            .select_related("memory").defer("memory__search_vector").order_by("-memory__created_at", "memory_id"))


def quarantine_blocks(node_ids: list) -> dict[str, Event]:
    """The latest adversarial_block Event of each node: why it was quarantined."""
    events = (Event.objects.filter(action=Event.Action.ADVERSARIAL_BLOCK, node_ids__overlap=list(node_ids))
              .order_by("created_at", "id")) if node_ids else []
    return {str(node): event for event in events for node in event.node_ids}
