"""Mind's tool adapters, in the seed's shapes.

Each adapter gets the acting user and the validated input model, calls one service through
``run_sync`` (apps/core/threads.py) and returns the seed's data object, built from ``representations``.

The current session is this MCP client's: the open session that ``mind_start_session`` started
under ``client_key()`` (the token and the MCP session), so two clients of one token, or two tokens,
never share one. Tools that act on "the current project" (add_* without project_id,
update_project, end_session) need it and fail with SESSION_NOT_ACTIVE without it; read tools scope
to it when there is one and otherwise cover all the caller's projects. A sharp edge added without
project_id is global (the seed: "null for global edge"), so it needs no session.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


from apps.accounts.models import User
from apps.core.exceptions import Conflict
from apps.core.threads import run_sync
from apps.mcp.profiles.mind.inputs import (
    AddDecisionInput, AddEdgeInput, AddIssueInput, CheckEdgesInput, EndSessionInput, ExportInput, GetContextInput,
    StartSessionInput, UpdateIssueInput, UpdateProjectInput,
)
from apps.mcp.server import client_key
from apps.projects.models import Project, Session
from apps.projects.representations import decision_dict, edge_dict, episode_dict, issue_dict, project_dict
from apps.projects.services import (
    context_get, decision_add, edge_add, edges_check, issue_add, issue_update, project_export, project_update,
    session_current, session_end, session_start,
)


async def mind_start_session(actor: User, params: StartSessionInput) -> dict[str, Any]:
    started = await run_sync(session_start)(
        actor=actor, project_id=params.project_id, project_name=params.project_name,
        detect_from_path=params.detect_from_path, client_key=client_key(),
    )
    return {
        "session_id": str(started.session.pk),
        "project": project_dict(started.project),
        "primer": started.primer,
        "open_issues": [issue_dict(issue) for issue in started.open_issues],
        "pending_decisions": [decision_dict(decision) for decision in started.pending_decisions],
        "relevant_edges": [edge_dict(edge) for edge in started.relevant_edges],
    }


async def mind_end_session(actor: User, params: EndSessionInput) -> dict[str, Any]:
    ended = await run_sync(session_end)(
        actor=actor, client_key=client_key(), summary=params.summary, progress=params.progress,
        still_open=params.still_open, next_steps=params.next_steps, mood=params.mood,
    )
    data: dict[str, Any] = {"session_id": str(ended.session.pk), "captured": True}
    if ended.episode is not None:
        data["episode_created"] = str(ended.episode.pk)
    return data


async def mind_get_context(actor: User, params: GetContextInput) -> dict[str, Any]:
    def get(session: Session | None):
        return context_get(
            # Without project_id the service scopes to the session's project, else to all readable ones.
            actor=actor, query=params.query, types=params.types, include_global=params.include_global is not False,
            project_id=params.project_id, session=session,
        )

    found = await _with_current_session(actor, get)
    data = {
        "decisions": [decision_dict(decision) for decision in found.decisions],
        "issues": [issue_dict(issue) for issue in found.issues],
        "edges": [edge_dict(edge) for edge in found.edges],
        "episodes": [episode_dict(episode) for episode in found.episodes],
    }
    return _with_warnings(data, found.warnings)


async def mind_check_edges(actor: User, params: CheckEdgesInput) -> dict[str, Any]:
    def check(session: Session | None):
        # With a session, the service checks its project and warns each edge once in it.
        return edges_check(
            actor=actor, code=params.code, intent=params.intent, session=session,
            context=params.context.model_dump(exclude_none=True) if params.context else None,
        )

    return {"warnings": [warning.as_dict() for warning in await _with_current_session(actor, check)]}


async def mind_add_decision(actor: User, params: AddDecisionInput) -> dict[str, Any]:
    def add(session: Session | None):
        added = decision_add(
            actor=actor, project_id=_project_required(params.project_id, session), session=session,
            title=params.title, description=params.description, context=params.context, reasoning=params.reasoning,
            alternatives=_dumped(params.alternatives), confidence=params.confidence,
            revisit_if=params.revisit_if or "", trigger_phrases=params.trigger_phrases,
        )
        decision = added.decision
        intent = " ".join([decision.title, decision.description, decision.context, decision.reasoning])
        return added, _check_write(actor, session, decision.project, intent=intent)

    added, warnings = await _with_current_session(actor, add)
    data = {"decision": decision_dict(added.decision)}
    if added.superseded is not None:
        data["superseded"] = decision_dict(added.superseded)
    return _with_warnings(data, warnings)


async def mind_add_issue(actor: User, params: AddIssueInput) -> dict[str, Any]:
    def add(session: Session | None):
        issue = issue_add(
            actor=actor, project_id=_project_required(params.project_id, session), session=session,
            title=params.title, description=params.description, severity=params.severity,
            symptoms=params.symptoms, trigger_phrases=params.trigger_phrases,
        )
        text = " ".join([issue.title, issue.description, *issue.symptoms])
        return issue, _check_write(actor, session, issue.project, intent=text, symptom_text=text)

    issue, warnings = await _with_current_session(actor, add)
    return _with_warnings({"issue": issue_dict(issue)}, warnings)


async def mind_update_issue(actor: User, params: UpdateIssueInput) -> dict[str, Any]:
    def update(session: Session | None):
        return issue_update(
            actor=actor, issue_id=params.issue_id, session=session, status=params.status,
            add_attempt=params.add_attempt.model_dump(exclude_none=True) if params.add_attempt else None,
            current_theory=params.current_theory, blocked_by=params.blocked_by, resolution=params.resolution,
        )

    return {"issue": issue_dict(await _with_current_session(actor, update))}


async def mind_add_edge(actor: User, params: AddEdgeInput) -> dict[str, Any]:
    def add(session: Session | None):
        return edge_add(
            actor=actor, project_id=params.project_id, session=session, title=params.title,
            description=params.description, workaround=params.workaround,
            detection_patterns=_dumped(params.detection_patterns), symptoms=params.symptoms,
            root_cause=params.root_cause or "", share_with_community=bool(params.share_with_community),
        )

    return {"edge": edge_dict(await _with_current_session(actor, add))}


async def mind_update_project(actor: User, params: UpdateProjectInput) -> dict[str, Any]:
    def update(session: Session | None):
        return project_update(
            actor=actor, project_id=_project_required(None, session, may_name_project=False),
            current_goal=params.current_goal, blocked_by=params.blocked_by, open_threads=params.open_threads,
            add_to_stack=params.add_to_stack, status=params.status,
        )

    return {"project": project_dict(await _with_current_session(actor, update))}


async def mind_export(actor: User, params: ExportInput) -> dict[str, Any]:
    exported = await run_sync(project_export)(
        actor=actor, format=params.format or "json", project_id=params.project_id,
        include_sessions=bool(params.include_sessions),
    )
    return {"path": str(exported.path.resolve()), "entities": exported.entities}


async def _with_current_session(actor: User, call: Callable[[Session | None], Any]) -> Any:
    """Runs ``call`` with this client's current session (or None), both in one worker thread."""
    key = client_key()
    return await run_sync(lambda: call(session_current(actor=actor, client_key=key)))()


