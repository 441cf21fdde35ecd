"""Exporting Mind: every readable project (or one) with its decisions, issues, sharp edges, episodes and,
when asked, sessions, as JSON (the seed's shapes, for backup and migration) or Markdown (for people).

Files go to ``settings.ENGRAM_EXPORT_DIR/<user pk>/mind-<project slug or "all">-<UTC yyyymmddThhmmss>.<json|md>``
(``-2``, ``-3``... when that name is taken), written to a temporary file in the same folder and renamed
into place, so a reader never sees half a file. An export of all projects also holds the global sharp
edges; a one-project export holds only that project's. Entities and projects that are deleted are left
out. export_list and export_path only ever look inside the actor's own folder, and export_path accepts
only names of the form above, so no name reaches another folder.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

from django.conf import settings
from django.utils import timezone
from django.utils.text import slugify

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput, NotFound
from apps.core.timestamps import iso_timestamp
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.representations import (
    decision_dict, edge_dict, episode_dict, issue_dict, project_dict, session_dict,
)
from apps.projects.selectors import entities_readable, project_get, projects_readable
from apps.core.validation import clean_bool

FORMATS = {"json": "json", "markdown": "md"}
EXPORT_NAME = re.compile(r"mind-[a-z0-9-]{1,80}-\d{8}T\d{6}(?:-\d{1,4})?\.(?:json|md)")
MAX_SLUG_CHARS = 60
EXPORT_VERSION = 1


@dataclass(frozen=True)
class ExportResult:
    path: Path
    entities: dict[str, int]


class ExportFile(TypedDict):
    """One export file as export_list gives it (a plain dict, for REST serializers and templates alike).
    An export is written once, so both times are the file's modification time."""

    name: str
    size: int
    created_at: datetime
    modified_at: datetime


@dataclass
class ProjectBundle:
    """One project and its live entities, as read for one export."""

    project: Project
    decisions: list[Decision]
    issues: list[Issue]
    edges: list[SharpEdge]
    episodes: list[Episode]
    sessions: list[Session] | None


@dataclass
class ExportData:
    bundles: list[ProjectBundle]
    global_edges: list[SharpEdge]
    include_sessions: bool
    exported_at: datetime

    def counts(self) -> dict[str, int]:
        return {
            "projects": len(self.bundles),
            "decisions": sum(len(b.decisions) for b in self.bundles),
            "issues": sum(len(b.issues) for b in self.bundles),
            "edges": sum(len(b.edges) for b in self.bundles) + len(self.global_edges),
            "episodes": sum(len(b.episodes) for b in self.bundles),
            "sessions": sum(len(b.sessions or []) for b in self.bundles),
        }


def export_dir(actor: User) -> Path:
    """The actor's own export folder."""
    return Path(settings.ENGRAM_EXPORT_DIR) / str(actor.pk)


# Reading

def _grouped(queryset, projects: list[Project]) -> dict:
    groups = defaultdict(list)
    for item in queryset.filter(project__in=projects).order_by("created_at"):
        groups[item.project_id].append(item)
    return groups


def _read(*, actor: User, project_id, include_sessions: bool) -> ExportData:
    if project_id is not None:
        projects = [project_get(actor=actor, project_id=project_id)]
    else:
        projects = list(projects_readable(actor=actor).order_by("name", "created_at"))
    kinds = {kind: _grouped(entities_readable(actor=actor, kind=kind), projects)
             for kind in ("issue", "sharp_edge", "episode")}
    kinds["decision"] = _grouped(entities_readable(actor=actor, kind="decision").select_related("superseded_by"),
                                 projects)
    sessions = _grouped(Session.objects.all(), projects) if include_sessions else {}
    bundles = [
        ProjectBundle(project=p, decisions=kinds["decision"][p.pk], issues=kinds["issue"][p.pk],
                      edges=kinds["sharp_edge"][p.pk], episodes=kinds["episode"][p.pk],
                      sessions=sessions.get(p.pk, []) if include_sessions else None)
        for p in projects
    ]
    global_edges = [] if project_id is not None else list(
        entities_readable(actor=actor, kind="sharp_edge").filter(project__isnull=True).order_by("created_at"))
    return ExportData(bundles=bundles, global_edges=global_edges, include_sessions=include_sessions,
                      exported_at=timezone.now())


# JSON

