"""Planning a retrieval or a search: which query is embedded, which candidates are pooled, whether their
vectors are compared exactly or through HNSW, and which page comes back. memory_retrieve and
memory_search, the package's entry points, are here."""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.memories.models import SECTORS
from apps.memories.query import ParsedQuery, any_words, parse_search
from apps.memories.selectors import memory_filtered, memory_scope_cube_ids
from apps.memories.validation import MemoryFilters, clean_limit, clean_offset, clean_query
from apps.memories.vectors import nearest_exactly

from .dates import date_windows
from .dense import RETRIEVAL_EF_SEARCH, QueryEmbedding, compare_exactly
from .highlight import annotate_matches
from .lexical import LexicalModel, lexical_model, tsquery
from .reinforce import reinforce_returned
from .scoring import PoolScore, ScoredMemory, follow_up, page, score_pool, without_query

MIN_POOL = 100
# Plain-word search keeps a memory with no word in common only when its cosine similarity reaches this.
SEARCH_MIN_SIMILARITY = 0.45


@dataclass
class RetrieveResult:
    items: list[ScoredMemory]
    total_count: int
    # The query's vector and the best dense similarity in the scored pool (the nearest memory in scope): None
    # without a query text. Context Graph's session takes both for the query's surprise.
    query_vector: list[float] | None = None
    best_similarity: float | None = None


@dataclass
class SearchResult:
    items: list[ScoredMemory]
    total_count: int
    search_type: str  # "full-text" (boolean query), "hybrid" (plain words) or "metadata" (no text)
    total_exact: bool = True  # False: more than EXACT_DENSE_MATCHES matches, and total_count is the planner's estimate
    # "Did you mean": the query with each word no memory holds replaced by the nearest of the user's own words
    # (a plain-word search's results include their matches already); None when every word was found.
    suggestion: str | None = None


def _pool_size(*, limit: int, offset: int) -> int:
    return max(MIN_POOL, 3 * (offset + limit))


def _hybrid(base, *, embedding: QueryEmbedding, model: LexicalModel, sectors, limit, offset,
            scope_is_matches: bool = False) -> list[PoolScore]:
    """The pool scored, best first. `scope_is_matches`: `base` holds only the lexical matches (a boolean
    search). When the lexical statement returned all of them, their vectors are compared exactly unless
    they are many and a fair share of the table (`compare_exactly`): a filtered HNSW scan through which
    few rows pass walks far, slower than comparing a few hundred vectors exactly
    (docs/benchmarks.md#retrieve-and-search-latency)."""
    pool = _pool_size(limit=limit, offset=offset)
    dates = date_windows(embedding.text)  # the text the model reads: a boolean search's positive words
    vector = embedding.result()
    now = timezone.now()
    lexical_ids = model.best_matches[:pool]
    if scope_is_matches and model.all_matches is not None and compare_exactly(len(model.all_matches)):
        matches = model.all_matches
        dense = ([memory_id for memory_id, _ in nearest_exactly(matches, vector, sectors, pool)]
                 if len(matches) > pool else matches)
        return score_pool(base, model=model, vector=vector, sectors=sectors, now=now,
                          pool_ids=list(dict.fromkeys([*dense, *lexical_ids])), dates=dates)
    return score_pool(base, model=model, vector=vector, sectors=sectors, now=now, pool_ids=lexical_ids,
                      nearest=pool, ef_search=RETRIEVAL_EF_SEARCH, dates=dates)


