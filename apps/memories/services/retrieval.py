"""Finding memories: composite-scored retrieval and boolean full-text search, both hybrid.

How relevance is computed (also in docs/retrieval.md):
1. Candidates. The query is embedded once, unprefixed. Dense candidates are the nearest sector
   vectors (HNSW, cosine, iterative scan so that filters keep enough rows); lexical candidates are the
   best full-text matches (GIN over a generated tsvector). Their union is scored exactly.
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
import math
import re
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchQuery
from django.db import connection, transaction
from django.db.models import BooleanField, Count, F, FloatField, Min, Value
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
# Plain-word search keeps a memory with no word in common only when its cosine similarity reaches this.
SEARCH_MIN_SIMILARITY = 0.45
MAX_QUERY_CHARS = 2000
HNSW_EF_SEARCH = 200
YEAR_SECONDS = 365 * 86400.0
HIGHLIGHT_CHARS = 400
HIGHLIGHT_WORD = re.compile(r"([^\W_]+)", re.UNICODE)


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


@dataclass(frozen=True)
class LexicalModel:
    """IDF-weighted term matching for one query over the memories in scope (see the module docstring)."""

    words: list[str]  # one query word per distinct lexeme
    weights: list[float]  # the IDF of each word's lexeme
    matches: int  # memories in scope that match the query's tsquery

    def score_sql(self) -> RawSQL:
        match = "CASE WHEN search_vector @@ to_tsquery(%s::regconfig, %s) THEN %s::float8 ELSE 0 END"
        params = [value for word, weight in zip(self.words, self.weights) for value in (SEARCH_CONFIG, word, weight)]
        return RawSQL(" + ".join([match] * len(self.words)) or "0::float8", params, output_field=FloatField())


def _term_match(word: str) -> RawSQL:
    return RawSQL("search_vector @@ to_tsquery(%s::regconfig, %s)", (SEARCH_CONFIG, word), output_field=BooleanField())


def _lexical_model(base, parsed: ParsedQuery, scope_size: int) -> LexicalModel:
    """Document frequencies of the query's lexemes among the memories in scope, in one statement."""
    if not parsed.tsquery:
        return LexicalModel(words=[], weights=[], matches=0)
    words, seen = [], set()
    for word, lexemes in _lexemes_of(parsed.terms).items():
        key = frozenset(lexemes)
        if key and key not in seen:  # a stop word has no lexeme; "paint" and "painting" share one
            seen.add(key)
            words.append(word)
    stats = base.filter(search_vector=_tsquery(parsed)).aggregate(
        matches=Count("pk"), **{f"df{i}": Count("pk", filter=_term_match(word)) for i, word in enumerate(words)}
    )
    documents = max(scope_size, stats["matches"])
    weights = [math.log(1 + (documents - df + 0.5) / (df + 0.5)) for df in (stats[f"df{i}"] for i in range(len(words)))]
    return LexicalModel(words=words, weights=weights, matches=stats["matches"])


def _lexical_ranks(queryset, parsed: ParsedQuery, model: LexicalModel, limit: int | None = None) -> dict:
    if not parsed.tsquery or not model.words:
        return {}
    rows = (
        queryset.filter(search_vector=_tsquery(parsed)).annotate(lexical=model.score_sql())
        .order_by("-lexical", "-created_at").values_list("pk", "lexical")
    )
    return dict(rows[:limit] if limit else rows)


def _score_pool(base, *, parsed: ParsedQuery, model: LexicalModel, vector, sectors, pool_ids, dense, lexical,
                now) -> list[ScoredMemory]:
    missing_dense = [pk for pk in pool_ids if pk not in dense]
    if missing_dense:
        dense.update(_dense_exact(missing_dense, vector, sectors))
    missing_lexical = [pk for pk in pool_ids if pk not in lexical]
    if missing_lexical:
        lexical.update(_lexical_ranks(base.filter(pk__in=missing_lexical), parsed, model))
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


def _hybrid(base, *, text: str, parsed: ParsedQuery, model: LexicalModel, sectors, limit, offset) -> list[ScoredMemory]:
    pool = max(MIN_POOL, 3 * (offset + limit))
    vector = embed_query(text)
    now = timezone.now()
    with transaction.atomic():
        _set_hnsw_scan()
        dense = _dense_candidates(base, vector, sectors, pool)
        lexical = _lexical_ranks(base, parsed, model, limit=pool)
        pool_ids = list(dict.fromkeys([*dense, *lexical]))
        return _score_pool(base, parsed=parsed, model=model, vector=vector, sectors=sectors, pool_ids=pool_ids,
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
        parsed = any_words(text)
        model = _lexical_model(base, parsed, total)
        ranked = _hybrid(base, text=text, parsed=parsed, model=model, sectors=filters.sectors, limit=limit,
                         offset=offset)
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
        if parsed.boolean and not parsed.tsquery:
            raise InvalidInput("The query has nothing to search for: add a word that is not NOT-ed.", field="text")
        if not parsed.boolean:
            parsed = any_words(text)
        # Term weights come from the whole scope, before a boolean query narrows it to its matches.
        model = _lexical_model(base, parsed, base.count())
        if parsed.boolean:
            # Boolean queries filter: every result satisfies the expression; vectors only rank them.
            base = base.filter(search_vector=_tsquery(parsed))
            search_type = "full-text"
        else:
            search_type = "hybrid"
        ranked = _hybrid(base, text=text, parsed=parsed, model=model, sectors=filters.sectors, limit=limit,
                         offset=offset)
        if search_type == "hybrid":
            # A search answers with matches: meaning alone brings a memory in only when it is close.
            ranked = [item for item in ranked if item.lexical > 0 or item.dense >= SEARCH_MIN_SIMILARITY]
        # Boolean: every match. Plain words: every lexical match, plus the close dense neighbours in the pool.
        total = model.matches + sum(1 for item in ranked if item.lexical == 0)
        items = ranked[offset:offset + limit]
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


def _lexemes_of(words: list[str]) -> dict[str, set[str]]:
    if not words:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) FROM unnest(%s::text[]) AS word",
            [SEARCH_CONFIG, words],
        )
        return {word: set(found) for word, found in cursor.fetchall()}
