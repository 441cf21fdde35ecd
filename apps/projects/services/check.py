"""Checking sharp edges: which known gotchas apply to the code, intent or context at hand.

The rules (REFERENCE.md, Mind):
- A **code** pattern is a case-insensitive regex searched in ``code``, time-bounded, honouring its
  ``file_glob`` against ``context.file_path``: severity **high**.
- An **intent** pattern is a keyword list matched against ``intent``: **high**.
- A **context** pattern is a keyword list matched against the context: ``runtime``, ``framework`` and
  ``file_path``, plus the stack and current goal of the edge's project (or, for a global edge, of
  the project checked): **medium**. (See apps/projects/patterns.py for how keyword lists are read.)
- An edge's **symptoms** match ``symptom_text`` (an issue's title, description and symptoms, given by
  whoever checks an issue) when a symptom occurs in it, case- and spacing-insensitively: **medium**.
Each edge gives at most one warning, for its strongest match (high before medium; code, then intent,
then context, then symptoms). Warnings come high first, then the project's own edges before global ones.

Scope: the edges of the project checked (``project_id``, else the session's project) plus the readable
global edges; with neither, every readable edge (a read-only check with no session covers all of the
actor's projects). With a session, each edge warns once: edges in ``session.warned_edges`` are skipped
and the new ones are recorded, under a row lock so that two concurrent checks do not both warn.
The recommendation is the edge's workaround, or a sentence built from its title and root cause.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput, NotFound
from apps.projects.models import Project, Session, SharpEdge
from apps.projects.patterns import glob_allows, keywords_match, pattern_search
from apps.projects.representations import edge_dict
from apps.projects.selectors import edge_list, project_get
from apps.projects.validation import MAX_ITEM_CHARS, MAX_TEXT_CHARS, clean_text

MAX_CODE_CHARS = 100_000
CONTEXT_KEYS = ("runtime", "framework", "file_path")
SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}
SYMPTOM_PATTERN_TYPE = "symptom"


@dataclass
class EdgeWarning:
    edge: SharpEdge
    matched_pattern: dict
    severity: str
    recommendation: str

    def as_dict(self) -> dict[str, Any]:
        """The seed's warning shape."""
        return {"edge": edge_dict(self.edge), "matched_pattern": self.matched_pattern, "severity": self.severity,
                "recommendation": self.recommendation}


@dataclass(frozen=True)
class CheckInput:
    """What one check looks at, cleaned once; ``project_context`` is the checked project's stack and goal."""

    code: str = ""
    intent: str = ""
    context: str = ""
    file_path: str = ""
    symptom_text: str = ""
    project_context: str = ""


def clean_check_context(value, *, field: str = "context") -> dict[str, str]:
    """``{runtime?, framework?, file_path?}`` with short string values; None is {}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"{field} must be an object with runtime, framework and file_path.", field=field)
    unknown = sorted(set(value) - set(CONTEXT_KEYS))
    if unknown:
        raise InvalidInput(f"{field}.{unknown[0]} is not a known key: use {', '.join(CONTEXT_KEYS)}.",
                           field=f"{field}.{unknown[0]}")
    return {key: clean_text(value.get(key), field=f"{field}.{key}", max_chars=MAX_ITEM_CHARS) for key in CONTEXT_KEYS}


def project_context_text(project: Project | None) -> str:
    """The words of a project that context patterns look at: its stack and current goal."""
    if project is None:
        return ""
    return " ".join([*project.stack, project.current_goal])


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _symptom_matches(edge: SharpEdge, text: str) -> str | None:
    if not text:
        return None
    haystack = _normalised(text)
    return next((symptom for symptom in edge.symptoms if _normalised(symptom) and _normalised(symptom) in haystack),
                None)


def edge_match(edge: SharpEdge, check: CheckInput) -> tuple[dict, str] | None:
    """The strongest (pattern, severity) of ``edge`` that ``check`` matches, or None."""
    patterns = edge.detection_patterns or []
    for pattern in patterns:
        if (pattern.get("type") == "code" and check.code and glob_allows(pattern.get("file_glob"), check.file_path)
                and pattern_search(pattern["pattern"], check.code) is not None):
            return pattern, "high"
    for pattern in patterns:
        if pattern.get("type") == "intent" and check.intent and keywords_match(pattern["pattern"], check.intent):
            return pattern, "high"
    own_project = project_context_text(edge.project) if edge.project_id else ""
    context_text = " ".join(filter(None, [check.context, check.project_context, own_project]))
    for pattern in patterns:
        if pattern.get("type") == "context" and context_text and keywords_match(pattern["pattern"], context_text):
            return pattern, "medium"
    symptom = _symptom_matches(edge, check.symptom_text)
    if symptom is not None:
        return {"type": SYMPTOM_PATTERN_TYPE, "pattern": symptom, "description": "Known symptom"}, "medium"
    return None


def recommendation_for(edge: SharpEdge) -> str:
    if edge.workaround:
        return edge.workaround
    reason = edge.root_cause or edge.description
    return f"Known sharp edge: {edge.title}." + (f" {reason}" if reason else "")


def _own_session(*, actor: User, session: Session) -> Session:
    """The session row, locked; someone else's session is "not found" (sessions come from the edges'
    own lookups, so this only guards against a caller mixing actors up)."""
    locked = Session.objects.select_for_update().filter(pk=session.pk, owner=actor).first()
    if locked is None:
        raise NotFound("Session not found.", code="entity_not_found", extra={"field": "session_id"})
    return locked


def edges_check(*, actor: User, code=None, intent=None, context=None, project_id=None, session: Session | None = None,
                symptom_text=None, project: Project | None = None) -> list[EdgeWarning]:
    """The warnings of the sharp edges that apply (see the module docstring for the rules). A service
    that has already read the project with project_get passes it as ``project`` instead of
    ``project_id``; it only narrows, since the edges are read through edge_list as ``actor``."""
    cleaned_context = clean_check_context(context)
    if project_id is not None:
        project = project_get(actor=actor, project_id=project_id)
    if project is None and session is not None:
        project = session.project
    check = CheckInput(
        code=clean_text(code, field="code", max_chars=MAX_CODE_CHARS),
        intent=clean_text(intent, field="intent", max_chars=MAX_TEXT_CHARS),
        context=" ".join(filter(None, cleaned_context.values())),
        file_path=cleaned_context.get("file_path", ""),
        symptom_text=clean_text(symptom_text, field="symptom_text", max_chars=MAX_TEXT_CHARS),
        project_context=project_context_text(project),
    )
    with transaction.atomic():
        locked = _own_session(actor=actor, session=session) if session is not None else None
        already = set(locked.warned_edges) if locked is not None else set()
        warnings = []
        for edge in edge_list(actor=actor, project_id=project, include_global=True).order_by("created_at"):
            if edge.pk in already:
                continue
            found = edge_match(edge, check)
            if found is not None:
                warnings.append(EdgeWarning(edge=edge, matched_pattern=found[0], severity=found[1],
                                            recommendation=recommendation_for(edge)))
        warnings.sort(key=lambda warning: (SEVERITY_ORDER[warning.severity], warning.edge.project_id is None))
        if locked is not None and warnings:
            locked.warned_edges = [*locked.warned_edges, *(warning.edge.pk for warning in warnings)]
            locked.save(update_fields=["warned_edges", "updated_at"])
            session.warned_edges = locked.warned_edges
    return warnings
