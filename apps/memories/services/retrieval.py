"""Finding memories: composite-scored retrieval and boolean full-text search, both hybrid.

How relevance is computed (also in docs/retrieval.md):
1. Candidates. The query is embedded once, unprefixed. Dense candidates are the nearest sector
   vectors (HNSW, cosine, iterative scan so that filters keep enough rows); lexical candidates are the
   best full-text matches (GIN over a generated tsvector). Their union is scored exactly.
2. Dense score: a memory's best cosine similarity over the requested sectors.
3. Lexical score: ts_rank_cd of the memory against the query, divided by the best in the pool, so 1.0
   is the best lexical match of this query.
4. relevance = DENSE_WEIGHT x dense + LEXICAL_WEIGHT x lexical (weights tuned on LoCoMo, bench/).
5. score (with a query) = 0.6 relevance + 0.2 salience + 0.1 recency + 0.1 link weight;
   (without) = 0.4 salience + 0.3 recency + 0.3 link weight. recency = max(0, 1 - age / 365 days);
   link weight = mean weight of the memory's links.
Every memory returned is accessed: its access count rises and its strength is reinforced.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import F, FloatField, Min, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Greatest
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

DENSE_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
MIN_POOL = 100
MAX_QUERY_CHARS = 2000
HNSW_EF_SEARCH = 200
YEAR_SECONDS = 365 * 86400.0
# ts_headline marks matches with these control characters; the text is escaped, then they become <b>.
MARK_START, MARK_STOP = "\x02", "\x03"


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


def _set_hnsw_scan() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = 'relaxed_order'")
        cursor.execute(f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH}")


def _dense_candidates(base, vector, sectors: list[str], pool: int) -> dict:
    rows = (
        MemoryEmbedding.objects.filter(memory_id__in=base.values("pk"), sector__in=sectors)
        .annotate(distance=CosineDistance("embedding", vector)).order_by("distance")
        .values_list("memory_id", "distance")[: pool * len(sectors)]
    )
    best: dict = {}
    for memory_id, distance in rows:
        best.setdefault(memory_id, 1.0 - distance)
    return dict(list(best.items())[:pool])


def _dense_exact(memory_ids, vector, sectors: list[str]) -> dict:
    rows = (
        MemoryEmbedding.objects.filter(memory_id__in=memory_ids, sector__in=sectors).values("memory_id")
        .annotate(distance=Min(CosineDistance("embedding", vector))).values_list("memory_id", "distance")
    )
    return {memory_id: 1.0 - distance for memory_id, distance in rows}


def _lexical_ranks(queryset, parsed: ParsedQuery, limit: int | None = None) -> dict:
    if not parsed.tsquery:
        return {}
    query = _tsquery(parsed)
    rows = (
        queryset.filter(search_vector=query)
        .annotate(rank=SearchRank(F("search_vector"), query, cover_density=True))
        .order_by("-rank").values_list("pk", "rank")
    )
    return dict(rows[:limit] if limit else rows)


def _score_pool(base, *, parsed: ParsedQuery, vector, sectors, pool_ids, dense, lexical, now) -> list[ScoredMemory]:
    missing_dense = [pk for pk in pool_ids if pk not in dense]
    if missing_dense:
        dense.update(_dense_exact(missing_dense, vector, sectors))
    missing_lexical = [pk for pk in pool_ids if pk not in lexical]
    if missing_lexical and parsed.tsquery:
        lexical.update(_lexical_ranks(base.filter(pk__in=missing_lexical), parsed))
    best_rank = max(lexical.values(), default=0.0) or 1.0
    memories = base.filter(pk__in=pool_ids).annotate(recency=_recency(now), link_weight=link_weight_subquery())
    scored = []
    for memory in memories:
        dense_score = max(0.0, dense.get(memory.pk, 0.0))
        lexical_score = lexical.get(memory.pk, 0.0) / best_rank
        relevance = DENSE_WEIGHT * dense_score + LEXICAL_WEIGHT * lexical_score
        score = 0.6 * relevance + 0.2 * memory.salience + 0.1 * memory.recency + 0.1 * memory.link_weight
        scored.append(ScoredMemory(memory=memory, score=round(score, 4), relevance=round(relevance, 4),
                                   dense=round(dense_score, 4), lexical=round(lexical_score, 4),
                                   recency=round(memory.recency, 4), link_weight=round(memory.link_weight, 4)))
    scored.sort(key=lambda item: (item.score, item.memory.created_at), reverse=True)
    return scored


def _hybrid(base, *, text: str, parsed: ParsedQuery, sectors, limit, offset) -> list[ScoredMemory]:
    pool = max(MIN_POOL, 3 * (offset + limit))
    vector = embed_query(text)
    now = timezone.now()
    with transaction.atomic():
        _set_hnsw_scan()
        dense = _dense_candidates(base, vector, sectors, pool)
        lexical = _lexical_ranks(base, parsed, limit=pool)
        pool_ids = list(dict.fromkeys([*dense, *lexical]))
        return _score_pool(base, parsed=parsed, vector=vector, sectors=sectors, pool_ids=pool_ids,
                           dense=dense, lexical=lexical, now=now)


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
        total = base.count()
        ranked = _hybrid(base, text=text, parsed=any_words(text), sectors=filters.sectors, limit=limit, offset=offset)
        items = ranked[offset:offset + limit]
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
        if parsed.boolean:
            # Boolean queries filter: every result satisfies the expression; vectors only rank them.
            if not parsed.tsquery:
                raise InvalidInput("The query has nothing to search for: add a word that is not NOT-ed.", field="text")
            base = base.filter(search_vector=_tsquery(parsed))
            search_type = "full-text"
        else:
            parsed = any_words(text)
            search_type = "hybrid"
        ranked = _hybrid(base, text=text, parsed=parsed, sectors=filters.sectors, limit=limit, offset=offset)
        if search_type == "full-text":
            total = base.count()
        else:
            # Plain words: every lexical match, plus the dense neighbours that the pool brought in.
            lexical_total = base.filter(search_vector=_tsquery(parsed)).count() if parsed.tsquery else 0
            total = lexical_total + sum(1 for item in ranked if item.lexical == 0)
        items = ranked[offset:offset + limit]
        _annotate_matches(items, parsed)
    if reinforce:
        memory_reinforce(memory_ids=[item.memory.pk for item in items])
    return SearchResult(items=items, total_count=total, search_type=search_type)


def _annotate_matches(items: list[ScoredMemory], parsed: ParsedQuery) -> None:
    """Fill highlight (HTML-escaped content with <b> around matches) and matchedTerms for one page."""
    if not items or not parsed.tsquery:
        for item in items:
            item.highlight = html.escape(item.memory.content)
        return
    query = _tsquery(parsed)
    rows = Memory.objects.filter(pk__in=[item.memory.pk for item in items]).annotate(
        headline=SearchHeadline("content", query, config=SEARCH_CONFIG, start_sel=MARK_START, stop_sel=MARK_STOP,
                                max_words=60, min_words=20, short_word=2, max_fragments=3, fragment_delimiter=" … "),
        lexemes=RawSQL("tsvector_to_array(search_vector)", ()),
    ).values_list("pk", "headline", "lexemes")
    found = {pk: (headline, set(lexemes)) for pk, headline, lexemes in rows}
    term_lexemes = _lexemes_of(parsed.terms)
    for item in items:
        headline, lexemes = found.get(item.memory.pk, (item.memory.content, set()))
        item.highlight = html.escape(headline).replace(MARK_START, "<b>").replace(MARK_STOP, "</b>")
        item.matched_terms = [term for term in parsed.terms if term_lexemes.get(term) and term_lexemes[term] & lexemes]


def _lexemes_of(terms: list[str]) -> dict[str, set[str]]:
    if not terms:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT term, tsvector_to_array(to_tsvector(%s::regconfig, term)) FROM unnest(%s::text[]) AS term",
            [SEARCH_CONFIG, terms],
        )
        return {term: set(lexemes) for term, lexemes in cursor.fetchall()}
