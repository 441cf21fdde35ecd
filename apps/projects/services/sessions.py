"""Sessions: starting one (with the primer an agent reads first), finding the current one, ending one
(and writing an episode when it mattered).

**Finding the project** (session_start): by ``project_id``; else by ``project_name`` (case-insensitive);
else by ``detect_from_path`` (the project whose repo path is that path or the deepest one containing
it). A name or path that finds nothing creates the project (named ``project_name``, else the path's last
component, with the path as its repo path). With no argument, the actor's most recently updated
active project. Starting ends the client's earlier open session (no summary, no episode).

**Primer points** (REFERENCE.md, Mind). Issues: blocking 100, major 50, minor 20, cosmetic 5; +80 when
the last session's next steps name it; +60 when related to the goal; recency up to +30; accesses up
to +30. Decisions: +100 when their revisit condition holds; +40 when confidence < 0.5 (else +20 when
< 0.7); +50 when goal-related; plus recency and accesses. Here:
- *recency* = 30 x 0.5^(days since the entity last changed / 7); *accesses* = min(30, 10 x log2(1 + n)).
- *named in next steps*: a next step contains the issue's title, or contains at least two thirds of
  the title's keywords (patterns.text_keywords: words of 3+ letters that are not stopwords; a word
  matches its longer forms, "deploy"/"deploying").
- *related to the goal*: the entity's title or trigger phrases share a keyword with the current goal.
- *a revisit condition holds* when at least half of its keywords, and at least two (one if it has
  only one), occur in the current situation: the goal, blocked_by, open threads, the last session's
  next steps and still-open threads, and the stack. So "We need features VibeMemo already has"
  holds once the goal says "port the VibeMemo features we lack".
Pending decisions are the active decisions whose revisit condition holds.

**Relevant edges** are edges_check of the project's goal, blocked_by and open threads as the intent
(context patterns see the stack and goal), with the new session: they count as warned for it.

**Episodes** (session_end). One is written when the session produced artifacts (a decision, issue or
sharp edge recorded with this session), or lasted >= 15 minutes with issue activity (an issue update
or an issue created), or shows struggle (>= 3 issue updates, >= 45 minutes, or a mood that says
frustrated, stuck or breakthrough), or its summary says "significant".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.accounts.models import User
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.cubes.access import cube_ids_readable
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.patterns import shared_keywords, text_keywords
from apps.projects.selectors import project_checked, project_find, projects_readable, session_get
from apps.projects.services.check import edges_check
from apps.projects.services.entities import episode_create
from apps.projects.services.projects import project_create, project_get_writable
from apps.core.validation import MAX_TITLE_CHARS, clean_title
from apps.projects.validation import (
    MAX_ITEMS, MAX_MOOD_CHARS, MAX_PATH_CHARS, MAX_TEXT_CHARS, clean_list, clean_name, clean_text,
)

SEVERITY_POINTS = {"blocking": 100, "major": 50, "minor": 20, "cosmetic": 5}
NEXT_STEP_POINTS = 80
GOAL_ISSUE_POINTS = 60
GOAL_DECISION_POINTS = 50
REVISIT_POINTS = 100
LOW_CONFIDENCE_POINTS = ((0.5, 40), (0.7, 20))
MAX_RECENCY_POINTS = 30
RECENCY_HALF_LIFE_DAYS = 7
MAX_ACCESS_POINTS = 30
PRIMER_ISSUES = 5
PRIMER_DECISIONS = 3
MAX_OPEN_ISSUES = 50
EPISODE_ACTIVE_MINUTES = 15
EPISODE_LONG_MINUTES = 45
EPISODE_ISSUE_UPDATES = 3
FRUSTRATED_MOODS = ("frustrat", "stuck")
STRUGGLE_MOODS = (*FRUSTRATED_MOODS, "breakthrough")


@dataclass
class SessionStarted:
    session: Session
    project: Project
    primer: str
    open_issues: list[Issue]
    pending_decisions: list[Decision]
    relevant_edges: list[SharpEdge]
    project_created: bool = False


@dataclass
class SessionEnded:
    session: Session
    episode: Episode | None
    # Why an episode was written (empty when none was): the rules of the module docstring that held.
    episode_reasons: list[str] = field(default_factory=list)


# Points

def _recency_points(moment: datetime, now: datetime) -> float:
    days = max(0.0, (now - moment).total_seconds() / 86400)
    return MAX_RECENCY_POINTS * 0.5 ** (days / RECENCY_HALF_LIFE_DAYS)


def _access_points(count: int) -> float:
    return min(MAX_ACCESS_POINTS, 10 * math.log2(1 + count))


def _entity_keywords(entity: Issue | Decision) -> set[str]:
    return text_keywords(" ".join([entity.title, *entity.trigger_phrases]))


def names_issue(step: str, title: str) -> bool:
    """Whether a next step names an issue: it contains the title, or two thirds of its keywords."""
    if title.strip().lower() in step.lower():
        return True
    title_words = text_keywords(title)
    return bool(title_words) and 3 * len(shared_keywords(title_words, text_keywords(step))) >= 2 * len(title_words)


def condition_holds(condition: str, situation_words: set[str]) -> bool:
    """Whether a revisit condition holds in a situation (see the module docstring)."""
    words = text_keywords(condition)
    if not words:
        return False
    shared = len(shared_keywords(words, situation_words))
    return shared >= min(2, len(words)) and 2 * shared >= len(words)


@dataclass(frozen=True)
class Situation:
    """What the primer ranks against: the project's state and its last session."""

    goal_words: set[str]
    words: set[str]
    next_steps: list[str]
    now: datetime

    @classmethod
    def of(cls, project: Project, last: Session | None, now: datetime) -> Situation:
        texts = [project.current_goal, *project.blocked_by, *project.open_threads, *project.stack,
                 *project.last_session_next_steps, *(last.still_open if last else [])]
        return cls(goal_words=text_keywords(project.current_goal), words=text_keywords(" ".join(texts)),
                   next_steps=list(project.last_session_next_steps), now=now)


