"""Projects, sessions and their entities as plain JSON objects: the shapes of the Mind seed (its
Project, Session, Decision, Issue, SharpEdge and Episode), used by the MCP profile and the JSON export.
REST has DRF serializers of the same fields, for its schema."""
from __future__ import annotations

from typing import Any

from apps.core.timestamps import iso_or_none
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge


def _id(value) -> str | None:
    return str(value) if value else None


def project_dict(project: Project) -> dict[str, Any]:
    return {
        "id": str(project.pk), "name": project.name, "cube": project.cube_id, "stack": project.stack,
        "repo_path": project.repo_path, "current_goal": project.current_goal, "blocked_by": project.blocked_by,
        "open_threads": project.open_threads, "status": project.status,
        "last_session_at": iso_or_none(project.last_session_at), "last_session_summary": project.last_session_summary,
        "last_session_next_steps": project.last_session_next_steps,
        "created_at": iso_or_none(project.created_at), "updated_at": iso_or_none(project.updated_at),
    }


def session_dict(session: Session) -> dict[str, Any]:
    return {
        "id": str(session.pk), "project_id": str(session.project_id), "started_at": iso_or_none(session.started_at),
        "ended_at": iso_or_none(session.ended_at), "summary": session.summary, "progress": session.progress,
        "still_open": session.still_open, "next_steps": session.next_steps, "mood": session.mood,
    }


def _entity_fields(entity) -> dict[str, Any]:
    return {
        "id": str(entity.pk), "project_id": _id(entity.project_id), "node_id": _id(entity.node_id),
        "created_at": iso_or_none(entity.created_at), "updated_at": iso_or_none(entity.updated_at),
    }


def decision_dict(decision: Decision) -> dict[str, Any]:
    return {
        **_entity_fields(decision), "title": decision.title, "description": decision.description,
        "context": decision.context, "reasoning": decision.reasoning, "alternatives": decision.alternatives,
        "confidence": decision.confidence, "revisit_if": decision.revisit_if,
        "trigger_phrases": decision.trigger_phrases, "status": decision.status,
        "superseded_by": _id(decision.superseded_by_id),
    }


def issue_dict(issue: Issue) -> dict[str, Any]:
    return {
        **_entity_fields(issue), "title": issue.title, "description": issue.description,
        "severity": issue.severity, "status": issue.status, "symptoms": issue.symptoms, "attempts": issue.attempts,
        "current_theory": issue.current_theory, "blocked_by": issue.blocked_by, "resolution": issue.resolution,
        "trigger_phrases": issue.trigger_phrases, "resolved_at": iso_or_none(issue.resolved_at),
    }


def edge_dict(edge: SharpEdge) -> dict[str, Any]:
    return {
        **_entity_fields(edge), "title": edge.title, "description": edge.description, "workaround": edge.workaround,
        "detection_patterns": edge.detection_patterns, "symptoms": edge.symptoms, "root_cause": edge.root_cause,
        "share_with_community": edge.share_with_community, "is_global": edge.is_global,
    }


def episode_dict(episode: Episode) -> dict[str, Any]:
    return {
        **_entity_fields(episode), "session_id": _id(episode.session_id), "title": episode.title,
        "narrative": episode.narrative, "mood_arc": episode.mood_arc, "lessons": episode.lessons,
        "breakthroughs": episode.breakthroughs, "frustrations": episode.frustrations,
    }
