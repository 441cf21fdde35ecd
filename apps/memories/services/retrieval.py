"""Finding memories: composite-scored retrieval and boolean full-text search, both hybrid.

How relevance is computed (also in docs/retrieval.md):
1. Candidates. The query is embedded once, unprefixed (in a worker thread, while the lexical statement
   runs). Dense candidates are the nearest sector vectors (HNSW, cosine, iterative scan so that filters
   keep enough rows; a boolean search with few matches compares their vectors exactly); lexical
   candidates are the best full-text matches (GIN over a generated tsvector). Their union is scored
   exactly, in one statement.
2. Dense score: a memory's best cosine similarity over the requested sectors.
3. Lexical score: IDF-weighted term matching. Each distinct lexeme t of the query's (positive) words
   weighs idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), where N is the number of live memories in the cubes
   in scope and df the number of them that contain t, both read from the per-cube counts that triggers
   keep (CubeLexeme). A memory scores the sum of the weights of the lexemes it contains (BM25 with no length
   normalisation and term frequency saturated at one occurrence: memories are short, and on LoCoMo this
   beat ts_rank_cd, ts_rank and full BM25). Divided by the best in the pool, so 1.0 is the best lexical
   match of this query. The lexical pool is ranked among the matches of the query's rarest words (those
   carry the weight), so a common word never makes a search read a large part of the corpus.
4. relevance = DENSE_WEIGHT x dense + LEXICAL_WEIGHT x lexical (measured on LoCoMo, docs/retrieval.md).
5. score (with a query) = 0.6 relevance + 0.2 salience + 0.1 recency + 0.1 link weight;
   (without) = 0.4 salience + 0.3 recency + 0.3 link weight. recency = max(0, 1 - age / 365 days);
   link weight = mean weight of the memory's links.
Every memory returned is accessed: its access count rises and its strength is reinforced.
"""
from __future__ import annotations

import html
import json
import math
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, F, FloatField, Sum
from django.db.models.expressions import RawSQL
from django.utils import timezone
from pgvector.django import CosineDistance

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.memories.embeddings import embed_query
from apps.memories.models import SEARCH_CONFIG, SECTORS, CubeLexeme, Memory, MemoryEmbedding, MemoryLink
from apps.memories.query import ParsedQuery, any_words, parse_search
from apps.memories.selectors import memory_filtered, memory_scope_cube_ids
from apps.memories.services.lifecycle import memory_reinforce
from apps.memories.validation import MemoryFilters, clean_limit, clean_offset, clean_query
from apps.memories.vectors import filtered_vector_scan, nearest_exactly, vector_text

DENSE_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
MIN_POOL = 100
# Plain-word search keeps a memory with no word in common only when its cosine similarity reaches this.
SEARCH_MIN_SIMILARITY = 0.45
# Search counts its matches exactly up to this many (above, PostgreSQL's planner estimates the count), and
# a boolean search with at most this many matches may compare their vectors exactly instead of through HNSW
# (up to HNSW_MIN_MATCHES it always does).
EXACT_DENSE_MATCHES = 2500
# Above this many matches, a boolean search walks HNSW instead when its matches are at least
# HNSW_MIN_SHARE of all memories: embedded as its positive words, the query's nearest vectors are mostly
# matches, and a walk through which one row in a hundred passes beat comparing 1,000-2,500 memories'
# vectors exactly (20-55 ms at 100k, docs/benchmarks.md). Through a smaller share of a larger table (one
# user's matches among many users' memories) the walk would go far: those stay exact.
HNSW_MIN_MATCHES = 1000
HNSW_MIN_SHARE = 0.01
TABLE_SIZE_SECONDS = 300.0
# The lexical pool is ranked among the matches of the query's rarest words, as many words as keep those
# matches under this budget; however common the words, the ranking reads at most LEXICAL_SCAN_LIMIT rows.
LEXICAL_SCAN_BUDGET = 2000
LEXICAL_SCAN_LIMIT = 5000
YEAR_SECONDS = 365 * 86400.0
HIGHLIGHT_CHARS = 400
HIGHLIGHT_WORD = re.compile(r"([^\W_]+)", re.UNICODE)
LEXEME_CACHE_WORDS = 200_000
MEMORIES, EMBEDDINGS, LINKS = (model._meta.db_table for model in (Memory, MemoryEmbedding, MemoryLink))
_lexeme_cache: dict[str, frozenset[str]] = {}
_table_size: list = [float("-inf"), -1]  # [monotonic time read, memories in the table per PostgreSQL's statistics]
# Query embeddings run here, beside the request's SQL; a few workers so that concurrent requests do not queue.
_query_embedder = ThreadPoolExecutor(max_workers=4, thread_name_prefix="engram-query-embedding")


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


