"""generate_search_plan: queries for a goal, one per query type, written from the goal's words and the words the
caller's own graph uses near it, each with its recall measured by running it.

1. **The goal's pool** P: the goal's best PLAN_POOL nodes by the memory core's fused retrieval (dense + lexical +
   graph signals), over the cubes the caller may read, without reinforcement.
2. **The graph's words**: the keywords of P's best PLAN_WORD_HITS nodes, each scored sum(relevance of the hits that
   carry it) x idf, idf = ln(1 + (N - df + 0.5) / (df + 0.5)) over the caller's readable cubes (retrieval's own IDF,
   from the per-cube lexeme counts); words of the goal itself are left out. The most distinctive come first.
3. **A query per type** (the first ``max_queries`` of ``query_types``): the goal's content words, plus
   - semantic: the graph's most distinctive words near the goal;
   - causal: the keywords of the nodes causal links join to P (either end), else of P's nodes that state a cause;
   - code: identifiers in P's text (snake_case, camelCase, dotted names, paths, calls, backticked code), else the
     keywords of P's procedural nodes;
   - temporal: the dates, years, months, weekdays and versions P's text names, else the newest P node's year;
   - hierarchical: the keywords of the nodes hierarchical links join to P, else P's categories and tags.
   When a type finds nothing of its own in the graph, the query adds the graph's distinctive words and the
   rationale says so.
4. **expected_recall** of a query q = |top_PLAN_POOL(q) ∩ P| / |P|: run for real (fused retrieval, no
   reinforcement), 0 when P is empty. ``union_recall`` is the same share for the union of every query's hits.
   ``execution_strategy`` is ``parallel`` when the union recovers more of P than the best query alone (the queries
   complement each other), else ``sequential`` (the best query, listed first among equals, recovers all they do).
   ``token_estimate`` counts the queries' tokens with the embedding model's tokenizer.

Nothing is written: no session item, no access counts.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Q

from apps.accounts.models import User
from apps.cognition.limits import GOAL_MAX_CHARS, GOAL_MIN_CHARS, PLAN_GRAPH_WORDS, PLAN_POOL, PLAN_QUERIES, PLAN_WORD_HITS
from apps.cognition.selectors.walks import readable_cube_ids
from apps.core.exceptions import InvalidInput
from apps.memories.embeddings import count_text_tokens
from apps.memories.models import SEARCH_CONFIG, CubeLexeme, Memory, MemoryLink
from apps.memories.services import memory_retrieve
from apps.memories.text import STOPWORDS, causal_claims, words

QUERY_TYPES = ("semantic", "causal", "code", "temporal", "hierarchical")
DEFAULT_QUERY_TYPES = ("semantic", "causal", "code")
MAX_QUERY_CHARS = 200
# Words of a goal that say what the agent wants to do, not what it looks for ("Find all ...", "Understand why ...").
GOAL_FILLER = frozenset("find understand look looking search searching know show tell explain want need trying try "
                        "every everything anything something".split())
CODE_TOKEN = re.compile(
    r"`([^`\n]{2,60})`"  # backticked code
    r"|\b([A-Za-z_][A-Za-z0-9_]*\(\))"  # a call
    r"|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b"  # snake_case
    r"|\b([a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b"  # camelCase, PascalCase
    r"|\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\b"  # dotted names, file names
    r"|(?<!\w)(/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+)"  # paths
)
MONTHS = ("january february march april may june july august september october november december").split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
TEMPORAL_TOKEN = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|(?:19|20)\d{2}|v?\d+\.\d+(?:\.\d+)?|yesterday|today|tomorrow|last (?:week|month|year)|"
    r"next (?:week|month|year)|(?:" + "|".join(MONTHS + WEEKDAYS) + r"))\b", re.IGNORECASE)


@dataclass(frozen=True)
class PlannedQuery:
    query: str
    query_type: str
    rationale: str
    expected_recall: float
    recovered: list[str] = field(default_factory=list)  # the pool's nodes this query retrieves


@dataclass(frozen=True)
class SearchPlan:
    goal: str
    queries: list[PlannedQuery]
    execution_strategy: str
    token_estimate: int
    pool: list[str]
    union_recall: float


def clean_goal(goal) -> str:
    if not isinstance(goal, str) or not goal.strip():
        raise InvalidInput("goal cannot be empty: say what you are trying to find.", field="goal")
    goal = " ".join(goal.split())
    if not GOAL_MIN_CHARS <= len(goal) <= GOAL_MAX_CHARS:
        raise InvalidInput(f"goal must be {GOAL_MIN_CHARS} to {GOAL_MAX_CHARS} characters, got {len(goal)}.",
                           field="goal")
    return goal


def clean_query_types(query_types) -> list[str]:
    if query_types is None:
        return list(DEFAULT_QUERY_TYPES)
    if isinstance(query_types, str) or not isinstance(query_types, (list, tuple)) or not query_types:
        raise InvalidInput(f"query_types must be a non-empty list of {', '.join(QUERY_TYPES)}.", field="query_types")
    for index, value in enumerate(query_types):
        if value not in QUERY_TYPES:
            raise InvalidInput(f"query_types[{index}] must be one of {', '.join(QUERY_TYPES)}.",
                               field=f"query_types[{index}]")
    return list(dict.fromkeys(query_types))


def search_plan_generate(*, actor: User, goal, query_types=None, max_queries=None) -> SearchPlan:
    goal = clean_goal(goal)
    types = clean_query_types(query_types)
    limit = PLAN_QUERIES.clean(max_queries, field="max_queries")
    found = memory_retrieve(actor=actor, text=goal, limit=PLAN_POOL, reinforce=False)
    pool = [str(item.memory.pk) for item in found.items]
    hits = found.items[:PLAN_WORD_HITS]
    readable = readable_cube_ids(actor=actor)
    terms = goal_terms(goal)
    distinctive = _distinctive_words(hits, goal, readable)
    drafts = [_draft(kind, terms, distinctive, found.items, readable) for kind in types[:limit]]
    queries, union = [], set()
    for kind, (text, rationale) in zip(types[:limit], drafts):
        retrieved = [str(item.memory.pk) for item in
                     memory_retrieve(actor=actor, text=text, limit=PLAN_POOL, reinforce=False).items]
        recovered = [node for node in retrieved if node in set(pool)]
        union |= set(recovered)
        recall = len(recovered) / len(pool) if pool else 0.0
        if not pool:
            rationale += " Your graph has nothing near this goal yet, so there was nothing to recover."
        queries.append(PlannedQuery(text, kind, rationale, round(recall, 4), recovered))
    union_recall = round(len(union) / len(pool), 4) if pool else 0.0
    best = max((query.expected_recall for query in queries), default=0.0)
    strategy = "parallel" if len(queries) > 1 and union_recall > best else "sequential"
    tokens = sum(count_text_tokens([query.query for query in queries])) if queries else 0
    return SearchPlan(goal=goal, queries=queries, execution_strategy=strategy, token_estimate=tokens, pool=pool,
                      union_recall=union_recall)


def goal_terms(goal: str) -> list[str]:
    """The goal's content words in the goal's order, once each, without the words that only say "I am looking"."""
    return list(dict.fromkeys(word for word in words(goal)
                              if word not in STOPWORDS and word not in GOAL_FILLER and len(word) > 2))


def _distinctive_words(hits, goal: str, readable: list[str]) -> list[str]:
    """The keywords of the goal's best hits, most distinctive first: sum of the relevance of the hits that carry a
    word, times its IDF over the readable cubes. Words sharing a lexeme with the goal's are left out."""
    weight: Counter = Counter()
    for item in hits:
        for word in dict.fromkeys(keyword.lower() for keyword in item.memory.keywords):
            weight[word] += max(item.relevance, 1e-6)
    if not weight:
        return []
    idf, goal_lexemes, lexemes = _idf(list(weight), goal, readable)
    kept = [word for word in weight if lexemes.get(word) and not lexemes[word] & goal_lexemes]
    return sorted(kept, key=lambda word: (-weight[word] * idf.get(word, 0.0), word))


