"""Thoughtbox's thought sessions: appending thoughts to a tamper-evident hash chain, verifying the chain,
exporting a session in the seed's Session Export Format, and soft delete / restore.

Sessions. A client (``client_key``: its token and MCP session) has at most one *current* session: its
most recently updated one that is neither completed nor deleted. Thought 1 starts a new session
(Thoughtbox's rule), except a thought 1 that revises or branches (it refers back into the current
session) and the thought 1 that ends backward planning (5, 4, ... 1: the session has no thought 1 yet);
any thought starts one when the client has no current session (backward planning starts at thought 5).
A final thought (``next_thought_needed`` false) completes the session. ``session_id`` names a session
explicitly (REST, the dashboard); adding to a completed one reopens it.

The hash chain. Each thought's ``content_hash`` is the SHA-256 hex digest of the UTF-8 bytes of

    json.dumps({"agent_id": <agent id, "" if none>, "created_at": <created_at in UTC, isoformat with
                microseconds, e.g. "2026-11-21T20:07:06.123456+00:00">, "parent_hash": <parent hash>,
                "thought": <thought text as stored>, "thought_number": <int>},
               sort_keys=True, separators=(",", ":"), ensure_ascii=False)

``parent_hash`` is "genesis" for the main line's first thought, else the ``content_hash`` of the parent
that ``ChainReplay`` (selectors.py) names: the previous thought of the same line, or for a branch's first
thought the thought it forks from. Appends lock the session row, so two concurrent appends can never
give two thoughts the same parent by accident, and each thought's ``created_at`` is strictly later than
the previous one's, so the append order is recoverable from the rows alone. ``chain_verify`` replays
the chain: it recomputes every hash and every parent link and reports each break.

Each thought is also a memory-graph node (a Memory of kind "thought" in the owner's personal cube),
stored in the same transaction as the thought so that neither exists without the other.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from apps.accounts.models import User
from apps.core.exceptions import DomainError, InvalidInput, NotFound
from apps.core.limits import THOUGHT_NUMBER
from apps.cubes.services import cube_ensure_personal
from apps.core.timestamps import iso_timestamp
from apps.memories.models import Memory
from apps.memories.services import memory_delete, memory_restore, memory_store
from apps.memories.validation import clean_labels, clean_text
from apps.projects.services.export import export_dir, write_atomically
from apps.core.validation import clean_bool
from apps.reasoning.models import GENESIS, Thought, ThoughtSession
from apps.reasoning.selectors import (
    ChainReplay, linked_thoughts, session_current, session_dict, session_get, session_latest, thoughts_of,
)

EXPORT_VERSION = "1.0"
EXPORT_SESSION_KEYS = ("id", "title", "tags", "createdAt", "updatedAt")
HASH_ALGORITHM = "sha256"
MAX_THOUGHT_NUMBER = THOUGHT_NUMBER.high
MAX_SESSION_TAGS = 20
MAX_TITLE_CHARS = 300
MAX_DERIVED_TITLE_CHARS = 80
MAX_AGENT_CHARS = 200
MAX_CLIENT_KEY_CHARS = 200
BRANCH_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")
DESTINATION_PART = re.compile(r"[A-Za-z0-9_.-]{1,100}")
# The seed's default destination: accepted as "the default folder", never expanded to a server home.
SEED_DEFAULT_DESTINATIONS = {"~/.thoughtbox/exports", "~/.thoughtbox/exports/"}
MAX_SLUG_CHARS = 60


@dataclass(frozen=True)
class ThoughtAdded:
    session: ThoughtSession
    thought: Thought
    session_created: bool
    history_length: int
    branches: list[str]
    is_final: bool
    # Argument names this call gave but that had no effect (session_title/session_tags when the
    # thought did not create the session), and a sentence per adjustment for the client to read.
    ignored: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChainVerification:
    valid: bool
    checked: int
    broken: list[dict]
    head_hash: str

    def as_dict(self) -> dict:
        return {"algorithm": HASH_ALGORITHM, "valid": self.valid, "checked": self.checked, "broken": self.broken,
                "headHash": self.head_hash}


@dataclass(frozen=True)
class ExportWritten:
    path: Path
    filename: str
    export: dict = field(repr=False)


# The chain

def thought_hash(*, thought: str, thought_number: int, parent_hash: str, agent_id: str, created_at: datetime) -> str:
    """The canonical content hash (the module docstring states the exact form)."""
    canonical = json.dumps(
        {"agent_id": agent_id, "created_at": created_at.astimezone(UTC).isoformat(timespec="microseconds"),
         "parent_hash": parent_hash, "thought": thought, "thought_number": thought_number},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _hash_of(thought: Thought) -> str:
    return thought_hash(thought=thought.thought, thought_number=thought.thought_number,
                        parent_hash=thought.parent_hash, agent_id=thought.agent_id, created_at=thought.created_at)


def verify_thoughts(thoughts: list[Thought]) -> ChainVerification:
    """Replay a session's thoughts (in append order) and report every break: a stored hash that is not the
    hash of the stored fields (edited text, number, agent or time, or a forged hash), and a parent hash that
    is not the hash of the parent the replay expects (a removed, reordered or re-pointed thought)."""
    replay = ChainReplay()
    broken = []
    for thought in thoughts:
        parent = replay.parent_of(thought)
        expected_parent = parent.content_hash if parent is not None else GENESIS
        if thought.parent_hash != expected_parent:
            broken.append(_break(thought, "parent_mismatch",
                                 f"parent hash {thought.parent_hash[:12]} is not the hash of "
                                 + (f"thought {parent.thought_number} ({expected_parent[:12]})" if parent
                                    else f"the chain's start ({GENESIS})")))
        if _hash_of(thought) != thought.content_hash:
            broken.append(_break(thought, "content_hash_mismatch",
                                 "the stored hash does not match the thought's text, number, parent, agent and time"))
        replay.add(thought)
    head = thoughts[-1].content_hash if thoughts else GENESIS
    return ChainVerification(valid=not broken, checked=len(thoughts), broken=broken, head_hash=head)


def _break(thought: Thought, reason: str, detail: str) -> dict:
    return {"thoughtId": str(thought.pk), "thoughtNumber": thought.thought_number, "reason": reason,
            "detail": f"Thought {thought.thought_number}: {detail}."}


def chain_verify(*, actor: User, session_id) -> ChainVerification:
    return verify_thoughts(thoughts_of(session_get(actor=actor, session_id=session_id)))


# Input

def _positive(value, *, name: str, required: bool = True) -> int | None:
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be a whole number of at least 1.", field=name)
    if not 1 <= value <= MAX_THOUGHT_NUMBER:
        raise InvalidInput(f"{name} must be between 1 and {MAX_THOUGHT_NUMBER}, got {value}.", field=name)
    return value


def _clean_thought(value) -> str:
    if not isinstance(value, str):
        raise InvalidInput("thought must be a string: the text of this thinking step.", field="thought")
    if "\x00" in value:
        raise InvalidInput("thought cannot contain NUL bytes (\\u0000): remove them.", field="thought")
    if not value.strip():
        raise InvalidInput("thought cannot be empty: write the content of this thinking step.", field="thought")
    limit = settings.ENGRAM_MAX_CONTENT_CHARS
    if len(value) > limit:
        raise InvalidInput(f"thought is {len(value)} characters long; the limit is {limit} (ENGRAM_MAX_CONTENT_CHARS): "
                           f"split it into several thoughts.", field="thought", extra={"limit": limit})
    return value


def _clean_branch_id(value) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or not BRANCH_ID.fullmatch(value):
        raise InvalidInput("branch_id must be 1-100 characters of letters, digits, '-', '_' or '.', "
                           f"e.g. 'caching-approach'; got {value!r}.", field="branch_id")
    return value


def _clean_tags(values) -> list[str]:
    """Session tags: trimmed, lower-cased, blanks dropped, duplicates removed (first one wins)."""
    tags = list(dict.fromkeys(tag.lower() for tag in clean_labels(values, field_name="session_tags")))
    if len(tags) > MAX_SESSION_TAGS:
        raise InvalidInput(f"session_tags has {len(tags)} tags; at most {MAX_SESSION_TAGS}.", field="session_tags")
    return tags


def derived_title(thought: str) -> str:
    """A title from the thought's first words: its first line, cut at a word to at most 80 characters."""
    line = " ".join(thought.strip().splitlines()[0].split())
    if len(line) <= MAX_DERIVED_TITLE_CHARS:
        return line
    cut = line[:MAX_DERIVED_TITLE_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:-")
    return f"{cut}…"


@dataclass(frozen=True)
class _Step:
    """One validated thoughtbox call."""

    thought: str
    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    is_revision: bool
    revises_thought: int | None
    branch_from_thought: int | None
    branch_id: str
    needs_more_thoughts: bool
    agent_id: str

    @property
    def refers_back(self) -> bool:
        return self.is_revision or self.branch_from_thought is not None or bool(self.branch_id)


def _clean_step(*, thought, thought_number, total_thoughts, next_thought_needed, is_revision, revises_thought,
                branch_from_thought, branch_id, needs_more_thoughts, agent_id) -> tuple[_Step, list[str]]:
    notices = []
    thought = _clean_thought(thought)
    thought_number = _positive(thought_number, name="thought_number")
    total_thoughts = _positive(total_thoughts, name="total_thoughts")
    if thought_number > total_thoughts:
        notices.append(f"total_thoughts raised from {total_thoughts} to {thought_number} (thought_number exceeded it).")
        total_thoughts = thought_number
    is_revision = clean_bool(is_revision, field="is_revision")
    revises_thought = _positive(revises_thought, name="revises_thought", required=False)
    if revises_thought is not None and not is_revision:
        raise InvalidInput("revises_thought is given but is_revision is not true: set is_revision to true to revise "
                           f"thought {revises_thought}, or leave revises_thought out.", field="is_revision")
    if is_revision and revises_thought is None:
        raise InvalidInput("is_revision is true but revises_thought is missing: give the number of the thought "
                           "this one revises.", field="revises_thought")
    branch_from_thought = _positive(branch_from_thought, name="branch_from_thought", required=False)
    branch_id = _clean_branch_id(branch_id)
    if branch_from_thought is not None and not branch_id:
        raise InvalidInput(f"branch_from_thought is {branch_from_thought} but branch_id is missing: name the branch "
                           "(e.g. 'caching-approach') so later thoughts can continue it.", field="branch_id")
    agent_id = clean_text(agent_id, field_name="agent_id", max_chars=MAX_AGENT_CHARS)
    step = _Step(thought=thought, thought_number=thought_number, total_thoughts=total_thoughts,
                 next_thought_needed=clean_bool(next_thought_needed, field="next_thought_needed"),
                 is_revision=is_revision, revises_thought=revises_thought, branch_from_thought=branch_from_thought,
                 branch_id=branch_id, needs_more_thoughts=clean_bool(needs_more_thoughts, field="needs_more_thoughts"),
                 agent_id=agent_id)
    return step, notices


# Appending

def _missing_thought(session: ThoughtSession, replay: ChainReplay, number: int, field_name: str) -> NotFound:
    existing = replay.numbers()
    have = (f"it has thoughts {', '.join(map(str, existing))}" if existing else "it has no thoughts yet")
    return NotFound(f"Thought {number} does not exist in session {session.title!r}; {have}. Give {field_name} the "
                    f"number of an existing thought.", code="thought_not_found",
                    extra={"field": field_name, "existing": existing})


def _starts_anew(session: ThoughtSession, step: _Step) -> bool:
    """Whether this thought starts a new session although the client has a current one: a plain thought 1
    does (Thoughtbox's rule), unless the current session has no thought 1 yet on its main line, which is
    backward planning (5, 4, ... 1) arriving at its first step."""
    return (step.thought_number == 1 and not step.refers_back
            and Thought.objects.filter(session=session, thought_number=1, branch_id="").exists())


def _resolve_session(*, actor: User, client_key: str, step: _Step, session_id, title,
                     tags) -> tuple[ThoughtSession, bool]:
    """The session this thought goes to (locked for the append), and whether it was created for it."""
    if session_id is not None:
        session = session_get(actor=actor, session_id=session_id)
    else:
        session = session_current(actor=actor, client_key=client_key)
        if session is not None and _starts_anew(session, step):
            session = None
    if session is not None:
        return ThoughtSession.objects.select_for_update().get(pk=session.pk), False
    session = ThoughtSession.objects.create(
        owner=actor, cube=cube_ensure_personal(actor=actor), client_key=client_key,
        title=title or derived_title(step.thought), tags=tags,
    )
    return session, True


def _next_moment(last: Thought | None) -> datetime:
    """Now, or a microsecond after the previous thought when the clock has not moved on (or went back)."""
    now = timezone.now()
    if last is not None and now <= last.created_at:
        return last.created_at + timedelta(microseconds=1)
    return now


def _store_node(*, actor: User, session: ThoughtSession, thought: Thought) -> Memory:
    """The thought's memory-graph node, stored for the caller to attach to the thought."""
    return memory_store(
        actor=actor, content=thought.thought, kind=Memory.Kind.THOUGHT, cube_id=str(session.cube_id),
        primary_sector="reflective", tags=["thoughtbox", *session.tags], category="thought",
        session_id=str(session.pk), agent_id=thought.agent_id, created_at=thought.created_at,
        metadata={"thought_session_id": str(session.pk), "thought_number": thought.thought_number,
                  "branch_id": thought.branch_id or None},
    ).memory


def thought_add(*, actor: User, client_key: str, thought: str, thought_number: int, total_thoughts: int,
                next_thought_needed: bool, is_revision: bool = False, revises_thought: int | None = None,
                branch_from_thought: int | None = None, branch_id: str | None = None,
                needs_more_thoughts: bool = False, session_title: str | None = None,
                session_tags: list[str] | None = None, session_id=None, agent_id: str = "") -> ThoughtAdded:
    """Record one thinking step (the seed's ``thoughtbox`` tool) in the client's current session, creating
    one when needed, and chain it."""
    step, notices = _clean_step(
        thought=thought, thought_number=thought_number, total_thoughts=total_thoughts,
        next_thought_needed=next_thought_needed, is_revision=is_revision, revises_thought=revises_thought,
        branch_from_thought=branch_from_thought, branch_id=branch_id, needs_more_thoughts=needs_more_thoughts,
        agent_id=agent_id,
    )
    client_key = clean_text(client_key, field_name="client_key", max_chars=MAX_CLIENT_KEY_CHARS)
    title = clean_text(session_title, field_name="session_title", max_chars=MAX_TITLE_CHARS)
    tags = _clean_tags(session_tags)
    with transaction.atomic():
        session, created = _resolve_session(actor=actor, client_key=client_key, step=step, session_id=session_id,
                                             title=title, tags=tags)
        prior = thoughts_of(session)
        replay = ChainReplay()
        for earlier in prior:
            replay.add(earlier)
        for number, field_name in ((step.revises_thought, "revises_thought"),
                                   (step.branch_from_thought, "branch_from_thought")):
            if number is not None and replay.find(number, step.branch_id) is None:
                raise _missing_thought(session, replay, number, field_name)
        if step.branch_id and step.branch_id not in replay.last_of_line and step.branch_from_thought is None:
            raise InvalidInput(f"Branch {step.branch_id!r} does not exist yet in this session: to start it, give "
                               "branch_from_thought, the number of the thought it forks from.",
                               field="branch_from_thought")
        record = Thought(
            session=session, thought=step.thought, thought_number=step.thought_number,
            total_thoughts=step.total_thoughts, next_thought_needed=step.next_thought_needed,
            is_revision=step.is_revision, revises_thought=step.revises_thought,
            branch_from_thought=step.branch_from_thought, branch_id=step.branch_id,
            needs_more_thoughts=step.needs_more_thoughts, agent_id=step.agent_id,
            created_at=_next_moment(prior[-1] if prior else None),
        )
        parent = replay.parent_of(record)
        record.parent_hash = parent.content_hash if parent is not None else GENESIS
        record.content_hash = _hash_of(record)
        record.node = _store_node(actor=actor, session=session, thought=record)
        record.save(force_insert=True)
        replay.add(record)
        session.completed_at = None if step.next_thought_needed else record.created_at
        session.save(update_fields=["completed_at", "updated_at"])
    ignored = tuple(name for name, given in (("session_title", title), ("session_tags", tags)) if given and not created)
    if ignored:
        notices.append(f"{' and '.join(ignored)} apply only to the thought that creates a session; this thought "
                       f"went to the existing session {session.title!r}, so they were ignored.")
    return ThoughtAdded(session=session, thought=record, session_created=created, history_length=len(prior) + 1,
                        branches=replay.branches, is_final=not step.next_thought_needed, ignored=ignored,
                        notices=tuple(notices))


# Export

def _export_node(link: dict) -> dict:
    thought: Thought = link["thought"]
    body = {"number": thought.thought_number, "content": thought.thought,
            "timestamp": iso_timestamp(thought.created_at)}
    if thought.branch_id:
        body["branchId"] = thought.branch_id
    if thought.is_revision:
        body["isRevision"] = True
        body["revisesThought"] = thought.revises_thought
    node = {"id": str(thought.pk), "thought": body, "prev": link["prev"], "next": link["next"]}
    for key in ("branchOrigin", "revisesNode"):
        if link[key] is not None:
            node[key] = link[key]
    node["contentHash"] = thought.content_hash
    node["parentHash"] = thought.parent_hash
    return node


def _export_session(*, actor: User, session_id, client_key: str | None) -> ThoughtSession:
    if session_id is not None:
        return session_get(actor=actor, session_id=session_id)
    session = session_latest(actor=actor, client_key=client_key)
    if session is None:
        raise NotFound("There is no current session to export: record a thought first, or give session_id "
                       "(list sessions with thoughtbox://init/sessions).", code="session_not_found",
                       extra={"field": "session_id"})
    return session


def _export_of(session: ThoughtSession, exported_at: datetime) -> dict:
    thoughts = thoughts_of(session)
    described = session_dict(session)
    return {
        "version": EXPORT_VERSION, "exportedAt": iso_timestamp(exported_at),
        "session": {key: described[key] for key in EXPORT_SESSION_KEYS},
        "thoughts": [_export_node(link) for link in linked_thoughts(thoughts)],
        "integrity": verify_thoughts(thoughts).as_dict(),
    }


def session_export(*, actor: User, session_id=None, client_key: str | None = None) -> dict:
    """The seed's SessionExport of a session (default: the client's latest, which is usually the one its
    final thought just completed), with each node's hashes and the chain's integrity."""
    return _export_of(_export_session(actor=actor, session_id=session_id, client_key=client_key), timezone.now())


def _export_folder(actor: User, destination) -> Path:
    """``ENGRAM_EXPORT_DIR/<user pk>/thoughtbox[/<destination>]``: a destination is a relative sub-folder
    name, never a server path, so no export can land outside the actor's own folder."""
    folder = export_dir(actor) / "thoughtbox"
    if destination is None:
        return folder
    if not isinstance(destination, str):
        raise InvalidInput("destination must be a folder name.", field="destination")
    destination = destination.strip()
    if destination in SEED_DEFAULT_DESTINATIONS | {""}:
        return folder
    parts = destination.strip("/").split("/")
    if destination.startswith(("/", "~", "\\")) or any(
            part in (".", "..") or not DESTINATION_PART.fullmatch(part) for part in parts):
        raise InvalidInput(
            f"destination {destination!r} is not allowed: exports stay in your own export folder, so give a "
            "relative sub-folder name of letters, digits, '-', '_' or '.' (e.g. 'debugging' or 'team/2026'), "
            "without '..' or a leading '/' or '~'; leave it out for the default folder.", field="destination")
    return folder.joinpath(*parts)


def session_export_write(*, actor: User, session_id=None, client_key: str | None = None,
                         destination: str | None = None) -> ExportWritten:
    """Write the export as ``thoughtbox-<title slug>-<UTC yyyymmddThhmmss>.json`` (``-2``... when taken)."""
    folder = _export_folder(actor, destination)
    session = _export_session(actor=actor, session_id=session_id, client_key=client_key)
    exported_at = timezone.now()
    export = _export_of(session, exported_at)
    slug = slugify(session.title)[:MAX_SLUG_CHARS].strip("-") or f"session-{str(session.pk)[:8]}"
    try:
        path = write_atomically(folder, f"thoughtbox-{slug}-{exported_at.astimezone(UTC):%Y%m%dT%H%M%S}", "json",
                                 json.dumps(export, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise DomainError(f"Could not write the export: {exc.strerror or exc}. Check the export folder's write "
                          "permissions (ENGRAM_EXPORT_DIR).", code="export_failed") from exc
    return ExportWritten(path=path, filename=path.name, export=export)


# Delete and restore

def session_delete(*, actor: User, session_id) -> ThoughtSession:
    """Soft-delete a session and its thoughts' memory nodes (session_restore brings both back)."""
    with transaction.atomic():
        session = session_get(actor=actor, session_id=session_id)
        session.deleted_at = timezone.now()
        session.save(update_fields=["deleted_at", "updated_at"])
        for node_id in Memory.objects.filter(
                pk__in=Thought.objects.filter(session=session).values("node_id"), deleted_at__isnull=True,
        ).values_list("pk", flat=True):
            memory_delete(actor=actor, memory_id=node_id, soft=True)
    return session


def session_restore(*, actor: User, session_id) -> ThoughtSession:
    """Undo session_delete: the session and its thoughts' nodes come back; a node that was removed from the
    memory graph for good meanwhile is stored anew, since a live thought always has a live node."""
    with transaction.atomic():
        session = session_get(actor=actor, session_id=session_id, include_deleted=True)
        if session.deleted_at is None:
            raise InvalidInput("This session is not deleted, so there is nothing to restore.", field="session_id")
        session.deleted_at = None
        session.save(update_fields=["deleted_at", "updated_at"])
        for thought in Thought.objects.filter(session=session).select_related("node"):
            if thought.node is None:
                thought.node = _store_node(actor=actor, session=session, thought=thought)
                thought.save(update_fields=["node"])
            elif thought.node.deleted_at is not None:
                memory_restore(actor=actor, memory_id=thought.node_id)
    return session


def session_purge(*, actor: User, session_id) -> None:
    """Delete a deleted session for good, with its thoughts and their memory nodes (vectors and links too). Only
    from the trash: session_delete first."""
    with transaction.atomic():
        session = session_get(actor=actor, session_id=session_id, include_deleted=True)
        if session.deleted_at is None:
            raise InvalidInput("This session is not deleted: delete it first, then delete it for good from the trash.",
                               field="session_id")
        for node_id in Memory.objects.filter(
                pk__in=Thought.objects.filter(session=session).values("node_id")).values_list("pk", flat=True):
            memory_delete(actor=actor, memory_id=node_id, soft=False)
        session.delete()
