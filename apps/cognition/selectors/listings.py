"""What the Context Graph pages list, a page at a time: the actor's sessions with their pulse, a session's latest
items, the curation inbox, the undo log, the trash and the live scratchpads. Every list starts from the actor (their
sessions, tasks, undo entries and pads; tombstones of cubes they may read) and names its nodes in one query per page,
whatever the number of rows."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.paginator import Page, Paginator
from django.db.models import Exists, QuerySet
from django.db.models.functions import Left
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import RECENT_ITEMS, Stage
from apps.cognition.models import CgSession, CurationTask, ScratchpadItem, SessionItem, UndoEntry
from apps.cognition.selectors.status import open_tasks
from apps.cognition.selectors.tombstones import tombstones_readable
from apps.cognition.services.sessions import pulse_of, session_get
from apps.memories.selectors import memories_readable

PAGE_SIZE = 25
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class NodeRef:
    """A node a row names: its start (None when the actor cannot read it or it is gone for good)."""
    id: str
    excerpt: str | None
    deleted: bool = False


def node_refs(*, actor: User, node_ids) -> dict[str, NodeRef]:
    """Each of ``node_ids`` the actor may read (deleted ones too), with the start of its content: one query."""
    wanted = list({str(node_id) for node_id in node_ids})
    rows = (memories_readable(actor=actor, include_deleted=True).filter(pk__in=wanted)
            .values_list("pk", Left("content", EXCERPT_CHARS + 1), "deleted_at"))
    found = {str(pk): NodeRef(str(pk), _excerpt(start), deleted_at is not None) for pk, start, deleted_at in rows}
    return {node_id: found.get(node_id, NodeRef(node_id, None)) for node_id in wanted}


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS - 1].rstrip() + "…"


def _page(queryset: QuerySet, number) -> Page:
    return Paginator(queryset, PAGE_SIZE).get_page(number)


# --- sessions and the pulse --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SessionRow:
    session: CgSession
    pulse: utl.Pulse
    stage: Stage


def _urgent(actor: User) -> Exists:
    return Exists(CurationTask.objects.filter(owner=actor, status=CurationTask.Status.OPEN,
                                              priority=CurationTask.Priority.HIGH))


def _session_row(session: CgSession, urgent: bool) -> SessionRow:
    return SessionRow(session=session, pulse=pulse_of(session, urgent_task=urgent),
                      stage=utl.stage_of(session.interactions))


def sessions_page(*, actor: User, page=1) -> tuple[Page, list[SessionRow]]:
    """The actor's Context Graph sessions, the latest first, each with its pulse (entropy, coherence, the suggested
    next tool) and lifecycle stage."""
    sessions = CgSession.objects.filter(owner=actor).annotate(urgent=_urgent(actor)).order_by("-updated_at", "-pk")
    shown = _page(sessions, page)
    return shown, [_session_row(session, session.urgent) for session in shown]


def recent_sessions(*, actor: User, limit: int = 20) -> list[CgSession]:
    """The actor's latest sessions, for a page that lets them pick one."""
    return list(CgSession.objects.filter(owner=actor).order_by("-updated_at", "-pk")[:limit])


@dataclass(frozen=True)
class ItemRow:
    item: SessionItem
    # (node, score) for each node the item activated, best first.
    activated: list[tuple[NodeRef, float]]


@dataclass(frozen=True)
class SessionDetail:
    row: SessionRow
    items: list[ItemRow]


def session_detail(*, actor: User, session_id) -> SessionDetail:
    """One of the actor's sessions (another user's is not found) with its latest items, newest first, and the nodes
    each activated."""
    session = session_get(actor=actor, session_id=session_id)
    urgent = CurationTask.objects.filter(owner=actor, status=CurationTask.Status.OPEN,
                                         priority=CurationTask.Priority.HIGH).exists()
    items = list(SessionItem.objects.filter(session=session).defer("vector").order_by("-created_at", "-id")
                 [:RECENT_ITEMS])
    refs = node_refs(actor=actor, node_ids=[entry["node_id"] for item in items for entry in item.activated])
    return SessionDetail(row=_session_row(session, urgent), items=[
        ItemRow(item, [(refs[str(entry["node_id"])], float(entry["score"])) for entry in item.activated])
        for item in items])


# --- the curation inbox ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskRow:
    task: CurationTask
    nodes: list[NodeRef]

    @property
    def needs_note(self) -> bool:
        return self.task.suggested_tool == CurationTask.SuggestedTool.ANNOTATE_NODE


def _task_rows(actor: User, tasks: Page) -> list[TaskRow]:
    refs = node_refs(actor=actor, node_ids=[node_id for task in tasks for node_id in task.node_ids])
    return [TaskRow(task, [refs[str(node_id)] for node_id in task.node_ids]) for task in tasks]


def tasks_page(*, actor: User, closed: bool = False, page=1) -> tuple[Page, list[TaskRow]]:
    """The actor's open curation tasks, the most urgent first (``closed``: the decided ones, the latest first), with
    the start of each node's content."""
    if closed:
        tasks = (CurationTask.objects.filter(owner=actor).exclude(status=CurationTask.Status.OPEN)
                 .select_related("closed_by").order_by("-closed_at", "-created_at"))
    else:
        tasks = open_tasks(actor=actor)
    shown = _page(tasks, page)
    return shown, _task_rows(actor, shown)


# --- the undo log ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UndoRow:
    entry: UndoEntry
    nodes: list[NodeRef]
    now: datetime

    @property
    def sources(self) -> list[NodeRef]:
        """The nodes the operation took away (a merge names the node it made last)."""
        return self.nodes[:-1] if self.entry.operation == UndoEntry.Operation.MERGE else self.nodes

    @property
    def merged(self) -> NodeRef | None:
        return self.nodes[-1] if self.entry.operation == UndoEntry.Operation.MERGE and self.nodes else None

    @property
    def state(self) -> str:
        if self.entry.used_at is not None:
            return "used"
        return "expired" if self.entry.expires_at <= self.now else "available"


def undo_page(*, actor: User, page=1) -> tuple[Page, list[UndoRow]]:
    """The actor's merges and forgets that kept an undo, the latest first: which nodes, when, until when, and
    whether the undo was used (the snapshots themselves are not read)."""
    entries = UndoEntry.objects.filter(owner=actor).defer("snapshot").order_by("-created_at", "-pk")
    shown = _page(entries, page)
    refs = node_refs(actor=actor, node_ids=[node_id for entry in shown for node_id in entry.node_ids])
    now = timezone.now()
    return shown, [UndoRow(entry, [refs[str(node_id)] for node_id in entry.node_ids], now) for entry in shown]


# --- the trash ---------------------------------------------------------------------------------------------------

def trash_page(*, actor: User, page=1) -> Page:
    """The tombstones of cubes the actor may read, the latest first, each with ``recoverable`` (the actor's own
    undo, unused and not expired)."""
    return _page(tombstones_readable(actor=actor).order_by("-created_at", "-memory_id"), page)


# --- scratchpads -------------------------------------------------------------------------------------------------

def scratchpad_page(*, actor: User, page=1) -> Page:
    """The actor's scratchpad items that have not expired, grouped by session and agent, the newest first in each."""
    items = (ScratchpadItem.objects.filter(owner=actor, expires_at__gt=timezone.now())
             .order_by("session_id", "agent_id", "-created_at", "-id"))
    return _page(items, page)