@dataclass
class RetrieveResult:
    items: list[ScoredMemory]
    total_count: int


@dataclass
class SearchResult:
    items: list[ScoredMemory]
    total_count: int
    search_type: str  # "full-text" (boolean query), "hybrid" (plain words) or "metadata" (no text)
    total_exact: bool = True  # False: more than EXACT_DENSE_MATCHES matches, and total_count is the planner's estimate


def _recency_sql(table: str) -> str:
    """recency = max(0, 1 - age / 365 days) of a row of `table` (an alias or quoted name); params: now, YEAR_SECONDS."""
    return f"GREATEST(0, 1 - EXTRACT(EPOCH FROM (%s - {table}.created_at))::float8 / %s)"


def _link_weight_sql(table: str) -> str:
    """The mean weight of a memory's links, both directions; 0 for a memory with none."""
    return (f"COALESCE((SELECT avg(l.weight) FROM {LINKS} l "
            f"WHERE l.source_id = {table}.id OR l.target_id = {table}.id), 0)")


def _tsquery(parsed: ParsedQuery) -> SearchQuery:
    return SearchQuery(parsed.tsquery, search_type="raw", config=SEARCH_CONFIG)


def _start_embedding(text: str) -> Future:
    """The query vector, computed in a worker thread while the calling thread runs the first SQL (torch
    releases the GIL). Only the model runs there: database work stays on the caller's connection."""
    return _query_embedder.submit(embed_query, text)


def _dense_candidates(base, vector, sectors: list[str], pool: int, *, vectors: int) -> list:
    """About `pool` memories nearest the query, by their nearest sector vector, from the `vectors` nearest
    vectors. A memory's sector vectors lie close together, so twice `pool` vectors hold 0.8-1.2 x `pool`
    memories (at 100k memories, docs/benchmarks.md); `_score_pool` asks for those in its own statement
    and, in the rare case that they hold fewer than half a pool, this asks for every sector's `pool`.
    The pool only proposes candidates, which are then scored exactly."""
    nearest = (
        MemoryEmbedding.objects.filter(memory_id__in=base.values("pk"), sector__in=sectors)
        .order_by(CosineDistance("embedding", vector)).values_list("memory_id", flat=True)
    )
    return list(dict.fromkeys(nearest[:vectors]))[:pool]


@dataclass(frozen=True)
class LexicalModel:
    """IDF-weighted term matching for one query over the memories in scope (see the module docstring)."""

    words: list[str]  # one query word per distinct lexeme
    weights: list[float]  # the IDF of each word's lexeme
    matches: int  # memories in scope that match the query's tsquery (estimated when not matches_exact)
    matches_exact: bool
    scope_size: int  # memories in scope
    best_matches: list  # ids of the best lexical matches, best first (as many as were asked for)
    all_matches: list | None = None  # every match's id, when a boolean search has at most EXACT_DENSE_MATCHES

    def score_sql(self) -> RawSQL:
        match = "CASE WHEN search_vector @@ to_tsquery(%s::regconfig, %s) THEN %s::float8 ELSE 0 END"
        params = [value for word, weight in zip(self.words, self.weights) for value in (SEARCH_CONFIG, word, weight)]
        return RawSQL(" + ".join([match] * len(self.words)) or "0::float8", params, output_field=FloatField())