def _project_required(project_id: str | None, session: Session | None, *, may_name_project: bool = True):
    """The project a write names, else the current session's; with neither, SESSION_NOT_ACTIVE."""
    if project_id is not None:
        return project_id
    if session is None:
        fix = "call mind_start_session first" + (", or pass project_id" if may_name_project else "")
        raise Conflict(f"No active session: {fix}", code="session_not_active")
    return session.project_id


def _check_write(actor: User, session: Session | None, project: Project, **text) -> list:
    """Mind checks sharp edges inside add_decision and add_issue too (REFERENCE.md): in a session, what
    was just written is checked as an intent (an issue's text also against edges' symptoms)."""
    return edges_check(actor=actor, project=project, session=session, **text) if session else []


def _with_warnings(data: dict[str, Any], warnings: list) -> dict[str, Any]:
    """In a session, a check inside a tool counts its edges as warned, so the warnings must reach the
    agent: Engram adds them to the seed's shape, under "warnings", only when there are any."""
    if warnings:
        data["warnings"] = [warning.as_dict() for warning in warnings]
    return data


def _dumped(items) -> list[dict[str, Any]] | None:
    """A list of nested input models as the plain dicts the services validate (unset keys left out)."""
    return [item.model_dump(exclude_none=True) for item in items] if items is not None else None