def _common_points(entity: Issue | Decision, situation: Situation) -> float:
    return (_recency_points(entity.updated_at, situation.now) + _access_points(entity.access_count))


def issue_points(issue: Issue, situation: Situation) -> float:
    points = SEVERITY_POINTS.get(issue.severity, 0) + _common_points(issue, situation)
    if any(names_issue(step, issue.title) for step in situation.next_steps):
        points += NEXT_STEP_POINTS
    if shared_keywords(_entity_keywords(issue), situation.goal_words):
        points += GOAL_ISSUE_POINTS
    return points


def decision_points(decision: Decision, situation: Situation) -> float:
    points = _common_points(decision, situation)
    if decision.revisit_if and condition_holds(decision.revisit_if, situation.words):
        points += REVISIT_POINTS
    points += next((bonus for limit, bonus in LOW_CONFIDENCE_POINTS if decision.confidence < limit), 0)
    if shared_keywords(_entity_keywords(decision), situation.goal_words):
        points += GOAL_DECISION_POINTS
    return points


# Primer

def _when(moment: datetime, now: datetime) -> str:
    """A moment as people say it: "Yesterday 23:10 UTC", "Today 09:05 UTC", "2026-11-02 14:00 UTC (19 days ago)"."""
    moment, now = moment.astimezone(UTC), now.astimezone(UTC)
    days = (now.date() - moment.date()).days
    clock = f"{moment:%H:%M} UTC"
    if days == 0:
        return f"Today {clock}"
    if days == 1:
        return f"Yesterday {clock}"
    return f"{moment:%Y-%m-%d} {clock} ({days} days ago)"


def _bullets(title: str, items: list[str]) -> list[str]:
    return [f"{title}:", *(f"- {item}" for item in items)] if items else []


