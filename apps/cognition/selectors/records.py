"""The caller's own Context Graph records as lists and details for the REST edge: sessions (with the pulse and latest
items), curation tasks, undo entries and tombstones. Each reads from the actor, so another user's rows are never
listed and are not found by id."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, QuerySet
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.models import CgSession, CurationTask, Tombstone, UndoEntry
from apps.cognition.selectors.status import RecentItem, session_recent_items
from apps.cognition.selectors.tombstones import REASON_FILTERS, SEARCHABLE_REASONS
from apps.cognition.services.sessions import SESSION_NOT_FOUND, pulse_of, session_get
from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.access import cube_ids_readable

# A session's detail shows this many of its latest items.
SESSION_DETAIL_ITEMS = 20
TASK_STATUSES = ("all", *CurationTask.Status.values)


def session_list(*, actor: User) -> QuerySet[CgSession]:
    """The actor's sessions, the latest active first, each with whether a high-priority task waits (for its pulse)."""
    return CgSession.objects.filter(owner=actor).annotate(urgent=Exists(CurationTask.objects.filter(
        owner=OuterRef("owner"), status=CurationTask.Status.OPEN, priority=CurationTask.Priority.HIGH))).order_by(
        "-updated_at", "-id")


def session_pulse(session: CgSession) -> utl.Pulse:
    """The pulse of a session from ``session_list`` (its ``urgent`` annotation saves a query per session)."""
    return pulse_of(session, urgent_task=session.urgent)


@dataclass(frozen=True)
class SessionDetail:
    session: CgSession
    pulse: utl.Pulse
    recent_items: list[RecentItem]


def session_detail(*, actor: User, session_id) -> SessionDetail:
    """One of the actor's sessions with its pulse and latest items, newest first. Three queries."""
    session = session_get(actor=actor, session_id=session_id)
    if session is None:  # only when session_id is None, which no caller of a detail sends
        raise NotFound("Session not found.", code=SESSION_NOT_FOUND, extra={"field": "session_id"})
    urgent = CurationTask.objects.filter(owner=actor, status=CurationTask.Status.OPEN,
                                         priority=CurationTask.Priority.HIGH).exists()
    return SessionDetail(session=session, pulse=pulse_of(session, urgent_task=urgent),
                         recent_items=session_recent_items(session, limit=SESSION_DETAIL_ITEMS))


def task_list(*, actor: User, status: str = "all") -> QuerySet[CurationTask]:
    """The actor's curation tasks with ``status`` (or all), the newest first."""
    if status not in TASK_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(TASK_STATUSES)}.", field="status")
    tasks = CurationTask.objects.filter(owner=actor).select_related("closed_by")
    if status != "all":
        tasks = tasks.filter(status=status)
    return tasks.order_by("-created_at", "-id")


def undo_list(*, actor: User, usable_only: bool = False) -> QuerySet[UndoEntry]:
    """The actor's undo entries (the merges and forgets they made), newest first; ``usable_only``: those still
    unused and unexpired. The snapshot, which can be large, is not read."""
    usable = Q(used_at__isnull=True, expires_at__gt=timezone.now())
    entries = UndoEntry.objects.filter(owner=actor).defer("snapshot").annotate(
        usable=ExpressionWrapper(usable, output_field=BooleanField()))
    if usable_only:
        entries = entries.filter(usable)
    return entries.order_by("-created_at", "-reversal_hash")


def tombstone_list(*, actor: User, deletion_reason: str = "all") -> QuerySet[Tombstone]:
    """The actor's trash: tombstones of nodes in cubes they may read that are still deleted, newest first, each with
    ``recoverable`` (an unused, unexpired undo of the actor's own brings it back)."""
    if deletion_reason not in SEARCHABLE_REASONS:
        raise InvalidInput(f"deletion_reason must be one of {', '.join(SEARCHABLE_REASONS)}.", field="deletion_reason")
    tombstones = Tombstone.objects.filter(memory__cube_id__in=cube_ids_readable(actor=actor),
                                          memory__deleted_at__isnull=False)
    if deletion_reason != "all":
        tombstones = tombstones.filter(reason=REASON_FILTERS.get(deletion_reason, deletion_reason))
    usable = UndoEntry.objects.filter(pk=OuterRef("undo_id"), owner=actor, used_at__isnull=True,
                                      expires_at__gt=timezone.now())
    return (tombstones.select_related("memory").defer("memory__search_vector")
            .annotate(recoverable=Exists(usable)).order_by("-created_at", "-memory_id"))
