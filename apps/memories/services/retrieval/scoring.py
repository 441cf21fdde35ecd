"""Scoring: the weights of relevance and of the composite score, defined here once, and the statements
that score a pool of candidates with them (docs/retrieval.md, "The score").

relevance = DENSE_WEIGHT x dense + LEXICAL_WEIGHT x lexical, plus LABEL_WEIGHT when the memory opens with a label
that is a query word and DATE_WEIGHT when it was created on a date the query names; a retrieval then adds its best
hits' rarer words to the lexical score (FEEDBACK_*) and NEIGHBOUR_WEIGHT x a best hit's relevance to that hit's
session neighbours (follow_up), and takes its best DIVERSITY_DEPTH again with DIVERSITY_WEIGHT (diversify).
score = WITH_QUERY's weights of relevance, salience, recency and link weight, or WITHOUT_QUERY's when there is no
text. recency = max(0, 1 - age / 365 days); link weight = mean weight of the
memory's links.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import F, FloatField
from django.db.models.expressions import RawSQL
from django.utils import timezone
import numpy as np
from pgvector import HalfVector

from apps.core.halfvec import halfvec_text
from apps.memories.models import CubeLexeme, Memory, MemoryLink, MemoryVector
from apps.memories.vectors import HNSW_EF_SEARCH, sector_similarity_sql, vector_scan_settings

from .dates import DateWindows
from .lexical import LexicalModel

# Relevance fuses the dense and the lexical score (measured on LoCoMo, docs/retrieval.md). The boosts below were
# fitted on LoCoMo's tuning fold and kept because they also help its held fold (docs/retrieval.md, "Boosts").
DENSE_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
# A memory whose text opens with a one-word label that the query names ("Caroline: ..." in a transcript, asked
# "What does Caroline paint?") is that person's own line, not a line that mentions them (docs/retrieval.md, "Boosts").
LABEL_WEIGHT = 0.2
LABEL_CHARS = 40
# A memory created within a date the query names ("on 16 November, 2023", "in May 2022", "in June": dates.py).
DATE_WEIGHT = 0.1
# Retrieve only: a pool memory within SESSION_NEIGHBOURS memories (same cube and session, in created_at order) of
# one of the SESSION_SEEDS best hits gains NEIGHBOUR_WEIGHT x that hit's relevance: an answer sits next to its
# question, a detail next to what it explains.
SESSION_SEEDS = 10
SESSION_NEIGHBOURS = 2
NEIGHBOUR_WEIGHT = 0.2
# Retrieve only, pseudo-relevance feedback: the FEEDBACK_WORDS rarest lexemes of the FEEDBACK_HITS best hits that
# the query lacks (held by at least two memories: a word only the hit holds finds nothing else) join the lexical
# score at FEEDBACK_WEIGHT x their IDF. The evidence a question needs often shares words with its best hit rather
# than with the question (asked which books someone read, the hit names a title that other turns name too).
FEEDBACK_HITS = 3
FEEDBACK_WORDS = 10
FEEDBACK_WEIGHT = 0.2
# Retrieve only, diversity (maximal marginal relevance): the best DIVERSITY_DEPTH are taken again one at a time, each
# next one by its score less DIVERSITY_WEIGHT x its highest cosine to those already taken, so that a near-copy of a
# hit gives way to a memory that adds something.
DIVERSITY_DEPTH = 20
DIVERSITY_WEIGHT = 0.1


@dataclass(frozen=True)
class Weights:
    """The weights of a composite score's parts."""

    relevance: float
    salience: float
    recency: float
    link_weight: float

    def __str__(self) -> str:
        """The formula, e.g. "0.9 relevance + 0.05 salience + 0.05 recency" (terms weighing 0 left out)."""
        parts = {"relevance": self.relevance, "salience": self.salience, "recency": self.recency,
                 "link weight": self.link_weight}
        return " + ".join(f"{weight:g} {name}" for name, weight in parts.items() if weight)