def build_primer(*, project: Project, last: Session | None, issues: list[Issue], pending: list[Decision],
                 decisions: list[Decision], edges: list[SharpEdge], now: datetime) -> str:
    """The text an agent reads first: where the last session left off, the goal, what to do next, the
    top open issues, the decisions to revisit and the other key ones, and the sharp edges to watch."""
    if project.last_session_at:
        lines = [f"Last session: {_when(project.last_session_at, now)}",
                 f"Ended with: {project.last_session_summary or '(no summary)'}"]
    else:
        lines = [f"First session on {project.name}."]
    lines.append(f"Project: {project.name}" + (f" ({', '.join(project.stack)})" if project.stack else ""))
    if project.current_goal:
        lines.append(f"Goal: {project.current_goal}")
    lines += _bullets("Blocked by", project.blocked_by)
    lines += _bullets("Next steps", project.last_session_next_steps)
    lines += _bullets("Still open", last.still_open if last else [])
    lines += _bullets("Open threads", project.open_threads)
    lines += _bullets("Open issues", [f"[{i.severity}] {i.title} ({i.status})" + (f": {i.current_theory}"
                                      if i.current_theory else "") for i in issues[:PRIMER_ISSUES]])
    lines += _bullets("Decisions to revisit", [f"{d.title} (revisit if: {d.revisit_if})" for d in pending])
    lines += _bullets("Key decisions", [d.title for d in decisions if d not in pending][:PRIMER_DECISIONS])
    lines += _bullets("Sharp edges", [f"{e.title}" + (f": {e.workaround}" if e.workaround else "") for e in edges])
    return "\n".join(lines)


def _ranked(items: list, points, situation: Situation) -> list:
    scored = [(points(item, situation), item) for item in items]
    scored.sort(key=lambda pair: (-pair[0], -pair[1].updated_at.timestamp()))
    return [item for _, item in scored]


# Finding the project

def _path_name(path: str) -> str:
    name = PurePosixPath(path.replace("\\", "/").rstrip("/")).name
    if not name:
        raise InvalidInput("detect_from_path has no last component to name a project after: pass project_name.",
                           field="detect_from_path")
    return name


def _resolve_project(*, actor: User, project_id, project_name, detect_from_path) -> tuple[Project, bool]:
    """(project, created): see the module docstring for the order."""
    if project_id is not None:
        return project_get_writable(actor=actor, project_id=project_id), False
    name = clean_name(project_name, field="project_name") if project_name is not None else ""
    path = clean_text(detect_from_path, field="detect_from_path", max_chars=MAX_PATH_CHARS)
    if not name and not path:
        latest = (projects_readable(actor=actor).filter(owner=actor, status=Project.Status.ACTIVE)
                  .order_by("-updated_at").first())
        if latest is None:
            raise InvalidInput("Name the project: pass project_id, project_name or detect_from_path.",
                               field="project_name")
        return latest, False
    found = (project_find(actor=actor, name=name) if name else None) or \
        (project_find(actor=actor, repo_path=path) if path else None)
    if found is not None:
        return project_get_writable(actor=actor, project_id=found.pk), False
    return project_create(actor=actor, name=name or _path_name(path), repo_path=path), True


def _end_open_sessions(*, actor: User, client_key: str, now: datetime) -> None:
    open_sessions = Session.objects.filter(owner=actor, client_key=client_key, ended_at__isnull=True)
    open_sessions.update(ended_at=now, updated_at=now)


# Services

@dataclass
class Briefing:
    """What an agent starting on a project reads: the primer and the items it ranks."""

    primer: str
    open_issues: list[Issue]
    pending_decisions: list[Decision]
    relevant_edges: list[SharpEdge]