def _term_match(word: str) -> RawSQL:
    return RawSQL("search_vector @@ to_tsquery(%s::regconfig, %s)", (SEARCH_CONFIG, word), output_field=BooleanField())


def _distinct_lexeme_words(terms: list[str]) -> dict[str, frozenset[str]]:
    """One query word per distinct set of lexemes, with its lexemes ("paint" and "painting" share one)."""
    words, seen = {}, set()
    for word, lexemes in _lexemes_of(terms).items():
        if lexemes and lexemes not in seen:  # a stop word has no lexeme
            seen.add(lexemes)
            words[word] = lexemes
    return words


def _document_frequencies(cube_ids: list[str], words: dict[str, frozenset[str]]) -> tuple[int, dict[str, int]]:
    """The number of live memories in the cubes, and how many of them contain each word, from the counts
    the triggers keep (CubeLexeme): a few index reads however common the words are."""
    lexemes = sorted({CubeLexeme.LIVE_MEMORIES} | set().union(*words.values()))
    counts = dict(
        CubeLexeme.objects.filter(cube_id__in=cube_ids, lexeme__in=lexemes).values("lexeme")
        .annotate(total=Sum("documents")).values_list("lexeme", "total")
    )
    # A word PostgreSQL splits into several lexemes matches as a phrase: at most its rarest lexeme's count.
    return counts.get(CubeLexeme.LIVE_MEMORIES, 0), {word: min(counts.get(lexeme, 0) for lexeme in found) for word, found in words.items()}


def _idf(documents: int, frequency: int) -> float:
    documents = max(documents, frequency)
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def _candidate_words(words: list[str], frequencies: dict[str, int]) -> list[str]:
    """The rarest words whose matches together number at most LEXICAL_SCAN_BUDGET (at least one word).
    The rarest words carry the highest weights, so their matches hold the best lexical matches: a memory
    with none of them scores at most the sum of the other words' weights (checked by the bench against
    reading every match, docs/benchmarks.md)."""
    chosen, total = [], 0
    for word in sorted(words, key=lambda w: (frequencies[w], w)):
        total += frequencies[word]
        if chosen and total > LEXICAL_SCAN_BUDGET:
            break
        chosen.append(word)
    return chosen


