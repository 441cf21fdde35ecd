"""The trash: everything deleted that the actor can still bring back, of every kind, in one list, newest first.

Each kind is one branch of a single UNION ALL (the same seven columns from each table), so a page costs one query for
the count and one for its rows, whatever the kinds and however many items. What a branch holds is what the kind's
restore service accepts from the actor:

- memories and forgotten nodes: soft-deleted memories in cubes the actor may write. Plain memories (and summaries)
  only: the node of a decision, issue, sharp edge, episode or thought comes back with its entity or session, which is
  what the trash lists. A forgotten node (a Context Graph tombstone) is purged at its tombstone's deadline
  (UNDO_RETENTION_DAYS after the forget, by the hourly purge); nothing else here expires.
- cubes: the actor's own unregistered cubes (only the owner may restore or delete one).
- projects, and decisions, issues, sharp edges and episodes of live projects (and global sharp edges): deleted ones
  in cubes the actor may write. An entity of a deleted project comes back with its project.
- thought sessions and notebooks: the actor's own deleted ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.paginator import Page, Paginator
from django.db.models import DateTimeField, F, Q, QuerySet, TextChoices, TextField, Value
from django.db.models.functions import Cast, Left

from apps.accounts.models import User
from apps.core.exceptions import NotFound
from apps.core.validation import clean_choice, parse_uuid
from apps.cubes.access import cube_ids_writable
from apps.cubes.selectors import cubes_unregistered
from apps.cubes.validation import is_cube_id
from apps.memories.models import Memory
from apps.projects.models import Decision, Episode, Issue, Project, SharpEdge
from apps.reasoning.models import Notebook, ThoughtSession

PAGE_SIZE = 25
# How much of a memory's content stands for its title in the list.
TITLE_CHARS = 200
# The memory kinds a person or an agent stores as memories; the others are nodes of an entity or a thought.
MEMORY_KINDS = (Memory.Kind.MEMORY, Memory.Kind.SUMMARY)


class Kind(TextChoices):
    MEMORY = "memory", "Memory"
    FORGOTTEN = "forgotten", "Forgotten node"
    CUBE = "cube", "Cube"
    PROJECT = "project", "Project"
    DECISION = "decision", "Decision"
    ISSUE = "issue", "Issue"
    SHARP_EDGE = "sharp_edge", "Sharp edge"
    EPISODE = "episode", "Episode"
    THOUGHT_SESSION = "thought_session", "Thought session"
    NOTEBOOK = "notebook", "Notebook"


ENTITY_MODELS = {Kind.DECISION: Decision, Kind.ISSUE: Issue, Kind.SHARP_EDGE: SharpEdge, Kind.EPISODE: Episode}
COLUMNS = ("trash_kind", "trash_id", "trash_title", "trash_place", "trash_parent", "trash_deleted_at",
           "trash_expires_at")
_NO_TEXT = Value(None, output_field=TextField())
_NO_TIME = Value(None, output_field=DateTimeField())


@dataclass(frozen=True)
class TrashItem:
    kind: str
    item_id: str
    title: str
    # Where it was: a memory's cube, an entity's or a project's project or cube ("" when nowhere in particular).
    place: str
    # The project an entity belongs to (its page lists the entity), else None.
    parent_id: str | None
    deleted_at: datetime
    # When the purge deletes it for good; None: kept until someone deletes it forever.
    expires_at: datetime | None

    @property
    def kind_label(self) -> str:
        return Kind(self.kind).label


def _text(expression) -> Cast:
    return Cast(expression, output_field=TextField())


def _columns(queryset: QuerySet, kind: str, *, title, place=_NO_TEXT, parent=_NO_TEXT, expires=_NO_TIME) -> QuerySet:
    """One branch of the union: the kind's rows as the seven columns, in the same order from every table."""
    return queryset.order_by().annotate(
        trash_kind=Value(str(kind), output_field=TextField()), trash_id=_text("pk"), trash_title=_text(title),
        trash_place=place if place is _NO_TEXT else _text(place), trash_parent=parent,
        trash_deleted_at=F("deleted_at"), trash_expires_at=expires,
    ).values(*COLUMNS)


def _branch(actor: User, kind: str) -> QuerySet:
    """The kind's items in the actor's trash (see the module's docstring for what each kind holds)."""
    writable = cube_ids_writable(actor=actor)
    if kind in (Kind.MEMORY, Kind.FORGOTTEN):
        deleted = Memory.objects.filter(deleted_at__isnull=False, cube_id__in=writable)
        if kind == Kind.MEMORY:
            return _columns(deleted.filter(kind__in=MEMORY_KINDS, tombstone__isnull=True), kind,
                            title=Left("content", TITLE_CHARS), place=F("cube__name"))
        return _columns(deleted.filter(tombstone__isnull=False), kind, title=Left("content", TITLE_CHARS),
                        place=F("cube__name"), expires=F("tombstone__deadline"))
    if kind == Kind.CUBE:
        return _columns(cubes_unregistered(actor=actor), kind, title=F("name"))
    if kind == Kind.PROJECT:
        return _columns(Project.objects.filter(deleted_at__isnull=False, cube_id__in=writable), kind,
                        title=F("name"), place=F("cube__name"))
    if kind in ENTITY_MODELS:
        live_project = Q(project__deleted_at__isnull=True) | Q(project__isnull=True)
        return _columns(ENTITY_MODELS[kind].objects.filter(live_project, deleted_at__isnull=False,
                                                           cube_id__in=writable),
                        kind, title=F("title"), place=F("project__name"), parent=_text("project_id"))
    model = ThoughtSession if kind == Kind.THOUGHT_SESSION else Notebook
    return _columns(model.objects.filter(owner=actor, deleted_at__isnull=False), kind, title=F("title"))


def _item(row: dict) -> TrashItem:
    return TrashItem(kind=row["trash_kind"], item_id=row["trash_id"], title=row["trash_title"],
                     place=row["trash_place"] or "", parent_id=row["trash_parent"],
                     deleted_at=row["trash_deleted_at"], expires_at=row["trash_expires_at"])


def clean_kind(kind) -> str:
    return clean_choice(kind, field="kind", choices=Kind.values)


def trash_list(*, actor: User, kind: str | None = None) -> QuerySet:
    """Every item of the actor's trash (or of one ``kind``), newest deletion first, as rows of COLUMNS."""
    kinds = [clean_kind(kind)] if kind else Kind.values
    first, *rest = [_branch(actor, name) for name in kinds]
    rows = first.union(*rest, all=True) if rest else first
    return rows.order_by("-trash_deleted_at", "trash_kind", "trash_id")


def trash_page(*, actor: User, kind: str | None = None, page=1) -> Page:
    """A page of trash_list, its items as TrashItems: two queries (the count and the rows)."""
    found = Paginator(trash_list(actor=actor, kind=kind), PAGE_SIZE).get_page(page)
    found.object_list = [_item(row) for row in found.object_list]
    return found


def trash_get(*, actor: User, kind: str, item_id) -> TrashItem:
    """One item of the actor's trash; anything else (live, gone, someone else's, a malformed id) is not found."""
    kind = clean_kind(kind)
    if kind == Kind.CUBE:
        found = is_cube_id(item_id)
    else:
        parse_uuid(item_id, field="item_id", label=Kind(kind).label, code="not_found")
        found = True
    row = _branch(actor, kind).filter(pk=item_id).first() if found else None
    if row is None:
        raise NotFound(f"{Kind(kind).label} {item_id!r} is not in your trash.", extra={"field": "item_id"})
    return _item(row)