def _briefing(*, actor: User, project: Project, now: datetime, session: Session | None = None) -> Briefing:
    """Rank the project's open issues and active decisions, find the pending decisions and relevant
    edges (warned for ``session`` when one is given) and write the primer."""
    last = project.sessions.filter(ended_at__isnull=False).order_by("-ended_at").first()
    situation = Situation.of(project, last, now)
    issues = _ranked(list(project.issues.filter(deleted_at__isnull=True).exclude(status__in=Issue.CLOSED)),
                     issue_points, situation)[:MAX_OPEN_ISSUES]
    decisions = _ranked(list(project.decisions.filter(deleted_at__isnull=True, status=Decision.Status.ACTIVE)),
                        decision_points, situation)
    pending = [d for d in decisions if d.revisit_if and condition_holds(d.revisit_if, situation.words)]
    intent = " ".join([project.current_goal, *project.blocked_by, *project.open_threads])
    warnings = edges_check(actor=actor, intent=intent, project=project, session=session)
    edges = [warning.edge for warning in warnings]
    primer = build_primer(project=project, last=last, issues=issues, pending=pending, decisions=decisions,
                          edges=edges, now=now)
    return Briefing(primer=primer, open_issues=issues, pending_decisions=pending, relevant_edges=edges)


def project_primer(*, actor: User, project_id) -> Briefing:
    """The primer the next session on a readable project would start with, without starting one (the
    dashboard shows it); nothing is recorded as warned. ``project_id``: an id or an already-read Project."""
    return _briefing(actor=actor, project=project_checked(actor=actor, project_id=project_id), now=timezone.now())


@transaction.atomic
def session_start(*, actor: User, project_id=None, project_name=None, detect_from_path=None,
                  client_key: str = "") -> SessionStarted:
    """Start a session on a found or new project, ending the client's earlier open session."""
    project, created = _resolve_project(actor=actor, project_id=project_id, project_name=project_name,
                                        detect_from_path=detect_from_path)
    now = timezone.now()
    _end_open_sessions(actor=actor, client_key=client_key, now=now)
    session = Session.objects.create(project=project, owner=actor, client_key=client_key, started_at=now)
    briefing = _briefing(actor=actor, project=project, now=now, session=session)
    return SessionStarted(session=session, project=project, primer=briefing.primer,
                          open_issues=briefing.open_issues, pending_decisions=briefing.pending_decisions,
                          relevant_edges=briefing.relevant_edges, project_created=created)


def session_current(*, actor: User, client_key: str) -> Session | None:
    """The client's open session on a live, still readable project, or None."""
    return (
        Session.objects.filter(owner=actor, client_key=client_key, ended_at__isnull=True,
                               project__deleted_at__isnull=True, project__cube_id__in=cube_ids_readable(actor=actor))
        .select_related("project").order_by("-started_at").first()
    )


def _session_to_end(*, actor: User, client_key: str, session_id) -> Session:
    """The open session to end, its row locked (so two ends of one session cannot both capture)."""
    if session_id is not None:
        session = session_get(actor=actor, session_id=session_id)
        if session.owner_id != actor.pk:
            raise NotFound(f"Session {session_id!r} not found.", code="entity_not_found", extra={"field": "session_id"})
    else:
        session = session_current(actor=actor, client_key=client_key)
        if session is None:
            raise Conflict("No active session to end: call mind_start_session first.", code="session_not_active")
    session = Session.objects.select_for_update(of=("self",)).select_related("project").get(pk=session.pk)
    if session.ended_at is not None:
        raise Conflict("This session has already ended: start a new one with mind_start_session.",
                       code="session_not_active")
    return session