def _lexical_model(base, parsed: ParsedQuery, best: int, *, cube_ids: list[str], count_matches: bool,
                   count_scope: bool = False, scope_is_cubes: bool = False) -> LexicalModel:
    """The IDF weights of the query's words, the number of matches and the ids of the `best` best
    matches. The weights come from the per-cube lexeme counts; the best matches from the matches of
    the rarest words only (at most LEXICAL_SCAN_BUDGET of them are read, whatever the corpus size);
    the number of matches is counted exactly up to EXACT_DENSE_MATCHES and estimated by PostgreSQL's
    planner above. Before, one statement read every match of every word (docs/benchmarks.md).
    `scope_is_cubes`: `base` is exactly the live memories of `cube_ids` (no other filter), so the
    counts tell a plain-word search when it has more matches than it counts exactly."""
    assert not (count_matches and count_scope), "search counts matches, retrieve counts its scope"
    try:
        scope_sql, scope_params = base.order_by().values("pk").query.sql_with_params()
    except EmptyResultSet:  # no readable cube: Django will not write "cube_id IN ()"
        return LexicalModel(words=[], weights=[], matches=0, matches_exact=True, scope_size=0, best_matches=[])
    scope_size, frequencies = _document_frequencies(cube_ids, _distinct_lexeme_words(parsed.terms))
    words = list(frequencies)
    weights = [_idf(scope_size, frequencies[word]) for word in words]
    if not words and not count_scope:
        return LexicalModel(words=[], weights=[], matches=0, matches_exact=True, scope_size=scope_size,
                            best_matches=[])
    ctes, ctes_params = [], []
    count_sql, count_params, ids_sql = "NULL::bigint", [], "NULL::uuid[]"
    if count_scope:  # filters narrow the scope below the cubes' live memories: count what they leave
        count_sql, count_params = f"(SELECT count(*) FROM ({scope_sql}) AS scope)", scope_params
    ranked_sql, ranked_params = "SELECT NULL::uuid AS pk", []
    surely_over = False
    if words:
        matching = base.filter(search_vector=_tsquery(parsed)).order_by()
        candidates = _candidate_words(words, frequencies)
        # Every match holds a positive word, so the words' counts bound the matches: when that bound is low,
        # one read of the matches gives the ranking and the exact count alike.
        complete = len(candidates) == len(words) and sum(frequencies.values()) <= EXACT_DENSE_MATCHES
        if len(candidates) < len(words):
            matching_candidates = matching.filter(
                search_vector=SearchQuery(" | ".join(candidates), search_type="raw", config=SEARCH_CONFIG))
        else:
            matching_candidates = matching
        candidates_sql, candidates_params = (
            matching_candidates.annotate(**{f"t{i}": _term_match(word) for i, word in enumerate(words)})
            .values("pk", "created_at", *[f"t{i}" for i in range(len(words))])
            [:EXACT_DENSE_MATCHES + 1 if complete else LEXICAL_SCAN_LIMIT].query.sql_with_params()
        )
        ctes.append(f"candidates AS MATERIALIZED ({candidates_sql})")
        ctes_params += candidates_params
        # Any word's matches are matches of a plain-word search: more of them than are counted exactly
        # and the count would be an estimate anyway.
        surely_over = (not parsed.boolean and scope_is_cubes
                       and max(frequencies.values()) > EXACT_DENSE_MATCHES)
        if count_matches and complete:
            count_sql = "(SELECT count(*) FROM candidates)"
            ids_sql = "(SELECT array_agg(pk) FROM candidates)" if parsed.boolean else ids_sql  # at most the limit
        elif count_matches and surely_over:
            count_sql = f"{EXACT_DENSE_MATCHES + 1}::bigint"
        elif count_matches:
            capped_sql, capped_params = matching.values("pk")[:EXACT_DENSE_MATCHES + 1].query.sql_with_params()
            ctes.append(f"capped AS MATERIALIZED ({capped_sql})")
            ctes_params += capped_params
            count_sql = "(SELECT count(*) FROM capped)"
            if parsed.boolean:  # every match's id, when there are few enough to compare them exactly
                ids_sql = f"(SELECT CASE WHEN count(*) <= {EXACT_DENSE_MATCHES} THEN array_agg(pk) END FROM capped)"
        score = " + ".join(f"CASE WHEN t{i} THEN %s::float8 ELSE 0 END" for i in range(len(words)))
        ranked_sql = f"SELECT pk FROM candidates ORDER BY {score} DESC, created_at DESC LIMIT %s"
        ranked_params = [*weights, best]
    with_sql = f"WITH {', '.join(ctes)}" if ctes else ""
    sql = f"{with_sql} SELECT {count_sql}, {ids_sql}, ARRAY({ranked_sql})"  # one row, whatever is asked
    with connection.cursor() as cursor:
        cursor.execute(sql, [*ctes_params, *count_params, *ranked_params])
        counted, ids, ranked = cursor.fetchone()
    best_matches = [pk for pk in ranked if pk is not None]
    if count_scope:
        scope_size = counted
    matches, matches_exact, all_matches = 0, True, None
    if count_matches and words:
        matches = counted
        all_matches = list(ids or []) if parsed.boolean and matches <= EXACT_DENSE_MATCHES else None
        if matches > EXACT_DENSE_MATCHES:
            estimate = (_estimated_union(scope_size, list(frequencies.values())) if surely_over
                        else _estimated_rows(matching))
            matches, matches_exact = max(EXACT_DENSE_MATCHES + 1, estimate), False
    return LexicalModel(words=words, weights=weights, matches=matches, matches_exact=matches_exact,
                        scope_size=scope_size, best_matches=best_matches, all_matches=all_matches)