def memory_retrieve(*, actor: User, text=None, filters: MemoryFilters | None = None, limit=None, offset=None,
                    reinforce: bool = True, diversify: bool = True) -> RetrieveResult:
    """`diversify`: take the best again for diversity (scoring.diversify), which lowers the score of a memory close
    to a better one; a caller that leaves some results out and reads the scores of the rest turns it off."""
    filters = filters or MemoryFilters()
    limit, offset, text = clean_limit(limit), clean_offset(offset), clean_query(text)
    embedding = QueryEmbedding(text) if text else None  # computed while the lexical statement runs
    cube_ids = memory_scope_cube_ids(actor=actor, filters=filters)
    base = memory_filtered(actor=actor, filters=filters, cube_ids=cube_ids)
    query_vector = best_similarity = None
    if not text:
        if set(filters.sectors) != set(SECTORS):
            base = base.filter(primary_sector__in=filters.sectors)
        total = base.count()
        items = without_query(base, limit=limit, offset=offset)
    else:
        model = lexical_model(base, any_words(text), _pool_size(limit=limit, offset=offset), cube_ids=cube_ids,
                              count_matches=False, count_scope=filters.narrows_cubes, on_statement=embedding.start)
        total = model.scope_size
        ranked = _hybrid(base, embedding=embedding, model=model, sectors=filters.sectors, limit=limit, offset=offset)
        ranked = follow_up(ranked, model=model, cube_ids=cube_ids)
        items = page(ranked, limit=limit, offset=offset, include_deleted=filters.include_deleted,
                     diversified=diversify)
        query_vector = list(embedding.result())
        best_similarity = max((item.dense for item in ranked), default=None)
    if reinforce:
        reinforce_returned(items)
    return RetrieveResult(items=items, total_count=total, query_vector=query_vector, best_similarity=best_similarity)


def memory_search(*, actor: User, text=None, filters: MemoryFilters | None = None, limit=None, offset=None,
                  reinforce: bool = True) -> SearchResult:
    filters = filters or MemoryFilters()
    limit, offset, text = clean_limit(limit), clean_offset(offset), clean_query(text)
    parsed = _parse_search(text) if text else None
    embedding = QueryEmbedding(_meaning_of(text, parsed)) if text else None  # computed while the lexical statement runs
    cube_ids = memory_scope_cube_ids(actor=actor, filters=filters)
    base = memory_filtered(actor=actor, filters=filters, cube_ids=cube_ids)
    if set(filters.sectors) != set(SECTORS):
        base = base.filter(primary_sector__in=filters.sectors)
    total_exact, suggestion = True, None
    if not text:
        total = base.count()
        items = without_query(base, limit=limit, offset=offset)
        search_type = "metadata"
    else:
        pool = _pool_size(limit=limit, offset=offset)
        # Term weights come from the cubes in scope, before a boolean query narrows them to its matches.
        model = lexical_model(base, parsed, pool, cube_ids=cube_ids, count_matches=True,
                              scope_is_cubes=not filters.narrows_cubes and set(filters.sectors) == set(SECTORS),
                              fuzzy=True, on_statement=embedding.start)
        if model.corrections:
            suggestion = _corrected(text, model.corrections)
            if not parsed.boolean:  # its results match the corrections too: highlight them
                parsed = parsed.with_terms(list(model.corrections.values()))
        if parsed.boolean:
            # Boolean queries filter: every result satisfies the expression; vectors only rank them.
            base = base.filter(search_vector=tsquery(parsed))
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
        items = page(ranked, limit=limit, offset=offset, include_deleted=filters.include_deleted)
        annotate_matches(items, parsed)
    if reinforce:
        reinforce_returned(items)
    return SearchResult(items=items, total_count=total, search_type=search_type, total_exact=total_exact,
                        suggestion=suggestion)


def _parse_search(text: str) -> ParsedQuery:
    """A boolean query as written (operators, phrases, negation), or else the text's words, any of them."""
    parsed = parse_search(text)
    if parsed.boolean and not parsed.tsquery:
        raise InvalidInput("The query has nothing to search for: add a word that is not NOT-ed.", field="text")
    return parsed if parsed.boolean else any_words(text)


def _corrected(text: str, corrections: dict[str, str]) -> str:
    """The query as typed, each corrected word (any case, whole words only) replaced by its correction."""
    for word, correction in corrections.items():
        text = re.sub(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", correction, text, flags=re.IGNORECASE)
    return text


def _meaning_of(text: str, parsed: ParsedQuery) -> str:
    """The text whose embedding ranks a search. A boolean query's meaning is its positive words: embedded
    whole, its NOT-ed words would pull the vector toward exactly what the query excludes (and "OR" is
    noise to the model), so the nearest memories would be the ones the filter then drops, and the HNSW
    walk would go far to find matches."""
    return " ".join(parsed.terms) if parsed.boolean else text
