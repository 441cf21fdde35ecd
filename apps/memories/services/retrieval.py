"""Finding memories: composite-scored retrieval and boolean full-text search, both hybrid.

How relevance is computed (also in docs/retrieval.md):
1. Candidates. The query is embedded once, unprefixed (in a worker thread, while the lexical statement
   runs). Dense candidates are the nearest sector vectors (HNSW, cosine, iterative scan so that filters
   keep enough rows; a boolean search with few matches compares their vectors exactly); lexical
   candidates are the best full-text matches (GIN over a generated tsvector). Their union is scored
   exactly, in one statement.
2. Dense score: a memory's best cosine similarity over the requested sectors.
3. Lexical score: IDF-weighted term matching. Each distinct lexeme t of the query's (positive) words
   weighs idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), where N is the number of memories in scope (the
   actor's, after filters) and df the number of them that contain t, counted in one statement over the
   GIN index. A memory scores the sum of the weights of the lexemes it contains (BM25 with no length
   normalisation and term frequency saturated at one occurrence: memories are short, and on LoCoMo this
   beat ts_rank_cd, ts_rank and full BM25). Divided by the best in the pool, so 1.0 is the best lexical
   match of this query.
4. relevance = DENSE_WEIGHT x dense + LEXICAL_WEIGHT x lexical (measured on LoCoMo, docs/retrieval.md).
5. score (with a query) = 0.6 relevance + 0.2 salience + 0.1 recency + 0.1 link weight;
   (without) = 0.4 salience + 0.3 recency + 0.3 link weight. recency = max(0, 1 - age / 365 days);
   link weight = mean weight of the memory's links.
Every memory returned is accessed: its access count rises and its strength is reinforced.
"""
from __future__ import annotations

import html
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, ExpressionWrapper, F, FloatField, Min, OuterRef, Subquery, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone
from pgvector.django import CosineDistance

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.memories.embeddings import embed_query
from apps.memories.models import SEARCH_CONFIG, SECTORS, Memory, MemoryEmbedding
from apps.memories.query import ParsedQuery, any_words, parse_search
from apps.memories.selectors import link_weight_subquery, memory_filtered
from apps.memories.services.lifecycle import memory_reinforce
from apps.memories.validation import MemoryFilters, clean_limit, clean_offset
from apps.memories.vectors import filtered_vector_scan

DENSE_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
MIN_POOL = 100
# Plain-word search keeps a memory with no word in common only when its cosine similarity reaches this.
SEARCH_MIN_SIMILARITY = 0.45
MAX_QUERY_CHARS = 2000
# A boolean search with at most this many matches compares their vectors exactly instead of through HNSW.
EXACT_DENSE_MATCHES = 2500
YEAR_SECONDS = 365 * 86400.0
HIGHLIGHT_CHARS = 400
HIGHLIGHT_WORD = re.compile(r"([^\W_]+)", re.UNICODE)
LEXEME_CACHE_WORDS = 200_000
_lexeme_cache: dict[str, frozenset[str]] = {}
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


def clean_query(text) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        raise InvalidInput("text must be a string.", field="text")
    if "\x00" in text:
        raise InvalidInput("text cannot contain NUL bytes.", field="text")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"text has at most {MAX_QUERY_CHARS} characters.", field="text")
    return text.strip()


def _recency(now):
    return Greatest(Value(0.0), Value(1.0) - RawSQL("EXTRACT(EPOCH FROM (%s - created_at))", (now,)) / Value(YEAR_SECONDS),
                    output_field=FloatField())


def _tsquery(parsed: ParsedQuery) -> SearchQuery:
    return SearchQuery(parsed.tsquery, search_type="raw", config=SEARCH_CONFIG)


def _start_embedding(text: str) -> Future:
    """The query vector, computed in a worker thread while the calling thread runs the first SQL (torch
    releases the GIL). Only the model runs there: database work stays on the caller's connection."""
    return _query_embedder.submit(embed_query, text)