def _idf(candidates: list[str], goal: str, readable: list[str]) -> tuple[dict[str, float], set[str], dict[str, set]]:
    """Each word's IDF over the readable cubes (retrieval's formula, from the per-cube lexeme counts), the goal's
    lexemes and each word's lexemes: one statement."""
    table = CubeLexeme._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH w AS (SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) AS lexemes "
            f"FROM unnest(%s::text[]) AS word) "
            f"SELECT w.word, w.lexemes, (SELECT coalesce(sum(documents), 0) FROM {table} "
            f"WHERE cube_id = ANY(%s) AND lexeme = ANY(w.lexemes)), "
            f"(SELECT coalesce(sum(documents), 0) FROM {table} WHERE cube_id = ANY(%s) AND lexeme = ''), "
            f"tsvector_to_array(to_tsvector(%s::regconfig, %s)) FROM w",
            [SEARCH_CONFIG, candidates, readable, readable, SEARCH_CONFIG, goal])
        rows = cursor.fetchall()
    idf, lexemes, goal_lexemes = {}, {}, set()
    for word, word_lexemes, df, total, goal_array in rows:
        lexemes[word] = set(word_lexemes or [])
        goal_lexemes = set(goal_array or [])
        df = min(int(df), int(total))
        idf[word] = math.log(1 + (int(total) - df + 0.5) / (df + 0.5))
    return idf, goal_lexemes, lexemes


def _added(terms: list[str], found: list[str]) -> list[str]:
    """The words a query adds to the goal's: the first PLAN_GRAPH_WORDS of ``found`` that the goal does not have."""
    return [word for word in dict.fromkeys(found) if word.lower() not in terms][:PLAN_GRAPH_WORDS]


def _query(terms: list[str], added: list[str], *, lead: str = "") -> str:
    text = " ".join(part for part in [lead, *terms, *added] if part)
    return text[:MAX_QUERY_CHARS].rsplit(" ", 1)[0] if len(text) > MAX_QUERY_CHARS else text


