"""Lexical search: IDF-weighted term matching over the memories in scope (docs/retrieval.md, "Lexical").

Each distinct lexeme t of the query's (positive) words weighs idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)),
where N is the number of live memories in the cubes in scope and df the number of them that contain t,
both read from the per-cube counts that triggers keep (CubeLexeme). A memory scores the sum of the weights
of the lexemes it contains (BM25 with no length normalisation and term frequency saturated at one
occurrence: memories are short, and on LoCoMo this beat ts_rank_cd, ts_rank and full BM25). The lexical
pool is ranked among the matches of the query's rarest words (those carry the weight), so a common word
never makes a search read a large part of the corpus.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, FloatField
from django.db.models.expressions import RawSQL

from apps.memories.models import SEARCH_CONFIG, CubeLexeme, Memory
from apps.memories.query import ParsedQuery, plain_word

# Search counts its matches exactly up to this many (above, PostgreSQL's planner estimates the count), and
# a boolean search with at most this many matches may compare their vectors exactly instead of through HNSW
# (up to dense.HNSW_MIN_MATCHES it always does).
EXACT_DENSE_MATCHES = 2500
# The lexical pool is ranked among the matches of the query's rarest words, as many words as keep those
# matches under this budget; however common the words, the ranking reads at most LEXICAL_SCAN_LIMIT rows.
LEXICAL_SCAN_BUDGET = 2000
LEXICAL_SCAN_LIMIT = 5000
LEXEME_CACHE_WORDS = 200_000
# Search's fuzzy matching: a query word no memory in scope holds is matched, and suggested, as the user's own
# lexeme nearest it when their trigram similarity reaches this ("migratoin" and "migrat" share 6 of 11 trigrams,
# 0.55; "grup" and "group" 3 of 8, 0.375, is missed). Shorter words have too few trigrams to tell.
FUZZY_SIMILARITY = 0.4
FUZZY_MIN_CHARS = 4
FUZZY_SAMPLE_MEMORIES = 3  # memories whose words that stem to the correction are read for its spelling
_lexeme_cache: dict[str, frozenset[str]] = {}


def tsquery(parsed: ParsedQuery) -> SearchQuery:
    return SearchQuery(parsed.tsquery, search_type="raw", config=SEARCH_CONFIG)


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
    # Fuzzy search: each query word no memory holds -> the word of the user's own memories nearest it.
    corrections: dict[str, str] | None = None
    lexemes: tuple[str, ...] = ()  # every lexeme of the query's words (feedback words are other lexemes)

    def score_sql(self) -> RawSQL:
        match = "CASE WHEN search_vector @@ to_tsquery(%s::regconfig, %s) THEN %s::float8 ELSE 0 END"
        params = [value for word, weight in zip(self.words, self.weights) for value in (SEARCH_CONFIG, word, weight)]
        return RawSQL(" + ".join([match] * len(self.words)) or "0::float8", params, output_field=FloatField())


def _term_match(word: str) -> RawSQL:
    return RawSQL("search_vector @@ to_tsquery(%s::regconfig, %s)", (SEARCH_CONFIG, word), output_field=BooleanField())


def _distinct_lexeme_words(lexemes: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """One query word per distinct set of lexemes, with its lexemes ("paint" and "painting" share one)."""
    words, seen = {}, set()
    for word, found in lexemes.items():
        if found and found not in seen:  # a stop word has no lexeme
            seen.add(found)
            words[word] = found
    return words


def _words_and_frequencies(cube_ids: list[str], terms: list[str]) -> tuple[dict[str, frozenset[str]], int,
                                                                            dict[str, int]]:
    """The query's distinct words with their lexemes, the number of live memories in the cubes, and how many of
    them contain each word, from the counts the triggers keep (CubeLexeme): a few index reads however common the
    words are. Words this process has not stemmed yet are stemmed in the same statement (no round trip of their
    own: it was one statement in seven of a retrieval)."""
    known = _cached_lexemes(terms)
    missing = [word for word in dict.fromkeys(terms) if word not in known]
    cached = sorted({CubeLexeme.LIVE_MEMORIES}.union(*known.values()))
    # Raw SQL: every retrieval and search runs this, and the ORM took longer to build it than PostgreSQL to run it.
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH stemmed AS (SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) AS lexemes "
            f"FROM unnest(%s::text[]) AS word) "
            f"SELECT word, lexemes, NULL::bigint FROM stemmed UNION ALL "
            f"SELECT lexeme, NULL, sum(documents) FROM {CubeLexeme._meta.db_table} WHERE cube_id = ANY(%s::varchar[]) "
            f"AND lexeme = ANY(%s::text[] || ARRAY(SELECT unnest(lexemes) FROM stemmed)) GROUP BY lexeme",
            [SEARCH_CONFIG, missing, list(cube_ids), cached])
        rows = cursor.fetchall()
    stems = {word: frozenset(lexemes) for word, lexemes, count in rows if count is None}
    counts = {lexeme: count for lexeme, _, count in rows if count is not None}
    _remember_lexemes(stems)
    words = _distinct_lexeme_words({word: known.get(word) or stems.get(word, frozenset()) for word in dict.fromkeys(terms)})
    # A word PostgreSQL splits into several lexemes matches as a phrase: at most its rarest lexeme's count.
    frequencies = {word: min(counts.get(lexeme, 0) for lexeme in found) for word, found in words.items()}
    return words, counts.get(CubeLexeme.LIVE_MEMORIES, 0), frequencies


@dataclass(frozen=True)
class Correction:
    word: str  # a word of one of the user's memories, lower-cased
    lexeme: str
    documents: int


def _corrections(cube_ids: list[str], unknown: dict[str, frozenset[str]]) -> dict[str, Correction]:
    """For each query word no memory of the cubes holds: the cubes' lexeme nearest it by trigram similarity (at
    least FUZZY_SIMILARITY; ties: the more common), and, of the words that stem to it in a few of their memories
    (ts_headline marks them), the one closest to what was typed: the suggestion is in the user's own vocabulary.
    One statement, through the lexemes' trigram index."""
    pairs = [(word, min(lexemes, key=len)) for word, lexemes in unknown.items() if len(word) >= FUZZY_MIN_CHARS]
    if not pairs:
        return {}
    lexemes, memories = CubeLexeme._meta.db_table, Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT w.word, best.lexeme, best.documents, ARRAY(SELECT (regexp_matches(ts_headline(%s::regconfig, "
            f"m.content, quote_literal(best.lexeme)::tsquery, 'StartSel=<<<, StopSel=>>>, HighlightAll=true'), "
            f"'<<<(.*?)>>>', 'g'))[1] FROM (SELECT content FROM {memories} WHERE cube_id = ANY(%s::varchar[]) "
            f"AND deleted_at IS NULL AND search_vector @@ quote_literal(best.lexeme)::tsquery LIMIT %s) m) "
            f"FROM unnest(%s::text[], %s::text[]) AS w (word, lexeme) CROSS JOIN LATERAL ("
            f"SELECT lexeme, sum(documents)::int AS documents, similarity(lexeme, w.lexeme) AS closeness "
            f"FROM {lexemes} WHERE cube_id = ANY(%s::varchar[]) AND lexeme %% w.lexeme AND lexeme <> '' "
            f"GROUP BY lexeme HAVING sum(documents) > 0 ORDER BY closeness DESC, documents DESC, lexeme LIMIT 1"
            f") best WHERE best.closeness >= %s",
            [SEARCH_CONFIG, list(cube_ids), FUZZY_SAMPLE_MEMORIES, [word for word, _ in pairs],
             [lexeme for _, lexeme in pairs], list(cube_ids), FUZZY_SIMILARITY])
        rows = cursor.fetchall()
    found = {}
    for word, lexeme, documents, marked in rows:
        # A marked form must be one plain word, to be a query word in its turn.
        forms = sorted({form.lower() for form in marked if plain_word(form)})
        if forms:
            closest = max(forms, key=lambda form: SequenceMatcher(None, word, form).ratio())
            found[word] = Correction(closest, lexeme, documents)
    return found


def _idf(documents: int, frequency: int) -> float:
    documents = max(documents, frequency)
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def _candidate_words(words: list[str], frequencies: dict[str, int]) -> list[str]:
    """The rarest words whose matches together number at most LEXICAL_SCAN_BUDGET (at least one word).
    The rarest words carry the highest weights, so their matches hold the best lexical matches: a memory
    with none of them scores at most the sum of the other words' weights (checked by the bench against
    reading every match, docs/benchmarks.md#retrieve-and-search-latency)."""
    chosen, total = [], 0
    for word in sorted(words, key=lambda w: (frequencies[w], w)):
        total += frequencies[word]
        if chosen and total > LEXICAL_SCAN_BUDGET:
            break
        chosen.append(word)
    return chosen


def lexical_model(base, parsed: ParsedQuery, best: int, *, cube_ids: list[str], count_matches: bool,
                  count_scope: bool = False, scope_is_cubes: bool = False, fuzzy: bool = False,
                  on_statement: Callable[[], None] | None = None) -> LexicalModel:
    """The IDF weights of the query's words, the number of matches and the ids of the `best` best
    matches. The weights come from the per-cube lexeme counts; the best matches from the matches of
    the rarest words only (at most LEXICAL_SCAN_BUDGET of them are read, whatever the corpus size);
    the number of matches is counted exactly up to EXACT_DENSE_MATCHES and estimated by PostgreSQL's
    planner above, so no statement reads every match of every word.
    `scope_is_cubes`: `base` is exactly the live memories of `cube_ids` (no other filter), so the
    counts tell a plain-word search when it has more matches than it counts exactly.
    `fuzzy`: a word no memory in scope holds is corrected to the nearest of the cubes' own words (_corrections):
    a plain-word query also matches the corrections, a boolean one only reports them.
    `on_statement` is called just before the lexical statement is sent (the query embedding starts then)."""
    assert not (count_matches and count_scope), "search counts matches, retrieve counts its scope"
    try:
        scope_sql, scope_params = base.order_by().values("pk").query.sql_with_params()
    except EmptyResultSet:  # no readable cube: Django will not write "cube_id IN ()"
        return LexicalModel(words=[], weights=[], matches=0, matches_exact=True, scope_size=0, best_matches=[])
    lexeme_words, scope_size, frequencies = _words_and_frequencies(cube_ids, parsed.terms)
    corrections = {}
    if fuzzy and any(frequency == 0 for frequency in frequencies.values()):
        found = _corrections(cube_ids, {word: lexeme_words[word] for word, count in frequencies.items() if not count})
        corrections = {word: correction.word for word, correction in found.items()}
        if not parsed.boolean:  # a plain-word search also matches the corrections; a boolean one keeps its logic
            added = {correction.word: correction.documents for correction in found.values()
                     if correction.word not in frequencies}
            frequencies.update(added)
            parsed = parsed.with_terms(list(added))
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
        matching = base.filter(search_vector=tsquery(parsed)).order_by()
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
        if on_statement is not None:
            on_statement()
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
                        scope_size=scope_size, best_matches=best_matches, all_matches=all_matches,
                        corrections=corrections, lexemes=tuple(sorted(set().union(*lexeme_words.values()))))


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


def lexemes_of(words: list[str]) -> dict[str, frozenset[str]]:
    """What PostgreSQL's stemmer makes of each word. A word always stems the same way, so answers are
    kept per process and only new words cost a round trip."""
    known = _cached_lexemes(words)
    missing = [word for word in dict.fromkeys(words) if word not in known]
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) FROM unnest(%s::text[]) AS word",
                [SEARCH_CONFIG, missing],
            )
            found = {word: frozenset(lexemes) for word, lexemes in cursor.fetchall()}
        _remember_lexemes(found)
        known.update(found)
    return known


def _cached_lexemes(words: list[str]) -> dict[str, frozenset[str]]:
    return {word: _lexeme_cache[word] for word in words if word in _lexeme_cache}


def _remember_lexemes(found: dict[str, frozenset[str]]) -> None:
    if len(_lexeme_cache) + len(found) > LEXEME_CACHE_WORDS:
        _lexeme_cache.clear()
    _lexeme_cache.update(found)