# The composite score with a query, and the order of memories without one. ThoughtMCP weighs 0.6 relevance + 0.2
# salience + 0.1 recency + 0.1 link weight; refitted on LoCoMo's tuning fold and checked on its held fold and on the
# multi-session benchmark, the query-blind terms cost recall (link weight most: it favours chatty, well-linked
# memories), so relevance carries the score and salience and recency only break near-ties (docs/retrieval.md).
WITH_QUERY = Weights(relevance=0.9, salience=0.05, recency=0.05, link_weight=0.0)
WITHOUT_QUERY = Weights(relevance=0.0, salience=0.4, recency=0.3, link_weight=0.3)
YEAR_SECONDS = 365 * 86400.0
MEMORIES, VECTORS, LINKS = (model._meta.db_table for model in (Memory, MemoryVector, MemoryLink))


@dataclass
class ScoredMemory:
    memory: Memory
    score: float
    relevance: float = 0.0
    dense: float = 0.0
    lexical: float = 0.0
    recency: float = 0.0
    link_weight: float = 0.0
    highlight: str = ""
    matched_terms: list[str] = field(default_factory=list)
    # The memory holds one of the query's own words (lexical may also count the feedback words of a retrieval).
    shares_a_word: bool = False


@dataclass(slots=True)
class PoolScore:
    """A pool memory's scores, before its row is loaded: only the page's rows are."""

    pk: object
    created: float  # created_at in seconds since the epoch, which breaks ties (a float loads faster than a datetime)
    score: float
    relevance: float
    dense: float
    lexical: float
    recency: float
    link_weight: float
    in_session: bool = False  # the memory has a session_id: its neighbours are looked up when it is a best hit
    lexical_raw: float = 0.0  # the lexical score before it is divided by the pool's best (feedback adds to it)


def _recency_sql(table: str) -> str:
    """recency = max(0, 1 - age / 365 days) of a row of `table` (an alias or quoted name); params: now, YEAR_SECONDS."""
    return f"GREATEST(0, 1 - EXTRACT(EPOCH FROM (%s - {table}.created_at))::float8 / %s)"


def _link_weight_sql(table: str) -> str:
    """The mean weight of a memory's links, both directions; 0 for a memory with none. Two branches, one per
    direction, so that each reads its own index (an OR of the two scanned every link for every memory)."""
    return (f"COALESCE((SELECT avg(l.weight) FROM (SELECT weight FROM {LINKS} WHERE source_id = {table}.id "
            f"UNION ALL SELECT weight FROM {LINKS} WHERE target_id = {table}.id) AS l), 0)")


