"""get_context: the decisions, issues, sharp edges and episodes that bear on a question, ranked.

**Scope.** The entities of ``project_id`` (else of the session's project; else of every readable
project), live and with a live project; ``include_global`` adds the readable global sharp edges.
``types`` narrows to some kinds ("decision", "issue", "edge" or "sharp_edge", "episode"; plurals too).

**Similarity.** The query is embedded once. Each entity's memory-graph node gives, in SQL,
- *dense*: the best cosine similarity between the query and the node's sector vectors;
- *lexical*: ``ts_rank`` of the node's full-text vector against the query's content words (any word),
  divided by the best rank among the candidates of the same call, so 1.0 is the best lexical match.
``sim = 0.6 x dense + 0.4 x lexical``: the dense part finds paraphrases, the lexical part rewards the
exact terms people search by (LoCoMo shows lexical matching matters; REFERENCE.md).

**Score** (REFERENCE.md, Mind): ``final = sim x (1 + recency + freq + trigger) x decay`` with
- recency = 0.3 x 0.5^(days since the entity last changed / 7);
- freq = min(0.2, 0.1 x log2(1 + access count));
- trigger = 0.2 when one of its trigger phrases matches the query: the phrase occurs in the query, or
  all of the phrase's keywords do (patterns.text_keywords; "why not vibememo" matches "why didn't we use
  VibeMemo?"). Sharp edges and episodes have no trigger phrases;
- decay = 0.5^(days since last access (else since the last change) / (half-life x status factor)),
  half-lives decision 60, issue 30, edge 120, episode 90 days; status factors superseded (and revoked)
  0.2, resolved / won't fix 0.5, blocked 0.8, otherwise 1.
Entities scoring below 0.1 are dropped; each kind keeps its best ``limit``. Returned entities are
accessed: one UPDATE per kind raises their access count and stamps ``last_accessed_at``.

**Edge checks.** With a session, the query is also checked as an intent (edges_check): the warnings come
back in ``ContextResult.warnings`` and count as warned for the session, like any check.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F, FloatField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.core.limits import CONTEXT_LIMIT
from apps.memories.embeddings import embed_query
from apps.memories.models import SEARCH_CONFIG, SECTORS, MemoryVector
from apps.memories.query import any_words
from apps.memories.validation import MAX_QUERY_CHARS
from apps.memories.vectors import BestSectorSimilarity
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.patterns import shared_keywords, text_keywords
from apps.projects.selectors import ENTITY_MODELS, entities_readable, project_get, session_owned
from apps.projects.services.check import EdgeWarning, edges_check
from apps.core.validation import clean_bool, clean_title

DENSE_WEIGHT = 0.6
LEXICAL_WEIGHT = 0.4
RECENCY_WEIGHT = 0.3
RECENCY_HALF_LIFE_DAYS = 7
MAX_FREQ = 0.2
TRIGGER_BOOST = 0.2
MIN_SCORE = 0.1
MAX_LIMIT = CONTEXT_LIMIT.high
HALF_LIVES = {"decision": 60, "issue": 30, "sharp_edge": 120, "episode": 90}
STATUS_FACTORS = {"superseded": 0.2, "revoked": 0.2, "resolved": 0.5, "wont_fix": 0.5, "blocked": 0.8}
KIND_NAMES = {
    "decision": "decision", "decisions": "decision", "issue": "issue", "issues": "issue",
    "edge": "sharp_edge", "edges": "sharp_edge", "sharp_edge": "sharp_edge", "sharp_edges": "sharp_edge",
    "episode": "episode", "episodes": "episode",
}
KINDS = ("decision", "issue", "sharp_edge", "episode")


@dataclass
class ContextResult:
    decisions: list[Decision] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    edges: list[SharpEdge] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    warnings: list[EdgeWarning] = field(default_factory=list)
    # Each returned entity's final score, by id (for the dashboard and for tests of the ranking).
    scores: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Candidate:
    pk: object
    dense: float
    lexical: float
    status: str
    trigger_phrases: list[str]
    updated_at: datetime
    last_accessed_at: datetime | None
    access_count: int


def clean_types(value, *, field_name: str = "types") -> list[str]:
    if value is None:
        return list(KINDS)
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{field_name} must be a list such as [\"decision\", \"issue\"].", field=field_name)
    unknown = [item for item in value if not isinstance(item, str) or item.lower() not in KIND_NAMES]
    if unknown:
        raise InvalidInput(f"{field_name}: unknown type {unknown[0]!r}; use decision, issue, edge or episode.",
                           field=field_name)
    return list(dict.fromkeys(KIND_NAMES[item.lower()] for item in value))


def clean_context_limit(value) -> int:
    if value is None:
        return CONTEXT_LIMIT.default
    if isinstance(value, bool) or not isinstance(value, int) or not CONTEXT_LIMIT.low <= value <= MAX_LIMIT:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}.", field="limit")
    return value


def trigger_matches(phrases: list[str], query: str) -> bool:
    """Whether a trigger phrase matches the query (see the module docstring)."""
    lowered, query_words = query.lower(), text_keywords(query)
    for phrase in phrases:
        words = text_keywords(phrase)
        if phrase.strip().lower() in lowered or (words and shared_keywords(words, query_words) == words):
            return True
    return False


def _days(moment: datetime | None, now: datetime) -> float:
    return max(0.0, (now - moment).total_seconds() / 86400) if moment else 0.0


def context_score(candidate: Candidate, *, kind: str, query: str, now: datetime) -> float:
    """The Mind formula (module docstring) for one candidate whose lexical part is already normalised."""
    sim = DENSE_WEIGHT * candidate.dense + LEXICAL_WEIGHT * candidate.lexical
    recency = RECENCY_WEIGHT * 0.5 ** (_days(candidate.updated_at, now) / RECENCY_HALF_LIFE_DAYS)
    freq = min(MAX_FREQ, 0.1 * math.log2(1 + candidate.access_count))
    trigger = TRIGGER_BOOST if trigger_matches(candidate.trigger_phrases, query) else 0.0
    half_life = HALF_LIVES[kind] * STATUS_FACTORS.get(candidate.status, 1.0)
    decay = 0.5 ** (_days(candidate.last_accessed_at or candidate.updated_at, now) / half_life)
    return sim * (1 + recency + freq + trigger) * decay


def _dense(vector) -> Coalesce:
    """The best cosine similarity between the query and the entity's node's sector vectors (0 without)."""
    similarity = MemoryVector.objects.filter(memory_id=OuterRef("node_id")).annotate(
        similarity=BestSectorSimilarity(query=vector, sectors=SECTORS)).values("similarity")
    return Coalesce(Subquery(similarity, output_field=FloatField()), Value(0.0))


def _scope(*, actor: User, kind: str, project: Project | None, include_global: bool) -> QuerySet:
    queryset = entities_readable(actor=actor, kind=kind).filter(node__isnull=False)
    if kind == "sharp_edge" and not include_global:
        queryset = queryset.filter(project__isnull=False)
    if project is not None:
        own = Q(project=project)
        queryset = queryset.filter(own | Q(project__isnull=True) if kind == "sharp_edge" else own)
    return queryset


def _candidates(queryset: QuerySet, *, vector, tsquery: str) -> list[Candidate]:
    lexical = (SearchRank(F("node__search_vector"), SearchQuery(tsquery, search_type="raw", config=SEARCH_CONFIG))
               if tsquery else Value(0.0))
    names = {f.name for f in queryset.model._meta.fields}
    rows = queryset.annotate(dense_sim=_dense(vector), lexical_rank=Coalesce(lexical, Value(0.0))).values(
        "pk", "dense_sim", "lexical_rank", "updated_at", "last_accessed_at", "access_count",
        *(name for name in ("status", "trigger_phrases") if name in names),
    )
    return [Candidate(pk=row["pk"], dense=max(0.0, row["dense_sim"] or 0.0), lexical=row["lexical_rank"] or 0.0,
                      status=row.get("status", ""), trigger_phrases=row.get("trigger_phrases", []),
                      updated_at=row["updated_at"], last_accessed_at=row["last_accessed_at"],
                      access_count=row["access_count"])
            for row in rows]


def _normalised(candidates: list[Candidate]) -> list[Candidate]:
    best = max((c.lexical for c in candidates), default=0.0)
    if best <= 0:
        return candidates
    return [Candidate(**{**c.__dict__, "lexical": c.lexical / best}) for c in candidates]


def _ranked(*, actor: User, kind: str, project, include_global: bool, vector, tsquery: str, query: str,
            limit: int, now: datetime) -> list[tuple[object, float]]:
    """The best (entity id, score) pairs of one kind, best first, at or above MIN_SCORE."""
    queryset = _scope(actor=actor, kind=kind, project=project, include_global=include_global)
    scored = [(c.pk, context_score(c, kind=kind, query=query, now=now))
              for c in _normalised(_candidates(queryset, vector=vector, tsquery=tsquery))]
    scored = [pair for pair in scored if pair[1] >= MIN_SCORE]
    scored.sort(key=lambda pair: -pair[1])
    return scored[:limit]


def _accessed(model, ids: list, now: datetime) -> list:
    """The entities, in the order of ``ids``, counted as accessed (one UPDATE)."""
    model.objects.filter(pk__in=ids).update(access_count=F("access_count") + 1, last_accessed_at=now)
    entities = model.objects.select_related("project").in_bulk(ids)
    return [entities[pk] for pk in ids]


def context_get(*, actor: User, query, types=None, project_id=None, include_global: bool = True,
                session: Session | None = None, limit: int = 10) -> ContextResult:
    """The entities that bear on ``query``, ranked per kind (see the module docstring)."""
    query = clean_title(query, field="query", max_chars=MAX_QUERY_CHARS)
    kinds, limit = clean_types(types), clean_context_limit(limit)
    include_global = clean_bool(include_global, field="include_global")
    session = session_owned(actor=actor, session=session)
    project = project_get(actor=actor, project_id=project_id) if project_id is not None else (
        session.project if session is not None else None)
    vector, tsquery, now = embed_query(query), any_words(query).tsquery, timezone.now()
    result = ContextResult()
    targets = {"decision": result.decisions, "issue": result.issues, "sharp_edge": result.edges,
               "episode": result.episodes}
    for kind in kinds:
        ranked = _ranked(actor=actor, kind=kind, project=project, include_global=include_global, vector=vector,
                         tsquery=tsquery, query=query, limit=limit, now=now)
        if not ranked:
            continue
        targets[kind].extend(_accessed(ENTITY_MODELS[kind], [pk for pk, _ in ranked], now))
        result.scores.update(dict(ranked))
    if session is not None:
        result.warnings = edges_check(actor=actor, intent=query, project=project, session=session)
    return result