def _dense_candidates(base, vector, sectors: list[str], pool: int) -> list:
    """The `pool` memories nearest the query, by their nearest sector vector. A memory's sector vectors
    lie close together, so twice `pool` vectors nearly always hold `pool` memories and cost half of
    asking for every sector's `pool` (docs/benchmarks.md); when they do not, that is asked next."""
    nearest = (
        MemoryEmbedding.objects.filter(memory_id__in=base.values("pk"), sector__in=sectors)
        .order_by(CosineDistance("embedding", vector)).values_list("memory_id", flat=True)
    )
    for vectors in sorted({min(2, len(sectors)) * pool, len(sectors) * pool}):
        rows = list(nearest[:vectors])
        found = list(dict.fromkeys(rows))
        if len(found) >= pool or len(rows) < vectors:
            break
    return found[:pool]


def _nearest_among(memory_ids: list, vector, sectors: list[str], pool: int) -> list:
    """The `pool` memories of `memory_ids` nearest the query, compared exactly."""
    return list(
        MemoryEmbedding.objects.filter(memory_id__in=memory_ids, sector__in=sectors).values("memory_id")
        .annotate(distance=Min(CosineDistance("embedding", vector))).order_by("distance", "memory_id")
        .values_list("memory_id", flat=True)[:pool]
    )


def _best_similarity(vector, sectors: list[str]) -> ExpressionWrapper:
    """A memory's best cosine similarity over the requested sectors."""
    distance = (
        MemoryEmbedding.objects.filter(memory_id=OuterRef("pk"), sector__in=sectors).values("memory_id")
        .annotate(distance=Min(CosineDistance("embedding", vector))).values("distance")
    )
    return ExpressionWrapper(Value(1.0) - Coalesce(Subquery(distance, output_field=FloatField()), Value(1.0)),
                             output_field=FloatField())


@dataclass(frozen=True)
class LexicalModel:
    """IDF-weighted term matching for one query over the memories in scope (see the module docstring)."""

    words: list[str]  # one query word per distinct lexeme
    weights: list[float]  # the IDF of each word's lexeme
    matches: int  # memories in scope that match the query's tsquery
    scope_size: int  # memories in scope
    best_matches: list  # ids of the best lexical matches, best first (as many as were asked for)

    def score_sql(self) -> RawSQL:
        match = "CASE WHEN search_vector @@ to_tsquery(%s::regconfig, %s) THEN %s::float8 ELSE 0 END"
        params = [value for word, weight in zip(self.words, self.weights) for value in (SEARCH_CONFIG, word, weight)]
        return RawSQL(" + ".join([match] * len(self.words)) or "0::float8", params, output_field=FloatField())


def _term_match(word: str) -> RawSQL:
    return RawSQL("search_vector @@ to_tsquery(%s::regconfig, %s)", (SEARCH_CONFIG, word), output_field=BooleanField())


def _distinct_lexeme_words(terms: list[str]) -> list[str]:
    words, seen = [], set()
    for word, lexemes in _lexemes_of(terms).items():
        key = frozenset(lexemes)
        if key and key not in seen:  # a stop word has no lexeme; "paint" and "painting" share one
            seen.add(key)
            words.append(word)
    return words