def score_pool(base, *, model: LexicalModel, vector, sectors, pool_ids, now, nearest: int = 0,
               ef_search: int = HNSW_EF_SEARCH, dates: DateWindows | None = None) -> list[PoolScore]:
    """Every memory of the pool scored exactly, in one statement: its best cosine over `sectors`' vectors
    (derived from its one stored vector, apps/memories/sectors.py), its lexical score, recency and link
    weight, whether its label is a query word and whether it was created within `dates`. Best first. The pool is `pool_ids` (they come from `base`) plus, with `nearest`, the `nearest`
    memories of `base` whose vectors are nearest the query, found through the HNSW index (an iterative scan with
    `ef_search`, set in the same round trip) in the same statement. Raw SQL: through the ORM, building this
    statement and reading its rows would take longer than PostgreSQL takes to run it
    (docs/benchmarks.md#retrieve-and-search-latency)."""
    query_vector = halfvec_text(vector)
    params: list = []
    settings, ctes = "", ""
    pool_sql = "SELECT unnest(%s::uuid[])"
    if nearest:
        try:
            scope_sql, scope_params = base.order_by().values("pk").query.sql_with_params()
        except EmptyResultSet:  # no readable cube: nothing to score
            return []
        ctes = (f"WITH nearest AS MATERIALIZED (SELECT e.memory_id FROM {VECTORS} e WHERE e.memory_id IN ({scope_sql}) "
                "ORDER BY e.embedding <=> %s::halfvec LIMIT %s) ")
        settings, params = vector_scan_settings(ef_search)
        params += [*scope_params, query_vector, nearest]
        pool_sql = f"SELECT memory_id FROM nearest UNION {pool_sql}"
    dated_sql, dated_params = "false", []
    if dates:
        dated_sql = ("(EXISTS (SELECT 1 FROM unnest(%s::timestamptz[], %s::timestamptz[]) AS w(s, e) "
                     "WHERE m.created_at >= w.s AND m.created_at < w.e) "
                     "OR EXTRACT(MONTH FROM m.created_at AT TIME ZONE 'UTC')::int = ANY(%s::int[]))")
        dated_params = [dates.starts, dates.ends, dates.months]
    lexical = model.score_sql()
    dense, dense_params = sector_similarity_sql(vector, sectors, vector="e.embedding", tokens="e.tokens",
                                                similarity="e.similarity")
    # The content vector's cosine is computed once per row (OFFSET 0 keeps PostgreSQL from copying the
    # expression into each sector's term): the sectors' terms all start from it.
    sql = (
        f"{settings}{ctes}SELECT m.id, EXTRACT(EPOCH FROM m.created_at)::float8, m.salience, "
        f"{_recency_sql('m')}, {_link_weight_sql('m')}, "
        f"{lexical.sql}, COALESCE({dense}, 0), "
        f"lower(split_part(left(m.content, {LABEL_CHARS + 1}), ':', 1)) = ANY(%s::text[]), m.session_id <> '', "
        f"{dated_sql} "
        f"FROM {MEMORIES} m LEFT JOIN LATERAL (SELECT v.embedding, v.tokens, 1 - (v.embedding <=> %s::halfvec) "
        f"AS similarity FROM {VECTORS} v WHERE v.memory_id = m.id OFFSET 0) e ON true WHERE m.id IN ({pool_sql})"
    )
    params += [now, YEAR_SECONDS, *lexical.params, *dense_params, list(model.words), *dated_params, query_vector,
               list(pool_ids)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if settings:
            cursor.nextset()
        rows = cursor.fetchall()
    best_lexical = max((row[5] for row in rows), default=0.0) or 1.0
    weights = WITH_QUERY
    scored = []
    for pk, created, salience, recency, link_weight, lexical_raw, dense, labelled, in_session, dated in rows:
        dense_score = max(0.0, dense)
        lexical_score = lexical_raw / best_lexical
        relevance = (DENSE_WEIGHT * dense_score + LEXICAL_WEIGHT * lexical_score + (LABEL_WEIGHT if labelled else 0.0)
                     + (DATE_WEIGHT if dated else 0.0))
        score = (weights.relevance * relevance + weights.salience * salience + weights.recency * recency
                 + weights.link_weight * link_weight)
        scored.append(PoolScore(pk=pk, created=created, score=round(score, 4), relevance=round(relevance, 4),
                                dense=round(dense_score, 4), lexical=round(lexical_score, 4),
                                recency=round(recency, 4), link_weight=round(link_weight, 4), in_session=in_session,
                                lexical_raw=lexical_raw))
    scored.sort(key=lambda item: (item.score, item.created), reverse=True)
    return scored


def follow_up(ranked: list[PoolScore], *, model: LexicalModel, cube_ids: list[str]) -> list[PoolScore]:
    """A retrieval's pool re-ranked from its best hits, in one statement (docs/retrieval.md, "Boosts"): feedback
    words first (FEEDBACK_*), then session neighbours: each pool memory within
    SESSION_NEIGHBOURS memories of one of the SESSION_SEEDS best (same cube and session_id, ordered by created_at
    then id, so that memories stored at one instant keep an order) gains NEIGHBOUR_WEIGHT x the best such hit's
    relevance. The feedback words' counts come from CubeLexeme (a few index reads), the neighbours from two short
    reads of memory_cube_session_created per hit; only pool memories gain, so every one was in the request's scope."""
    if not ranked:
        return ranked
    seeds = [seed for seed in ranked[:SESSION_SEEDS] if seed.in_session] if NEIGHBOUR_WEIGHT else []
    side = (f"SELECT x.id FROM {MEMORIES} x WHERE x.cube_id = s.cube_id AND x.session_id = s.session_id "
            f"AND x.deleted_at IS NULL AND (x.created_at, x.id) {{}} (s.created_at, s.id) "
            f"ORDER BY x.created_at {{}}, x.id {{}} LIMIT %s")
    sql = (
        f"WITH pool AS (SELECT unnest(%s::uuid[]) AS id), "
        f"hit_lexemes AS (SELECT DISTINCT unnest(tsvector_to_array(search_vector)) AS lexeme FROM {MEMORIES} "
        f"WHERE id = ANY(%s::uuid[])), "
        f"feedback AS (SELECT c.lexeme, sum(c.documents) AS documents FROM {CubeLexeme._meta.db_table} c "
        f"JOIN hit_lexemes h ON h.lexeme = c.lexeme WHERE c.cube_id = ANY(%s::varchar[]) AND length(c.lexeme) > 1 "
        f"AND c.lexeme <> ALL(%s::text[]) GROUP BY c.lexeme HAVING sum(c.documents) >= 2 "
        f"ORDER BY 2, 1 LIMIT %s) "
        f"SELECT m.id, NULL::uuid, sum(ln(1 + (%s - f.documents + 0.5) / (f.documents + 0.5)))::float8 "
        f"FROM {MEMORIES} m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search_vector)) AS l(lexeme) "
        f"JOIN feedback f ON f.lexeme = l.lexeme WHERE m.id IN (SELECT id FROM pool) GROUP BY m.id "
        f"UNION ALL SELECT s.id, n.id, NULL FROM {MEMORIES} s CROSS JOIN LATERAL "
        f"(({side.format('<', 'DESC', 'DESC')}) UNION ALL ({side.format('>', 'ASC', 'ASC')})) AS n(id) "
        f"WHERE s.id = ANY(%s::uuid[]) AND n.id IN (SELECT id FROM pool)"
    )
    params = [[item.pk for item in ranked], [item.pk for item in ranked[:FEEDBACK_HITS] if FEEDBACK_WEIGHT],
              list(cube_ids), list(model.lexemes), FEEDBACK_WORDS, max(model.scope_size, 2),
              SESSION_NEIGHBOURS, SESSION_NEIGHBOURS, [seed.pk for seed in seeds]]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    feedback = {pk: FEEDBACK_WEIGHT * raw for pk, neighbour, raw in rows if neighbour is None}
    if feedback:  # the lexical score is relative to the pool's best again, feedback included
        best = max(item.lexical_raw + feedback.get(item.pk, 0.0) for item in ranked) or 1.0
        for item in ranked:
            lexical = (item.lexical_raw + feedback.get(item.pk, 0.0)) / best
            _add_relevance(item, LEXICAL_WEIGHT * (lexical - item.lexical))
            item.lexical = round(lexical, 4)
    seed_relevance = {seed.pk: seed.relevance for seed in seeds}
    gain: dict = {}
    for seed, neighbour, _ in rows:
        if neighbour is not None:
            gain[neighbour] = max(gain.get(neighbour, 0.0), NEIGHBOUR_WEIGHT * seed_relevance[seed])
    for item in ranked:
        _add_relevance(item, gain.get(item.pk, 0.0))
    ranked.sort(key=lambda item: (item.score, item.created), reverse=True)
    return ranked


def _add_relevance(item: PoolScore, added: float) -> None:
    item.relevance = round(item.relevance + added, 4)
    item.score = round(item.score + WITH_QUERY.relevance * added, 4)


def page(ranked: list[PoolScore], *, limit: int, offset: int, include_deleted: bool = False,
         diversified: bool = False) -> list[ScoredMemory]:
    """The page's memories with their scores: only their rows are loaded. The pool was drawn from the request's
    scope, so the rows are read by id (a raw statement: building the scope's filters again through the ORM took
    longer than PostgreSQL takes to answer), and only a deletion can have changed since: one committed between the
    statements leaves the page. `diversified`: the best DIVERSITY_DEPTH are read too, with their vectors, and taken
    again (diversify) before the page is cut, in the same statement."""
    read = ranked[offset:offset + limit]
    if diversified:
        read = ranked[:DIVERSITY_DEPTH] + ranked[max(offset, DIVERSITY_DEPTH):offset + limit]
    rows = Memory.objects.raw(_page_sql(include_deleted, diversified), [[item.pk for item in read]])
    memories = {memory.pk: memory for memory in rows}
    if diversified:
        vectors = {}
        for pk, memory in memories.items():
            data = memory.__dict__.pop("content_vector")  # not a field: it stays off the memory handed on
            if data is not None:
                vectors[pk] = HalfVector.from_binary(data).to_numpy()
        ranked = diversify(ranked, vectors)
    chosen = ranked[offset:offset + limit]
    return [ScoredMemory(memory=memories[item.pk], score=item.score, relevance=item.relevance, dense=item.dense,
                         lexical=item.lexical, recency=item.recency, link_weight=item.link_weight,
                         shares_a_word=item.lexical_raw > 0)
            for item in chosen if item.pk in memories]


def diversify(ranked: list[PoolScore], vectors: dict) -> list[PoolScore]:
    """The best DIVERSITY_DEPTH of `ranked` (best first) taken again one at a time, each next one the best by its
    score less DIVERSITY_WEIGHT x its highest cosine to those taken before it (`vectors`: memory id -> content
    vector; a memory without one, deleted since it was scored, is taken as unlike the rest). Each taken memory's
    score becomes that value, so scores still fall with rank; a memory below the depth keeps its place, its score
    capped at the last taken one's."""
    head = ranked[:DIVERSITY_DEPTH]
    known = [index for index, item in enumerate(head) if item.pk in vectors]
    if not DIVERSITY_WEIGHT or len(known) < 2:
        return ranked
    matrix = np.array([vectors[head[index].pk] for index in known], dtype=np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    cosines = np.zeros((len(head), len(head)))
    cosines[np.ix_(known, known)] = matrix @ matrix.T
    cosines = cosines.tolist()  # twenty steps over twenty floats: plain Python is faster than numpy's per-call cost
    closest = [0.0] * len(head)  # each memory's highest cosine to those taken so far
    remaining, taken = list(range(len(head))), []
    while remaining:
        # max keeps the first of equal values: a tie goes to the memory ranked higher before.
        best = max(remaining, key=lambda index: head[index].score - DIVERSITY_WEIGHT * closest[index])
        head[best].score = round(head[best].score - DIVERSITY_WEIGHT * closest[best], 4)
        remaining.remove(best)
        taken.append(head[best])
        closest = [max(a, b) for a, b in zip(closest, cosines[best])]
    for item in ranked[DIVERSITY_DEPTH:]:
        item.score = min(item.score, taken[-1].score)
    return taken + ranked[DIVERSITY_DEPTH:]


@functools.cache
def _page_sql(include_deleted: bool, vectors: bool = False) -> str:
    # search_vector (generated from the content, a few KB a row) is left deferred: nothing after a retrieval reads it.
    columns = ", ".join(f'm."{field.column}"' for field in Memory._meta.concrete_fields
                        if field.name != "search_vector")
    live = "" if include_deleted else " AND m.deleted_at IS NULL"
    if vectors:  # read in binary: pgvector's text form takes longer to send and to parse
        return (f"SELECT {columns}, halfvec_send(v.embedding) AS content_vector FROM {MEMORIES} m "
                f"LEFT JOIN {VECTORS} v ON v.memory_id = m.id WHERE m.id = ANY(%s::uuid[]){live}")
    return f"SELECT {columns} FROM {MEMORIES} m WHERE m.id = ANY(%s::uuid[]){live}"


def without_query(base, *, limit, offset) -> list[ScoredMemory]:
    """A page of `base` by WITHOUT_QUERY's score, newest first among equals."""
    table = f'"{MEMORIES}"'
    weights = WITHOUT_QUERY
    ranked = (
        base.annotate(recency=RawSQL(_recency_sql(table), (timezone.now(), YEAR_SECONDS), output_field=FloatField()),
                      link_weight=RawSQL(_link_weight_sql(table), (), output_field=FloatField()))
        .annotate(composite=weights.salience * F("salience") + weights.recency * F("recency")
                  + weights.link_weight * F("link_weight"))
        .order_by("-composite", "-created_at")[offset:offset + limit]
    )
    return [ScoredMemory(memory=m, score=round(m.composite, 4), recency=round(m.recency, 4),
                         link_weight=round(m.link_weight, 4)) for m in ranked]
