"""Writes of decisions, issues, sharp edges and episodes.

Each write checks access itself (the project's cube must be writable; an entity the actor cannot read
is "not found"), runs under one transaction, and keeps the entity's memory-graph node in step through
nodes.py: created with the entity, re-embedded when its text changes, soft-deleted and restored with it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput, PermissionDenied
from apps.cubes.access import cube_ids_writable
from apps.cubes.services import cube_ensure_personal
from apps.memories.embeddings import embed_texts
from apps.core.timestamps import iso_timestamp
from apps.projects.models import Decision, Episode, Issue, ProjectEntity, Session, SharpEdge
from apps.projects.patterns import clean_detection_patterns
from apps.projects.selectors import ENTITY_ID_FIELDS, ENTITY_LABELS, ENTITY_MODELS, entity_get, session_owned
from apps.projects.services.nodes import node_create, node_delete, node_purge, node_sync
from apps.projects.services.projects import curator_acts_as_owner, project_get_writable
from apps.core.validation import clean_bool, clean_choice, clean_title
from apps.projects.validation import (
    MAX_MOOD_CHARS, clean_alternatives, clean_attempt, clean_confidence, clean_list, clean_text,
    clean_trigger_phrases, parse_entity_id,
)

# Superseding (see decision_add): how alike two decision titles must be, and how much their trigger
# phrases must overlap, for the newer decision to replace the older one.
SUPERSEDE_TITLE_SIMILARITY = 0.85
SUPERSEDE_TRIGGER_OVERLAP = 0.5
SUPERSEDE_CANDIDATES = 200


@dataclass(frozen=True)
class DecisionAdded:
    decision: Decision
    superseded: Decision | None


# Access and shared steps

def _curated(*, actor: User, kind: str, entity_id) -> User:
    model = ENTITY_MODELS[clean_choice(kind, field="kind", choices=ENTITY_MODELS)]
    pk = parse_entity_id(entity_id, field=ENTITY_ID_FIELDS[kind], label=ENTITY_LABELS[kind])
    return curator_acts_as_owner(actor=actor, model=model, pk=pk)


def _writable_entity(*, actor: User, kind: str, entity_id, include_deleted: bool = False, lock: bool = False):
    """An entity the actor may change. Unreadable -> NotFound; readable but read-only -> PermissionDenied.
    ``lock`` re-reads it with its row locked, so concurrent updates apply one after the other."""
    entity = entity_get(actor=actor, kind=kind, entity_id=entity_id, include_deleted=include_deleted)
    model = type(entity)
    if not model.objects.filter(pk=entity.pk, cube_id__in=cube_ids_writable(actor=actor)).exists():
        raise PermissionDenied(f"You may read this {kind.replace('_', ' ')} but not change it.",
                               extra={"field": ENTITY_ID_FIELDS[kind]})
    if lock:
        entity = model.objects.select_for_update(of=("self",)).select_related("project").get(pk=entity.pk)
        if entity.deleted_at is not None and not include_deleted:  # deleted while we waited: NotFound now
            return entity_get(actor=actor, kind=kind, entity_id=entity_id)
    return entity


def _create(*, actor: User, entity: ProjectEntity) -> ProjectEntity:
    entity.save(force_insert=True)
    node_create(actor=actor, entity=entity)
    return entity


def _apply(entity: ProjectEntity, fields: dict, cleaners: dict[str, Callable]) -> ProjectEntity:
    """Set the given fields (None leaves one unchanged), each through its cleaner."""
    for name, value in fields.items():
        if value is not None:
            setattr(entity, name, cleaners[name](value))
    return entity


def _save_and_sync(*, actor: User, entity: ProjectEntity) -> ProjectEntity:
    entity.save()
    node_sync(actor=actor, entity=entity)
    return entity


def _text(field: str) -> Callable:
    return lambda value: clean_text(value, field=field)


def _items(field: str) -> Callable:
    return lambda value: clean_list(value, field=field)


# Decisions

def _normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _trigger_overlap(first: list[str], second: list[str]) -> float:
    a, b = {_normalised(p) for p in first}, {_normalised(p) for p in second}
    return len(a & b) / len(a | b) if a and b else 0.0


def _find_superseded(decision: Decision) -> Decision | None:
    """The active decision of the same project that ``decision`` replaces, if any (see decision_add)."""
    candidates = list(
        Decision.objects.filter(project_id=decision.project_id, status=Decision.Status.ACTIVE, deleted_at__isnull=True)
        .exclude(pk=decision.pk).order_by("-created_at")[:SUPERSEDE_CANDIDATES]
    )
    if not candidates:
        return None
    title = _normalised(decision.title)
    vectors = np.array(embed_texts([decision.title] + [c.title for c in candidates]))
    similarities = vectors[1:] @ vectors[0]  # the model's vectors are unit length: dot = cosine
    best, best_score = None, 0.0
    for candidate, similarity in zip(candidates, similarities):
        same_title = _normalised(candidate.title) == title
        overlap = _trigger_overlap(decision.trigger_phrases, candidate.trigger_phrases)
        if same_title or similarity >= SUPERSEDE_TITLE_SIMILARITY or overlap >= SUPERSEDE_TRIGGER_OVERLAP:
            score = 2.0 if same_title else float(similarity) + overlap
            if score > best_score:
                best, best_score = candidate, score
    return best


@transaction.atomic
def decision_add(*, actor: User, project_id, title, description="", context="", reasoning="", alternatives=None,
                 confidence=None, revisit_if="", trigger_phrases=None, session=None) -> DecisionAdded:
    """Record a decision; it may supersede an earlier one.

    Superseding rule: among the project's live, active decisions, the new one supersedes the one that
    (a) has the same title once case, punctuation and spacing are ignored, or (b) has a title whose
    MiniLM embedding has cosine similarity >= 0.85 with the new title's, or (c) shares trigger phrases
    with Jaccard overlap >= 0.5 (normalised like titles). When several qualify, the same title wins,
    then the highest similarity + overlap; only that one is superseded (status "superseded",
    ``superseded_by`` the new decision). Titles, not whole texts, are compared: two decisions about the
    same question share a title-like subject while their reasoning differs, which is the point.
    """
    project = project_get_writable(actor=actor, project_id=project_id)
    decision = Decision(
        project=project, cube_id=project.cube_id, owner=actor, session=session_owned(actor=actor, session=session),
        title=clean_title(title), description=clean_text(description, field="description"),
        context=clean_text(context, field="context"), reasoning=clean_text(reasoning, field="reasoning"),
        alternatives=clean_alternatives(alternatives), confidence=clean_confidence(confidence),
        revisit_if=clean_text(revisit_if, field="revisit_if"), trigger_phrases=clean_trigger_phrases(trigger_phrases),
    )
    _create(actor=actor, entity=decision)
    superseded = _find_superseded(decision)
    if superseded is not None:
        superseded.status = Decision.Status.SUPERSEDED
        superseded.superseded_by = decision
        superseded.save(update_fields=["status", "superseded_by", "updated_at"])
    return DecisionAdded(decision=decision, superseded=superseded)


DECISION_CLEANERS = {
    "title": clean_title, "description": _text("description"), "context": _text("context"),
    "reasoning": _text("reasoning"), "alternatives": clean_alternatives,
    "confidence": clean_confidence, "revisit_if": _text("revisit_if"), "trigger_phrases": clean_trigger_phrases,
    "status": lambda value: clean_choice(value, field="status", choices=Decision.Status.values),
}


@transaction.atomic
def decision_update(*, actor: User, decision_id, title=None, description=None, context=None, reasoning=None,
                    alternatives=None, confidence=None, revisit_if=None, trigger_phrases=None,
                    status=None) -> Decision:
    """Change the given fields. Making a decision active again clears its ``superseded_by``."""
    fields = {"title": title, "description": description, "context": context, "reasoning": reasoning,
              "alternatives": alternatives, "confidence": confidence, "revisit_if": revisit_if,
              "trigger_phrases": trigger_phrases, "status": status}
    decision = _apply(_writable_entity(actor=actor, kind="decision", entity_id=decision_id, lock=True), fields,
                      DECISION_CLEANERS)
    if decision.status == Decision.Status.ACTIVE:
        decision.superseded_by = None
    return _save_and_sync(actor=actor, entity=decision)


# Issues

@transaction.atomic
def issue_add(*, actor: User, project_id, title, description="", severity=None, symptoms=None, trigger_phrases=None,
              session=None) -> Issue:
    project = project_get_writable(actor=actor, project_id=project_id)
    issue = Issue(
        project=project, cube_id=project.cube_id, owner=actor, session=session_owned(actor=actor, session=session),
        title=clean_title(title), description=clean_text(description, field="description"),
        severity=Issue.Severity.MAJOR if severity is None else
        clean_choice(severity, field="severity", choices=Issue.Severity.values),
        symptoms=clean_list(symptoms, field="symptoms"), trigger_phrases=clean_trigger_phrases(trigger_phrases),
    )
    return _create(actor=actor, entity=issue)


ISSUE_CLEANERS = {
    "title": clean_title, "description": _text("description"), "current_theory": _text("current_theory"),
    "blocked_by": _text("blocked_by"), "resolution": _text("resolution"),
    "status": lambda value: clean_choice(value, field="status", choices=Issue.Status.values),
    "severity": lambda value: clean_choice(value, field="severity", choices=Issue.Severity.values),
}


@transaction.atomic
def issue_update(*, actor: User, issue_id, status=None, add_attempt=None, current_theory=None, blocked_by=None,
                 resolution=None, title=None, description=None, severity=None, session=None) -> Issue:
    """Change the given fields and append ``add_attempt`` ({what, result, learned?}, stamped "at").

    Attempts are only ever appended: the row is locked first, so two concurrent updates both land.
    Closing the issue (resolved, won't fix) stamps ``resolved_at``; reopening clears it. The given
    session counts the update (``issue_updates``, which the episode rules read)."""
    session = session_owned(actor=actor, session=session)
    attempt = clean_attempt(add_attempt) if add_attempt is not None else None
    issue = _writable_entity(actor=actor, kind="issue", entity_id=issue_id, lock=True)
    was_closed = issue.status in Issue.CLOSED
    _apply(issue, {"status": status, "current_theory": current_theory, "blocked_by": blocked_by,
                   "resolution": resolution, "title": title, "description": description, "severity": severity},
           ISSUE_CLEANERS)
    if attempt is not None:
        issue.attempts = [*issue.attempts, {**attempt, "at": iso_timestamp(timezone.now())}]
    closed = issue.status in Issue.CLOSED
    if closed and not was_closed:
        issue.resolved_at = timezone.now()
    elif not closed:
        issue.resolved_at = None
    _save_and_sync(actor=actor, entity=issue)
    if session is not None:
        Session.objects.filter(pk=session.pk).update(issue_updates=F("issue_updates") + 1)
        session.refresh_from_db(fields=["issue_updates"])
    return issue


# Sharp edges

@transaction.atomic
def edge_add(*, actor: User, project_id=None, title, description="", workaround="", detection_patterns=None,
             symptoms=None, root_cause="", share_with_community=False, session=None) -> SharpEdge:
    """A sharp edge of a project, or a global one (``project_id`` None or empty), which lives in the
    actor's personal cube and is checked for every project they have."""
    project = project_get_writable(actor=actor, project_id=project_id) if project_id not in (None, "") else None
    edge = SharpEdge(
        project=project, cube_id=project.cube_id if project else cube_ensure_personal(actor=actor).pk, owner=actor,
        session=session_owned(actor=actor, session=session), title=clean_title(title),
        description=clean_text(description, field="description"), workaround=clean_text(workaround, field="workaround"),
        detection_patterns=clean_detection_patterns(detection_patterns),
        symptoms=clean_list(symptoms, field="symptoms"),
        root_cause=clean_text(root_cause, field="root_cause"),
        share_with_community=clean_bool(share_with_community, field="share_with_community"),
    )
    return _create(actor=actor, entity=edge)


EDGE_CLEANERS = {
    "title": clean_title, "description": _text("description"), "workaround": _text("workaround"),
    "detection_patterns": clean_detection_patterns, "symptoms": _items("symptoms"), "root_cause": _text("root_cause"),
    "share_with_community": lambda value: clean_bool(value, field="share_with_community"),
}


@transaction.atomic
def edge_update(*, actor: User, edge_id, title=None, description=None, workaround=None, detection_patterns=None,
                symptoms=None, root_cause=None, share_with_community=None) -> SharpEdge:
    fields = {"title": title, "description": description, "workaround": workaround,
              "detection_patterns": detection_patterns, "symptoms": symptoms, "root_cause": root_cause,
              "share_with_community": share_with_community}
    edge = _apply(_writable_entity(actor=actor, kind="sharp_edge", entity_id=edge_id, lock=True), fields, EDGE_CLEANERS)
    return _save_and_sync(actor=actor, entity=edge)


# Episodes

@transaction.atomic
def episode_create(*, actor: User, session: Session, title, narrative, mood_arc=None, lessons=None, breakthroughs=None,
                   frustrations=None) -> Episode:
    """The story of one session, in the session's project (end_session decides when one is written)."""
    if session is None:
        raise InvalidInput("An episode needs the session it tells: pass session.", field="session_id")
    session = session_owned(actor=actor, session=session)
    project = project_get_writable(actor=actor, project_id=session.project_id)
    episode = Episode(
        project=project, cube_id=project.cube_id, owner=actor, session=session, title=clean_title(title),
        narrative=clean_text(narrative, field="narrative"),
        mood_arc=clean_list(mood_arc, field="mood_arc", max_item_chars=MAX_MOOD_CHARS),
        lessons=clean_list(lessons, field="lessons"), breakthroughs=clean_list(breakthroughs, field="breakthroughs"),
        frustrations=clean_list(frustrations, field="frustrations"),
    )
    return _create(actor=actor, entity=episode)


EPISODE_CLEANERS = {
    "title": clean_title, "narrative": _text("narrative"),
    "mood_arc": lambda value: clean_list(value, field="mood_arc", max_item_chars=MAX_MOOD_CHARS),
    "lessons": _items("lessons"), "breakthroughs": _items("breakthroughs"), "frustrations": _items("frustrations"),
}


@transaction.atomic
def episode_update(*, actor: User, episode_id, title=None, narrative=None, mood_arc=None, lessons=None,
                   breakthroughs=None, frustrations=None) -> Episode:
    """Edit the story a session left (a person curating it: the title, narrative, lessons, ...)."""
    fields = {"title": title, "narrative": narrative, "mood_arc": mood_arc, "lessons": lessons,
              "breakthroughs": breakthroughs, "frustrations": frustrations}
    episode = _apply(_writable_entity(actor=actor, kind="episode", entity_id=episode_id, lock=True), fields,
                     EPISODE_CLEANERS)
    return _save_and_sync(actor=actor, entity=episode)


# Any kind

@transaction.atomic
def entity_delete(*, actor: User, kind: str, entity_id, curator: bool = False) -> ProjectEntity:
    """Soft delete (idempotent): the entity and its node disappear from reads, restorable together.
    ``curator``: the admin's mode (projects.curator_acts_as_owner)."""
    actor = _curated(actor=actor, kind=kind, entity_id=entity_id) if curator else actor
    entity = _writable_entity(actor=actor, kind=kind, entity_id=entity_id, include_deleted=True, lock=True)
    if entity.deleted_at is None:
        entity.deleted_at = timezone.now()
        entity.save(update_fields=["deleted_at", "updated_at"])
        node_delete(actor=actor, entity=entity)
    return entity


@transaction.atomic
def entity_restore(*, actor: User, kind: str, entity_id, curator: bool = False) -> ProjectEntity:
    """Undo entity_delete (idempotent); the node comes back with the entity."""
    actor = _curated(actor=actor, kind=kind, entity_id=entity_id) if curator else actor
    entity = _writable_entity(actor=actor, kind=kind, entity_id=entity_id, include_deleted=True, lock=True)
    if entity.deleted_at is not None:
        entity.deleted_at = None
        entity.save(update_fields=["deleted_at", "updated_at"])
        node_sync(actor=actor, entity=entity)  # restores the node, or makes it anew
    return entity



@transaction.atomic
def entity_purge(*, actor: User, kind: str, entity_id) -> None:
    """Delete a deleted entity for good, with its node. Only from the trash (entity_delete first); an entity of a
    deleted project goes with the project (project_purge)."""
    entity = _writable_entity(actor=actor, kind=kind, entity_id=entity_id, include_deleted=True, lock=True)
    if entity.deleted_at is None:
        raise InvalidInput(f"This {kind.replace('_', ' ')} is not deleted: delete it first, then delete it for good "
                           "from the trash.", field=ENTITY_ID_FIELDS[kind])
    node_purge(actor=actor, entity=entity)
    entity.delete()