def _lexical_model(base, parsed: ParsedQuery, best: int) -> LexicalModel:
    """The size of the scope, the document frequencies of the query's lexemes in it, the number of
    matches and the ids of the `best` best matches, in one statement: the matches are read once (a
    bitmap scan of the GIN index), each is tested once per lexeme, and the same rows give the counts
    and the ranking (before: three statements, two reads of the matches; docs/benchmarks.md)."""
    try:
        scope_sql, scope_params = base.order_by().values("pk").query.sql_with_params()
    except EmptyResultSet:  # no readable cube: Django will not write "cube_id IN ()"
        return LexicalModel(words=[], weights=[], matches=0, scope_size=0, best_matches=[])
    if not parsed.tsquery:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM ({scope_sql}) AS scope", scope_params)
            return LexicalModel(words=[], weights=[], matches=0, scope_size=cursor.fetchone()[0], best_matches=[])
    words = _distinct_lexeme_words(parsed.terms)
    matched_sql, matched_params = (
        base.filter(search_vector=_tsquery(parsed)).order_by()
        .annotate(**{f"t{i}": _term_match(word) for i, word in enumerate(words)})
        .values("pk", "created_at", *[f"t{i}" for i in range(len(words))]).query.sql_with_params()
    )
    frequencies = "".join(f", count(*) FILTER (WHERE t{i}) AS df{i}" for i in range(len(words)))
    documents = "GREATEST(scope_size, matches)::float8"
    weights = "".join(f", ln(1 + ({documents} - df{i} + 0.5) / (df{i} + 0.5)) AS w{i}" for i in range(len(words)))
    score = " + ".join(f"CASE WHEN matched.t{i} THEN weights.w{i} ELSE 0 END" for i in range(len(words))) or "0"
    weight_columns = "".join(f", weights.w{i}" for i in range(len(words)))
    sql = f"""
        WITH matched AS MATERIALIZED ({matched_sql}),
        stats AS (SELECT (SELECT count(*) FROM ({scope_sql}) AS scope) AS scope_size, count(*) AS matches{frequencies}
                  FROM matched),
        weights AS MATERIALIZED (SELECT scope_size, matches{weights} FROM stats)
        SELECT weights.scope_size, weights.matches{weight_columns}, ranked.pk
        FROM weights LEFT JOIN LATERAL (
            SELECT matched.pk FROM matched ORDER BY {score} DESC, matched.created_at DESC LIMIT %s
        ) AS ranked ON true
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*matched_params, *scope_params, best])
        rows = cursor.fetchall()
    scope_size, matches, *weights_found = rows[0][:-1]
    return LexicalModel(words=words, weights=[float(w) for w in weights_found], matches=matches,
                        scope_size=scope_size, best_matches=[row[-1] for row in rows if row[-1] is not None])


@dataclass(frozen=True)
class PoolScore:
    """A pool memory's scores, before its row is loaded: only the page's rows are."""

    pk: object
    created_at: datetime
    score: float
    relevance: float
    dense: float
    lexical: float
    recency: float
    link_weight: float


def _score_pool(base, *, model: LexicalModel, vector, sectors, pool_ids, now) -> list[PoolScore]:
    """Every memory of the pool scored exactly, in one statement: its best cosine, its lexical score,
    recency and link weight. Best first."""
    rows = list(base.filter(pk__in=pool_ids).annotate(
        recency=_recency(now), link_weight=link_weight_subquery(), lexical=model.score_sql(),
        dense=_best_similarity(vector, sectors),
    ).values_list("pk", "created_at", "salience", "recency", "link_weight", "lexical", "dense"))
    best_lexical = max((row[5] for row in rows), default=0.0) or 1.0
    scored = []
    for pk, created_at, salience, recency, link_weight, lexical, dense in rows:
        dense_score = max(0.0, dense)
        lexical_score = lexical / best_lexical
        relevance = DENSE_WEIGHT * dense_score + LEXICAL_WEIGHT * lexical_score
        score = 0.6 * relevance + 0.2 * salience + 0.1 * recency + 0.1 * link_weight
        scored.append(PoolScore(pk=pk, created_at=created_at, score=round(score, 4), relevance=round(relevance, 4),
                                dense=round(dense_score, 4), lexical=round(lexical_score, 4),
                                recency=round(recency, 4), link_weight=round(link_weight, 4)))
    scored.sort(key=lambda item: (item.score, item.created_at), reverse=True)
    return scored


def _hybrid(base, *, embedding: Future, model: LexicalModel, sectors, limit, offset,
            scope_is_matches: bool = False) -> list[PoolScore]:
    """The pool scored, best first. `scope_is_matches`: `base` holds only the lexical matches (a boolean
    search). When the lexical statement returned all of them, their vectors are compared exactly: a
    filtered HNSW scan through which few rows pass walks far (60-300 ms at 100k for a few hundred
    matches, against ~3 ms per hundred memories compared exactly; docs/benchmarks.md)."""
    pool = _pool_size(limit=limit, offset=offset)
    vector = embedding.result()
    now = timezone.now()
    if scope_is_matches and model.matches <= len(model.best_matches):
        dense = _nearest_among(model.best_matches, vector, sectors, pool) if model.matches > pool else []
    else:
        with filtered_vector_scan():
            dense = _dense_candidates(base, vector, sectors, pool)
    pool_ids = list(dict.fromkeys([*dense, *model.best_matches[:pool]]))
    return _score_pool(base, model=model, vector=vector, sectors=sectors, pool_ids=pool_ids, now=now)


def _page(base, ranked: list[PoolScore], *, limit: int, offset: int) -> list[ScoredMemory]:
    page = ranked[offset:offset + limit]
    memories = base.in_bulk([item.pk for item in page])
    return [ScoredMemory(memory=memories[item.pk], score=item.score, relevance=item.relevance, dense=item.dense,
                         lexical=item.lexical, recency=item.recency, link_weight=item.link_weight)
            for item in page if item.pk in memories]


def _pool_size(*, limit: int, offset: int) -> int:
    return max(MIN_POOL, 3 * (offset + limit))


def _without_query(base, *, limit, offset) -> list[ScoredMemory]:
    now = timezone.now()
    page = (
        base.annotate(recency=_recency(now), link_weight=link_weight_subquery())
        .annotate(composite=0.4 * F("salience") + 0.3 * F("recency") + 0.3 * F("link_weight"))
        .order_by("-composite", "-created_at")[offset:offset + limit]
    )
    return [ScoredMemory(memory=m, score=round(m.composite, 4), recency=round(m.recency, 4),
                         link_weight=round(m.link_weight, 4)) for m in page]


def memory_retrieve(*, actor: User, text=None, filters: MemoryFilters | None = None, limit=None, offset=None,
                    reinforce: bool = True) -> RetrieveResult:
    filters = filters or MemoryFilters()
    limit, offset, text = clean_limit(limit), clean_offset(offset), clean_query(text)
    base = memory_filtered(actor=actor, filters=filters)
    if not text:
        if set(filters.sectors) != set(SECTORS):
            base = base.filter(primary_sector__in=filters.sectors)
        total = base.count()
        items = _without_query(base, limit=limit, offset=offset)
    else:
        embedding = _start_embedding(text)
        model = _lexical_model(base, any_words(text), _pool_size(limit=limit, offset=offset))
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
    base = memory_filtered(actor=actor, filters=filters)
    if set(filters.sectors) != set(SECTORS):
        base = base.filter(primary_sector__in=filters.sectors)
    if not text:
        total = base.count()
        items = _without_query(base, limit=limit, offset=offset)
        search_type = "metadata"
        parsed = None
    else:
        parsed = parse_search(text)
        if parsed.boolean and not parsed.tsquery:
            raise InvalidInput("The query has nothing to search for: add a word that is not NOT-ed.", field="text")
        if not parsed.boolean:
            parsed = any_words(text)
        embedding = _start_embedding(text)
        pool = _pool_size(limit=limit, offset=offset)
        # Term weights come from the whole scope, before a boolean query narrows it to its matches.
        model = _lexical_model(base, parsed, max(pool, EXACT_DENSE_MATCHES) if parsed.boolean else pool)
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
        items = _page(base, ranked, limit=limit, offset=offset)
        _annotate_matches(items, parsed)
    if reinforce:
        memory_reinforce(memory_ids=[item.memory.pk for item in items])
    return SearchResult(items=items, total_count=total, search_type=search_type)


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