def _estimated_union(documents: int, frequencies: list[int]) -> int:
    """How many of `documents` memories hold at least one of the words, were the words independent (the
    assumption PostgreSQL's planner makes too), from the lexeme counts: no query at all."""
    missing = 1.0
    for frequency in frequencies:
        missing *= 1 - min(frequency, documents) / documents
    return round(documents * (1 - missing))


def _estimated_rows(queryset) -> int:
    """PostgreSQL's own estimate of how many rows a query returns (its statistics of the tsvector
    column's lexemes): what a count costs above EXACT_DENSE_MATCHES is most of the matches' pages."""
    plan = json.loads(queryset.explain(format="json"))
    return int(plan[0]["Plan"]["Plan Rows"])


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


def _score_pool(base, *, model: LexicalModel, vector, sectors, pool_ids, now, nearest: int = 0) -> list[PoolScore] | None:
    """Every memory of the pool scored exactly, in one statement: its best cosine over `sectors`, its
    lexical score, recency and link weight. Best first. The pool is `pool_ids` (they come from `base`)
    plus, with `nearest`, about that many memories of `base` nearest the query through the HNSW index,
    found in the same statement (see `_dense_candidates`; None when too few came back, and the caller
    asks again the slower way). Raw SQL: the ORM took longer to build this statement and read its
    rows than PostgreSQL took to run it (docs/benchmarks.md)."""
    query_vector = vector_text(vector)
    params: list = []
    ctes = ""
    pool_sql = "SELECT unnest(%s::uuid[])"
    counts = "0, 0"
    if nearest:
        try:
            scope_sql, scope_params = base.order_by().values("pk").query.sql_with_params()
        except EmptyResultSet:  # no readable cube: nothing to score
            return []
        vectors = min(2, len(sectors)) * nearest
        ctes = (f"WITH nearest AS MATERIALIZED (SELECT e.memory_id, e.embedding <=> %s::vector AS distance "
                f"FROM {EMBEDDINGS} e WHERE e.memory_id IN ({scope_sql}) AND e.sector = ANY(%s) "
                f"ORDER BY e.embedding <=> %s::vector LIMIT %s), "
                "dense AS (SELECT memory_id FROM nearest GROUP BY memory_id ORDER BY min(distance) LIMIT %s) ")
        params += [query_vector, *scope_params, list(sectors), query_vector, vectors, nearest]
        pool_sql = f"SELECT memory_id FROM dense UNION {pool_sql}"
        counts = "(SELECT count(*) FROM nearest), (SELECT count(*) FROM dense)"
    lexical = model.score_sql()
    sql = (
        f"{ctes}SELECT m.id, EXTRACT(EPOCH FROM m.created_at)::float8, m.salience, "
        f"{_recency_sql('m')}, {_link_weight_sql('m')}, "
        f"{lexical.sql}, "
        # GROUP BY: a bare min() of a distance the HNSW index orders by may be planned as an index scan
        # of the whole table, filtered by memory_id afterwards, which finds nothing.
        f"1 - COALESCE((SELECT min(e.embedding <=> %s::vector) FROM {EMBEDDINGS} e "
        f"WHERE e.memory_id = m.id AND e.sector = ANY(%s) GROUP BY e.memory_id), 1), {counts} "
        f"FROM {MEMORIES} m WHERE m.id IN ({pool_sql})"
    )
    params += [now, YEAR_SECONDS, *lexical.params, query_vector, list(sectors), list(pool_ids)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if nearest and rows:
        nearest_rows, dense_found = rows[0][-2], rows[0][-1]
        if dense_found < nearest // 2 and nearest_rows == vectors and len(sectors) > 2:
            return None
    best_lexical = max((row[5] for row in rows), default=0.0) or 1.0
    scored = []
    for pk, created, salience, recency, link_weight, lexical_raw, dense, *_ in rows:
        dense_score = max(0.0, dense)
        lexical_score = lexical_raw / best_lexical
        relevance = DENSE_WEIGHT * dense_score + LEXICAL_WEIGHT * lexical_score
        score = 0.6 * relevance + 0.2 * salience + 0.1 * recency + 0.1 * link_weight
        scored.append(PoolScore(pk=pk, created=created, score=round(score, 4), relevance=round(relevance, 4),
                                dense=round(dense_score, 4), lexical=round(lexical_score, 4),
                                recency=round(recency, 4), link_weight=round(link_weight, 4)))
    scored.sort(key=lambda item: (item.score, item.created), reverse=True)
    return scored


def _hybrid(base, *, embedding: Future, model: LexicalModel, sectors, limit, offset,
            scope_is_matches: bool = False) -> list[PoolScore]:
    """The pool scored, best first. `scope_is_matches`: `base` holds only the lexical matches (a boolean
    search). When the lexical statement returned all of them, their vectors are compared exactly unless
    they are many and a fair share of the table (`_compare_exactly`): a filtered HNSW scan through which
    few rows pass walks far (60-300 ms at 100k for a few hundred matches, against ~1-2 ms per hundred
    memories compared exactly; docs/benchmarks.md)."""
    pool = _pool_size(limit=limit, offset=offset)
    vector = embedding.result()
    now = timezone.now()
    lexical_ids = model.best_matches[:pool]
    if scope_is_matches and model.all_matches is not None and _compare_exactly(len(model.all_matches)):
        matches = model.all_matches
        dense = ([memory_id for memory_id, _ in nearest_exactly(matches, vector, sectors, pool)]
                 if len(matches) > pool else matches)
        return _score_pool(base, model=model, vector=vector, sectors=sectors, now=now,
                           pool_ids=list(dict.fromkeys([*dense, *lexical_ids])))
    with filtered_vector_scan():
        ranked = _score_pool(base, model=model, vector=vector, sectors=sectors, now=now, pool_ids=lexical_ids,
                             nearest=pool)
        if ranked is None:  # the nearest vectors held too few memories: every sector's pool, then score
            dense = _dense_candidates(base, vector, sectors, pool, vectors=len(sectors) * pool)
            ranked = _score_pool(base, model=model, vector=vector, sectors=sectors, now=now,
                                 pool_ids=list(dict.fromkeys([*dense, *lexical_ids])))
    return ranked


def _compare_exactly(matches: int) -> bool:
    """Whether a boolean search's `matches` (at most EXACT_DENSE_MATCHES) compare their vectors exactly
    rather than through HNSW (see HNSW_MIN_MATCHES)."""
    if matches <= HNSW_MIN_MATCHES:
        return True
    table = _memories_in_table()
    return table < 0 or matches < HNSW_MIN_SHARE * table  # a table never analyzed: the safe way


def _memories_in_table() -> int:
    """The memory table's rows as PostgreSQL's statistics estimate them (pg_class.reltuples, which ANALYZE
    and autovacuum keep), read at most every TABLE_SIZE_SECONDS per process; -1 before the first ANALYZE."""
    now = time.monotonic()
    if now - _table_size[0] > TABLE_SIZE_SECONDS:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", [MEMORIES])
            _table_size[:] = [now, cursor.fetchone()[0]]
    return _table_size[1]


def _page(base, ranked: list[PoolScore], *, limit: int, offset: int) -> list[ScoredMemory]:
    page = ranked[offset:offset + limit]
    memories = base.in_bulk([item.pk for item in page])
    return [ScoredMemory(memory=memories[item.pk], score=item.score, relevance=item.relevance, dense=item.dense,
                         lexical=item.lexical, recency=item.recency, link_weight=item.link_weight)
            for item in page if item.pk in memories]


def _pool_size(*, limit: int, offset: int) -> int:
    return max(MIN_POOL, 3 * (offset + limit))


def _without_query(base, *, limit, offset) -> list[ScoredMemory]:
    table = f'"{MEMORIES}"'
    page = (
        base.annotate(recency=RawSQL(_recency_sql(table), (timezone.now(), YEAR_SECONDS), output_field=FloatField()),
                      link_weight=RawSQL(_link_weight_sql(table), (), output_field=FloatField()))
        .annotate(composite=0.4 * F("salience") + 0.3 * F("recency") + 0.3 * F("link_weight"))
        .order_by("-composite", "-created_at")[offset:offset + limit]
    )
    return [ScoredMemory(memory=m, score=round(m.composite, 4), recency=round(m.recency, 4),
                         link_weight=round(m.link_weight, 4)) for m in page]


def memory_retrieve(*, actor: User, text=None, filters: MemoryFilters | None = None, limit=None, offset=None,
                    reinforce: bool = True) -> RetrieveResult:
    filters = filters or MemoryFilters()
    limit, offset, text = clean_limit(limit), clean_offset(offset), clean_query(text)
    embedding = _start_embedding(text) if text else None  # meanwhile: the scope, the lexical statement
    cube_ids = memory_scope_cube_ids(actor=actor, filters=filters)
    base = memory_filtered(actor=actor, filters=filters, cube_ids=cube_ids)
    if not text:
        if set(filters.sectors) != set(SECTORS):
            base = base.filter(primary_sector__in=filters.sectors)
        total = base.count()
        items = _without_query(base, limit=limit, offset=offset)
    else:
        model = _lexical_model(base, any_words(text), _pool_size(limit=limit, offset=offset), cube_ids=cube_ids,
                               count_matches=False, count_scope=filters.narrows_cubes)
        total = model.scope_size
        ranked = _hybrid(base, embedding=embedding, model=model, sectors=filters.sectors, limit=limit, offset=offset)
        items = _page(base, ranked, limit=limit, offset=offset)
    if reinforce:
        memory_reinforce(memory_ids=[item.memory.pk for item in items])
    return RetrieveResult(items=items, total_count=total)


def memory_search(*, actor: User, text=None, filters: MemoryFilters | None = None, limit=None, offset=None,
                  reinforce: bool = True) -> SearchResult:
    filters = filters or MemoryFilters()
    limit, offset, text = clean_limit(limit), clean_offset(offset), clean_query(text)
    parsed = _parse_search(text) if text else None
    # Meanwhile: the scope, the lexical statement.
    embedding = _start_embedding(_meaning_of(text, parsed)) if text else None
    cube_ids = memory_scope_cube_ids(actor=actor, filters=filters)
    base = memory_filtered(actor=actor, filters=filters, cube_ids=cube_ids)
    if set(filters.sectors) != set(SECTORS):
        base = base.filter(primary_sector__in=filters.sectors)
    total_exact = True
    if not text:
        total = base.count()
        items = _without_query(base, limit=limit, offset=offset)
        search_type = "metadata"
    else:
        pool = _pool_size(limit=limit, offset=offset)
        # Term weights come from the cubes in scope, before a boolean query narrows them to its matches.
        model = _lexical_model(base, parsed, pool, cube_ids=cube_ids, count_matches=True,
                               scope_is_cubes=not filters.narrows_cubes and set(filters.sectors) == set(SECTORS))
        if parsed.boolean:
            # Boolean queries filter: every result satisfies the expression; vectors only rank them.
            base = base.filter(search_vector=_tsquery(parsed))
            search_type = "full-text"
        else:
            search_type = "hybrid"
        ranked = _hybrid(base, embedding=embedding, model=model, sectors=filters.sectors, limit=limit, offset=offset,
                         scope_is_matches=parsed.boolean)
        if search_type == "hybrid":
            # A search answers with matches: meaning alone brings a memory in only when it is close.
            ranked = [item for item in ranked if item.lexical > 0 or item.dense >= SEARCH_MIN_SIMILARITY]
        # Boolean: every match. Plain words: every lexical match, plus the close dense neighbours in the pool.
        total = model.matches + sum(1 for item in ranked if item.lexical == 0)
        total_exact = model.matches_exact
        items = _page(base, ranked, limit=limit, offset=offset)
        _annotate_matches(items, parsed)
    if reinforce:
        memory_reinforce(memory_ids=[item.memory.pk for item in items])
    return SearchResult(items=items, total_count=total, search_type=search_type, total_exact=total_exact)


def _parse_search(text: str) -> ParsedQuery:
    """A boolean query as written (operators, phrases, negation), or else the text's words, any of them."""
    parsed = parse_search(text)
    if parsed.boolean and not parsed.tsquery:
        raise InvalidInput("The query has nothing to search for: add a word that is not NOT-ed.", field="text")
    return parsed if parsed.boolean else any_words(text)


def _meaning_of(text: str, parsed: ParsedQuery) -> str:
    """The text whose embedding ranks a search. A boolean query's meaning is its positive words: embedded
    whole, its NOT-ed words pulled the vector toward exactly what the query excludes (and "OR" is noise
    to the model), so the nearest memories were the ones the filter then dropped, and the HNSW walk went
    far to find matches (240 ms for "inspired -joanna" at 100k, docs/benchmarks.md)."""
    return " ".join(parsed.terms) if parsed.boolean else text


def _annotate_matches(items: list[ScoredMemory], parsed: ParsedQuery) -> None:
    """Fill highlight and matchedTerms for one page of results.

    Highlighting happens here rather than in ts_headline, which drops anything that looks like a tag
    (so a memory about HTML would lose text). Each word is stemmed by PostgreSQL itself, in one query
    for the whole page, so a highlighted word is exactly one the full-text match used."""
    contents = [item.memory.content for item in items]
    words = {word.lower() for content in contents for word in HIGHLIGHT_WORD.findall(content)}
    lexemes = _lexemes_of(sorted(words | set(parsed.terms)))
    wanted = set().union(*(lexemes.get(term, set()) for term in parsed.terms)) if parsed.terms else set()
    for item in items:
        item.highlight = _highlight(item.memory.content, wanted, lexemes)
        found = {lexeme for word in HIGHLIGHT_WORD.findall(item.memory.content) for lexeme in lexemes.get(word.lower(), ())}
        item.matched_terms = [term for term in parsed.terms if lexemes.get(term, set()) & found]


def _highlight(content: str, wanted: set[str], lexemes: dict[str, set[str]]) -> str:
    """HTML-escaped content with <b> around matching words; long texts are cut around the first match."""
    parts = HIGHLIGHT_WORD.split(content)  # odd indexes are words
    hits = [i for i in range(1, len(parts), 2) if lexemes.get(parts[i].lower(), set()) & wanted]
    start = 0
    if len(content) > HIGHLIGHT_CHARS and hits:
        before = len("".join(parts[:hits[0]]))
        start = max(0, before - HIGHLIGHT_CHARS // 4)
    out, position = [], 0
    for index, part in enumerate(parts):
        end = position + len(part)
        if end > start and position < start + HIGHLIGHT_CHARS:
            text = html.escape(part)
            out.append(f"<b>{text}</b>" if index in hits else text)
        position = end
    excerpt = "".join(out)
    prefix = "… " if start > 0 else ""
    suffix = " …" if len(content) > start + HIGHLIGHT_CHARS else ""
    return f"{prefix}{excerpt}{suffix}"


def _lexemes_of(words: list[str]) -> dict[str, frozenset[str]]:
    """What PostgreSQL's stemmer makes of each word. A word always stems the same way, so answers are
    kept per process and only new words cost a round trip."""
    known = {word: _lexeme_cache[word] for word in words if word in _lexeme_cache}
    missing = [word for word in dict.fromkeys(words) if word not in known]
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) FROM unnest(%s::text[]) AS word",
                [SEARCH_CONFIG, missing],
            )
            found = {word: frozenset(lexemes) for word, lexemes in cursor.fetchall()}
        if len(_lexeme_cache) + len(found) > LEXEME_CACHE_WORDS:
            _lexeme_cache.clear()
        _lexeme_cache.update(found)
        known.update(found)
    return known