def episode_reasons(session: Session) -> list[str]:
    """The episode rules (module docstring) that an ended session meets, as short phrases."""
    minutes = (session.ended_at - session.started_at).total_seconds() / 60
    artifacts = {
        label: model.objects.filter(session=session).count()
        for label, model in (("decisions", Decision), ("issues", Issue), ("sharp edges", SharpEdge))
    }
    reasons = [f"recorded {count} {label}" for label, count in artifacts.items() if count]
    issue_activity = session.issue_updates > 0 or artifacts["issues"] > 0
    if minutes >= EPISODE_ACTIVE_MINUTES and issue_activity:
        reasons.append(f"{minutes:.0f} minutes with issue activity")
    if session.issue_updates >= EPISODE_ISSUE_UPDATES:
        reasons.append(f"{session.issue_updates} issue updates")
    if minutes >= EPISODE_LONG_MINUTES:
        reasons.append(f"lasted {minutes:.0f} minutes")
    mood = session.mood.lower()
    reasons += [f"mood: {session.mood}" for word in STRUGGLE_MOODS if word in mood][:1]
    if "significant" in session.summary.lower():
        reasons.append("summary says significant")
    return reasons


def _lessons(session: Session) -> list[str]:
    """What the attempts made during the session taught (their ``learned``)."""
    issues = session.project.issues.filter(updated_at__gte=session.started_at, deleted_at__isnull=True)
    return [attempt["learned"] for issue in issues for attempt in issue.attempts
            if attempt.get("learned") and _during(session, attempt.get("at"))][:MAX_ITEMS]


def _during(session: Session, stamp) -> bool:
    moment = parse_datetime(stamp) if isinstance(stamp, str) else None
    return moment is not None and session.started_at <= moment <= session.ended_at


def _narrative(session: Session, reasons: list[str]) -> str:
    parts = [session.summary]
    parts += ["\n".join(_bullets("Progress", session.progress)), "\n".join(_bullets("Still open", session.still_open)),
              "\n".join(_bullets("Next steps", session.next_steps))]
    if session.mood:
        parts.append(f"Mood: {session.mood}")
    parts.append(f"Why this was an episode: {'; '.join(reasons)}.")
    return "\n\n".join(part for part in parts if part)[:MAX_TEXT_CHARS]


def _write_episode(*, actor: User, session: Session, reasons: list[str]) -> Episode:
    mood = session.mood.lower()
    resolved = session.project.issues.filter(resolved_at__gte=session.started_at, resolved_at__lte=session.ended_at,
                                             deleted_at__isnull=True).values_list("title", flat=True)
    return episode_create(
        actor=actor, session=session, title=session.summary.splitlines()[0][:MAX_TITLE_CHARS],
        narrative=_narrative(session, reasons), mood_arc=[session.mood] if session.mood else [],
        lessons=_lessons(session), breakthroughs=[f"Resolved: {title}" for title in resolved],
        frustrations=session.still_open if any(word in mood for word in FRUSTRATED_MOODS) else [],
    )


@transaction.atomic
def session_end(*, actor: User, client_key: str = "", session_id=None, summary, progress=None, still_open=None,
                next_steps=None, mood=None) -> SessionEnded:
    """End a session: capture its summary and state on it and on its project, and write an episode when
    the rules say the session mattered."""
    summary = clean_title(summary, field="summary", max_chars=MAX_TEXT_CHARS)
    progress = clean_list(progress, field="progress")
    still_open = clean_list(still_open, field="still_open")
    next_steps = clean_list(next_steps, field="next_steps")
    mood = clean_text(mood, field="mood", max_chars=MAX_MOOD_CHARS)
    session = _session_to_end(actor=actor, client_key=client_key, session_id=session_id)
    now = timezone.now()
    session.ended_at, session.summary, session.progress = now, summary, progress
    session.still_open, session.next_steps, session.mood = still_open, next_steps, mood
    session.save()
    Project.objects.filter(pk=session.project_id).update(
        last_session_at=now, last_session_summary=summary, last_session_next_steps=next_steps, updated_at=now,
    )
    session.project.refresh_from_db()
    reasons = episode_reasons(session)
    episode = _write_episode(actor=actor, session=session, reasons=reasons) if reasons else None
    return SessionEnded(session=session, episode=episode, episode_reasons=reasons)