def _named(found: list[str]) -> str:
    return ", ".join(f"'{word}'" for word in found)


def _draft(kind: str, terms: list[str], distinctive: list[str], items, readable: list[str]) -> tuple[str, str]:
    """(query, rationale) of one type."""
    top = _added(terms, distinctive)
    fallback = (f" Nothing {kind} was found near your goal, so the query adds your graph's distinctive words "
                f"({_named(top)})." if top else f" Nothing {kind} was found near your goal.")
    if kind == "semantic":
        return _query(terms, top), (
            "Your goal's words with the words your own graph uses most distinctively near it"
            + (f" ({_named(top)})." if top else " (none yet: nothing is stored near it)."))
    if kind == "causal":
        found = _added(terms, _linked_keywords(items, readable, link_type=MemoryLink.LinkType.CAUSAL))
        if not found:
            found = _added(terms, _keywords_of([item for item in items if causal_claims(item.memory.content)]))
        if found:
            return _query(terms, found, lead="why"), (
                f"Causes and effects: the words of the nodes linked by cause and effect to the ones near your goal "
                f"({_named(found)}).")
        return _query(terms, top, lead="why"), "Asks for causes and effects." + fallback
    if kind == "code":
        found = _added(terms, _code_tokens(items)) or _added(
            terms, _keywords_of([item for item in items if item.memory.primary_sector == "procedural"]))
        if found:
            return _query(terms, found), f"Code-level names the nodes near your goal use ({_named(found)})."
        return _query(terms, top), "Implementation perspective." + fallback
    if kind == "temporal":
        found = _added(terms, _temporal_tokens(items))
        if found:
            return _query(terms, found, lead="when"), f"The times the nodes near your goal name ({_named(found)})."
        newest = max((item.memory.created_at for item in items), default=None)
        extra = [str(newest.year)] if newest else []
        return _query(terms, extra, lead="when"), (
            "No dates in the nodes near your goal"
            + (f"; the query names the year of the newest of them ({extra[0]})." if extra else "."))
    found = _added(terms, _linked_keywords(items, readable, link_type=MemoryLink.LinkType.HIERARCHICAL)) \
        or _added(terms, _labels(items))
    if found:
        return _query(terms, found), (
            f"Broader and narrower nodes: the words of the summaries, kinds or members hierarchical links join to "
            f"the nodes near your goal, or their categories and tags ({_named(found)}).")
    return _query(terms, top), "Hierarchy perspective." + fallback


def _keywords_of(items) -> list[str]:
    counts: Counter = Counter()
    for rank, item in enumerate(items):
        for word in item.memory.keywords:
            counts[word.lower()] += 1.0 / (rank + 1)
    return [word for word, _ in sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))]


def _linked_keywords(items, readable: list[str], *, link_type: str) -> list[str]:
    """Keywords of the live readable nodes at the far end of ``link_type`` links from the hits (either direction),
    strongest link first; a far end may be another hit."""
    ids = [item.memory.pk for item in items]
    if not ids:
        return []
    links = (MemoryLink.objects.filter(link_type=link_type, weight__gt=0)
             .filter(Q(source_id__in=ids, target__cube_id__in=readable, target__deleted_at__isnull=True)
                     | Q(target_id__in=ids, source__cube_id__in=readable, source__deleted_at__isnull=True))
             .order_by("-weight").values_list("source_id", "target_id", "weight")[:50])
    inside, weight = set(ids), Counter()
    for source, target, link_weight in links:
        for near, far in ((source, target), (target, source)):
            if near in inside and far != near:
                weight[far] = max(weight[far], link_weight)
    if not weight:
        return []
    keywords = dict(Memory.objects.filter(pk__in=list(weight)).values_list("pk", "keywords"))
    counts: Counter = Counter()
    for node, link_weight in weight.items():
        for position, word in enumerate(keywords.get(node) or []):  # a node's keywords come most telling first
            counts[word.lower()] += link_weight / (position + 1)
    return [word for word, _ in sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))]


def _code_tokens(items) -> list[str]:
    counts: Counter = Counter()
    for rank, item in enumerate(items):
        for match in CODE_TOKEN.finditer(item.memory.content):
            token = next(group for group in match.groups() if group)
            counts[token] += 1.0 / (rank + 1)
    return [token for token, _ in sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))]


def _temporal_tokens(items) -> list[str]:
    counts: Counter = Counter()
    for rank, item in enumerate(items):
        for match in TEMPORAL_TOKEN.finditer(item.memory.content):
            counts[match.group(1).lower()] += 1.0 / (rank + 1)
    return [token for token, _ in sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))]


def _labels(items) -> list[str]:
    counts: Counter = Counter()
    for rank, item in enumerate(items):
        for label in [item.memory.category, *item.memory.tags]:
            if label:
                counts[label.lower()] += 1.0 / (rank + 1)
    return [label for label, _ in sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))]