def render_json(data: ExportData) -> str:
    projects = []
    for bundle in data.bundles:
        item = {
            **project_dict(bundle.project),
            "decisions": [decision_dict(d) for d in bundle.decisions],
            "issues": [issue_dict(i) for i in bundle.issues],
            "edges": [edge_dict(e) for e in bundle.edges],
            "episodes": [episode_dict(e) for e in bundle.episodes],
        }
        if bundle.sessions is not None:
            item["sessions"] = [session_dict(s) for s in bundle.sessions]
        projects.append(item)
    document = {
        "format": "engram-mind-export", "version": EXPORT_VERSION, "exported_at": iso_timestamp(data.exported_at),
        "entities": data.counts(), "projects": projects, "global_edges": [edge_dict(e) for e in data.global_edges],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# Markdown

def _code(text: str) -> str:
    """Inline code that survives backticks inside the text."""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def _moment(value: datetime | None) -> str:
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if value else "never"


def _field(label: str, value) -> list[str]:
    return [f"**{label}:** {value}", ""] if value not in (None, "", []) else []


def _items(label: str, values: list[str]) -> list[str]:
    return [f"**{label}:**", "", *(f"- {value}" for value in values), ""] if values else []


def _decision_md(decision: Decision) -> list[str]:
    lines = [f"#### {decision.title}", "",
             f"*{decision.status}, confidence {decision.confidence:.2f}, {_moment(decision.created_at)}*", ""]
    lines += [decision.description, ""] if decision.description else []
    lines += _field("Context", decision.context) + _field("Reasoning", decision.reasoning)
    lines += _items("Alternatives", [
        f"{alt['option']}" + (f" (rejected because: {alt['rejected_because']})" if alt.get("rejected_because") else "")
        for alt in decision.alternatives
    ])
    lines += _field("Revisit if", decision.revisit_if)
    lines += _field("Trigger phrases", ", ".join(decision.trigger_phrases))
    if decision.superseded_by_id:
        lines += _field("Superseded by", decision.superseded_by.title)
    return lines


def _issue_md(issue: Issue) -> list[str]:
    lines = [f"#### [{issue.severity}] {issue.title}", "", f"*{issue.status}, opened {_moment(issue.created_at)}*", ""]
    lines += [issue.description, ""] if issue.description else []
    lines += _items("Symptoms", issue.symptoms)
    attempts = [f"{a['what']} -> {a['result']}" + (f" (learned: {a['learned']})" if a.get("learned") else "")
                + (f" ({a['at']})" if a.get("at") else "") for a in issue.attempts]
    lines += _items("Attempts", attempts)
    lines += _field("Current theory", issue.current_theory) + _field("Blocked by", issue.blocked_by)
    lines += _field("Resolution", issue.resolution)
    return lines


def _edge_md(edge: SharpEdge) -> list[str]:
    lines = [f"#### {edge.title}", ""]
    lines += [edge.description, ""] if edge.description else []
    lines += _field("Workaround", edge.workaround) + _field("Root cause", edge.root_cause)
    lines += _items("Detection patterns", [
        f"{p['type']}: {_code(p['pattern'])}" + (f" in {_code(p['file_glob'])}" if p.get("file_glob") else "")
        + (f" ({p['description']})" if p.get("description") else "") for p in edge.detection_patterns
    ])
    lines += _items("Symptoms", edge.symptoms)
    return lines


def _episode_md(episode: Episode) -> list[str]:
    lines = [f"#### {episode.title}", "", f"*{_moment(episode.created_at)}*", ""]
    lines += [episode.narrative, ""] if episode.narrative else []
    for label, values in (("Mood arc", episode.mood_arc), ("Lessons", episode.lessons),
                          ("Breakthroughs", episode.breakthroughs), ("Frustrations", episode.frustrations)):
        lines += _items(label, values)
    return lines


def _session_md(session: Session) -> str:
    return (f"- {_moment(session.started_at)} to {_moment(session.ended_at) if session.ended_at else 'now (open)'}: "
            f"{session.summary or '(no summary)'}")


def _section(title: str, entities: list, render) -> list[str]:
    if not entities:
        return []
    return [f"### {title}", "", *(line for entity in entities for line in render(entity))]


def _project_md(bundle: ProjectBundle) -> list[str]:
    project = bundle.project
    lines = [f"## {project.name}", ""]
    lines += _field("Status", project.status) + _field("Stack", ", ".join(project.stack))
    lines += _field("Repository", project.repo_path) + _field("Goal", project.current_goal)
    lines += _items("Blocked by", project.blocked_by) + _items("Open threads", project.open_threads)
    if project.last_session_at:
        lines += _field("Last session", f"{_moment(project.last_session_at)}: {project.last_session_summary}")
        lines += _items("Next steps", project.last_session_next_steps)
    lines += _section("Decisions", bundle.decisions, _decision_md)
    lines += _section("Issues", bundle.issues, _issue_md)
    lines += _section("Sharp edges", bundle.edges, _edge_md)
    lines += _section("Episodes", bundle.episodes, _episode_md)
    if bundle.sessions:
        lines += ["### Sessions", "", *(_session_md(s) for s in bundle.sessions), ""]
    return lines


def render_markdown(data: ExportData) -> str:
    counts = data.counts()
    shown = [f"{count} {name}" for name, count in counts.items() if name != "sessions" or data.include_sessions]
    lines = ["# Mind export", "", f"Exported {_moment(data.exported_at)}: {', '.join(shown)}.", ""]
    for bundle in data.bundles:
        lines += _project_md(bundle)
    if data.global_edges:
        lines += ["## Global sharp edges", "", *(line for edge in data.global_edges for line in _edge_md(edge))]
    return "\n".join(lines).rstrip() + "\n"


# Files

def _file_stem(*, data: ExportData, project_id) -> str:
    if project_id is None:
        slug = "all"
    else:
        project = data.bundles[0].project
        slug = slugify(project.name)[:MAX_SLUG_CHARS].strip("-") or f"project-{str(project.pk)[:8]}"
    return f"mind-{slug}-{data.exported_at.astimezone(UTC):%Y%m%dT%H%M%S}"


def write_atomically(folder: Path, stem: str, extension: str, text: str) -> Path:
    """Write ``text`` under a free name (stem, stem-2, ...) so it appears whole or not at all."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".partial-", suffix=f".{extension}")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        for attempt in range(1, 10_000):
            target = folder / (f"{stem}.{extension}" if attempt == 1 else f"{stem}-{attempt}.{extension}")
            try:
                os.link(temporary, target)  # fails if the name is taken: never overwrites another export
            except FileExistsError:
                continue
            return target
        raise InvalidInput("Too many exports this second: try again.", field="format")
    finally:
        os.unlink(temporary)


def project_export(*, actor: User, format: str = "json", project_id=None,  # noqa: A002 - the seed's name
                   include_sessions: bool = False) -> ExportResult:
    """Write an export file into the actor's folder; the path and the entity counts."""
    if format not in FORMATS:
        raise InvalidInput(f"format must be json or markdown; got {format!r}.", field="format")
    include_sessions = clean_bool(include_sessions, field="include_sessions")
    data = _read(actor=actor, project_id=project_id, include_sessions=include_sessions)
    text = render_json(data) if format == "json" else render_markdown(data)
    path = write_atomically(export_dir(actor), _file_stem(data=data, project_id=project_id), FORMATS[format], text)
    return ExportResult(path=path, entities=data.counts())


def export_list(*, actor: User) -> list[ExportFile]:
    """The actor's export files, newest first."""
    folder = export_dir(actor)
    if not folder.is_dir():
        return []
    files = []
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False) and EXPORT_NAME.fullmatch(entry.name):
            stat = entry.stat(follow_symlinks=False)
            moment = datetime.fromtimestamp(stat.st_mtime, tz=UTC)
            files.append(ExportFile(name=entry.name, size=stat.st_size, created_at=moment, modified_at=moment))
    return sorted(files, key=lambda f: (f["modified_at"], f["name"]), reverse=True)


def export_path(*, actor: User, name) -> Path:
    """The path of one of the actor's export files; any other name (another folder, a typo) is not found."""
    if not isinstance(name, str) or not EXPORT_NAME.fullmatch(name):
        raise NotFound(f"Export {name!r} not found.", code="export_not_found", extra={"field": "name"})
    path = export_dir(actor) / name
    if not path.is_file() or path.is_symlink():
        raise NotFound(f"Export {name!r} not found.", code="export_not_found", extra={"field": "name"})
    return path
