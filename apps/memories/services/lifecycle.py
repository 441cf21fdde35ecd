"""Changing memories over their life: update, delete, restore, reinforce, boost, re-embed and decay."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Case, F, FloatField, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Exp, Greatest
from django.utils import timezone

from apps.accounts.models import User
from apps.core.commits import unflushed_commit_sql
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.core.limits import BOOST_FACTOR
from apps.cubes.access import cube_ids_writable
from apps.graph import events
from apps.memories import changes
from apps.memories.changes import Action, Change
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.sectors import ContentVector
from apps.memories.selectors import memory_get, parse_memory_id
from apps.memories.services.linking import create_links
from apps.memories.services.store import _clean_metadata, embed_memories
from apps.memories.text import extract_keywords
from apps.memories.validation import (
    MAX_CONTEXT_CHARS, MAX_LABEL_CHARS, clean_content, clean_labels, clean_sector, clean_text, clean_unit,
)

# Reinforcement on access: +0.3 strength, halved when the memory was reinforced within the hour.
REINFORCE_STEP = 0.3
REINFORCE_WINDOW_SECONDS = 3600
# Decay: strength x exp(-rate x sector factor x days since last brought up to date), floored.
SECTOR_DECAY_FACTORS = {"episodic": 1.5, "semantic": 0.5, "procedural": 0.7, "emotional": 1.2, "reflective": 0.8}
DECAY_FLOOR = 0.1
# Why a boost was made, kept with its record.
MAX_BOOST_REASON_CHARS = 256


def _get_writable(*, actor: User, memory_id, include_deleted: bool = True, curator: bool = False) -> Memory:
    """A memory the actor may change. ``curator`` is the admin's mode: it reaches every user's memories,
    and is granted by the actor's own staff status and permission, never by the argument itself."""
    if curator:
        if not (actor.is_active and actor.is_staff and actor.has_perm("memories.change_memory")):
            raise PermissionDenied("Curating other users' memories needs staff status and the 'change memory' "
                                   "permission.")
        queryset = Memory.objects.all() if include_deleted else Memory.objects.filter(deleted_at__isnull=True)
        memory = queryset.filter(pk=parse_memory_id(memory_id)).first()
        if memory is None:
            raise NotFound("Memory not found", extra={"field": "memory_id"})
        return memory
    memory = memory_get(actor=actor, memory_id=memory_id, include_deleted=include_deleted)
    if not Memory.objects.filter(pk=memory.pk, cube_id__in=cube_ids_writable(actor=actor)).exists():
        raise PermissionDenied("You may read this memory but not change it.", extra={"field": "memory_id"})
    return memory


@dataclass(frozen=True)
class UpdateResult:
    memory: Memory
    embeddings_regenerated: bool
    connections_updated: int


def memory_update(*, actor: User, memory_id, content=None, strength=None, salience=None, importance=None,
                  keywords=None, tags=None, category=None, context=None, primary_sector=None,
                  metadata=None) -> UpdateResult:
    """Selective update: only the given fields (not None) change. New content re-embeds and relinks."""
    fields = {"content": content, "strength": strength, "salience": salience, "importance": importance,
              "keywords": keywords, "tags": tags, "category": category, "context": context,
              "primary_sector": primary_sector, "metadata": metadata}
    memory = _get_writable(actor=actor, memory_id=memory_id, include_deleted=False)
    cleaners = {
        "content": lambda v: clean_content(v),
        "strength": lambda v: clean_unit(v, field_name="strength"),
        "salience": lambda v: clean_unit(v, field_name="salience"),
        "importance": lambda v: clean_unit(v, field_name="importance"),
        "keywords": lambda v: clean_labels(v, field_name="keywords"),
        "tags": lambda v: clean_labels(v, field_name="tags"),
        "category": lambda v: clean_text(v, field_name="category", max_chars=MAX_LABEL_CHARS),
        "context": lambda v: clean_text(v, field_name="context", max_chars=MAX_CONTEXT_CHARS),
        "primary_sector": lambda v: clean_sector(v),
        "metadata": _clean_metadata,
    }
    cleaned = {name: cleaners[name](value) for name, value in fields.items() if value is not None}
    content_changed = "content" in cleaned and cleaned["content"] != memory.content
    diffs = {name: [getattr(memory, name), value] for name, value in cleaned.items() if getattr(memory, name) != value}
    for name, value in cleaned.items():
        setattr(memory, name, value)
    if content_changed and "keywords" not in cleaned:
        memory.keywords = extract_keywords(memory.content)
    vector = embed_memories([memory])[0] if content_changed else None
    connections = 0
    with transaction.atomic():
        memory.save()
        detail = {"fields": diffs}
        if vector is not None:
            detail.update(_relink(memory, vector))
            connections = len(detail["links"])
        changes.report([Change(Action.UPDATED, str(memory.pk), memory.owner_id, actor.pk, detail)])
        events.publish_after_commit(events.Kind.MEMORY_UPDATED, memory.cube_id,
                                    events.memory_changed(memory, relinked=vector is not None))
    return UpdateResult(memory=memory, embeddings_regenerated=vector is not None, connections_updated=connections)


def _replace_vector(memory: Memory, vector: ContentVector) -> None:
    MemoryVector.objects.filter(memory=memory).delete()
    MemoryVector.objects.create(memory=memory, embedding=vector.vector, tokens=vector.tokens)


# The links the content linker made (on store, and the causal ones a claim parsed): an edit redoes these. Links made
# by hand or by a dream are judgments about the memory, not about its words, and stay.
CONTENT_ORIGINS = (MemoryLink.Origin.STORE, MemoryLink.Origin.PARSE)


def _relink(memory: Memory, vector: ContentVector) -> dict:
    """New vector and content links for new content; the links before and after, for the change's record. A former
    neighbour keeps its link while the new content still reaches linking's KEEP_FLOOR with it."""
    _replace_vector(memory, vector)
    # What linking made for the old content: its outgoing links, and the causal links its claims drew in.
    outgoing = MemoryLink.objects.filter(source=memory, origin__in=CONTENT_ORIGINS)
    drawn_in = MemoryLink.objects.filter(target=memory, origin=MemoryLink.Origin.PARSE)
    before = changes.link_detail(outgoing) + [
        {"target": str(link.source_id), "link_type": link.link_type, "weight": link.weight, "incoming": True}
        for link in drawn_in]
    former = {str(link.target_id) for link in outgoing} | {str(link.source_id) for link in drawn_in}
    outgoing.delete()
    drawn_in.delete()
    return {"links_before": before, "links": changes.link_detail(create_links(memory, vector, keep=former))}


def memory_reembed(*, actor: User, memory_id, curator: bool = False) -> Memory:
    """Recompute a memory's vectors and links (after a model change, or from the admin)."""
    memory = _get_writable(actor=actor, memory_id=memory_id, include_deleted=False, curator=curator)
    vector = embed_memories([memory])[0]
    with transaction.atomic():
        changes.report([Change(Action.REEMBEDDED, str(memory.pk), memory.owner_id, actor.pk, _relink(memory, vector))])
        events.publish_after_commit(events.Kind.MEMORY_RELINKED, memory.cube_id, events.memory_relinked(memory))
    return memory


@transaction.atomic
def memory_delete(*, actor: User, memory_id, soft: bool = True, curator: bool = False) -> str:
    """Soft delete (the default) hides a memory and sets its strength to 0, keeping everything for
    memory_restore; hard delete removes it with its vectors and links. Returns "soft" or "hard"."""
    memory = _get_writable(actor=actor, memory_id=memory_id, curator=curator)
    if not soft:
        memory_id, cube_id = memory.pk, memory.cube_id
        changes.report([Change(Action.PURGED, str(memory_id), memory.owner_id, actor.pk)])
        memory.delete()
        events.publish_after_commit(events.Kind.MEMORY_HARD_DELETED, cube_id, events.memory_removed(memory_id))
        return "hard"
    if memory.deleted_at is None:
        memory.strength_before_delete = memory.strength
        memory.strength = 0.0
        memory.deleted_at = timezone.now()
        memory.deleted_by = actor
        memory.save(update_fields=["strength_before_delete", "strength", "deleted_at", "deleted_by", "updated_at"])
        changes.report([Change(Action.DELETED, str(memory.pk), memory.owner_id, actor.pk)])
        events.publish_after_commit(events.Kind.MEMORY_SOFT_DELETED, memory.cube_id, events.memory_removed(memory.pk))
    return "soft"


@transaction.atomic
def memory_purge(*, memory_id) -> bool:
    """The system's hard delete of a soft-deleted memory whose time in the trash is over (cognition's purge): the
    row goes with its vectors, links, profile and notes. False when it is gone already or was restored meanwhile,
    so running it twice is running it once."""
    memory = Memory.objects.select_for_update().filter(pk=memory_id, deleted_at__isnull=False).first()
    if memory is None:
        return False
    changes.report([Change(Action.PURGED, str(memory.pk), memory.owner_id, None)])
    memory.delete()
    return True


@transaction.atomic
def memory_restore(*, actor: User, memory_id, curator: bool = False) -> Memory:
    memory = _get_writable(actor=actor, memory_id=memory_id, curator=curator)
    if memory.deleted_at is None:
        raise InvalidInput("This memory is not deleted, so there is nothing to restore.", field="memory_id")
    memory.strength = memory.strength_before_delete if memory.strength_before_delete is not None else 1.0
    memory.strength_before_delete = None
    memory.deleted_at = None
    memory.deleted_by = None
    memory.save(update_fields=["strength_before_delete", "strength", "deleted_at", "deleted_by", "updated_at"])
    changes.report([Change(Action.RESTORED, str(memory.pk), memory.owner_id, actor.pk)])
    events.publish_after_commit(events.Kind.MEMORY_RESTORED, memory.cube_id, events.memory_restored(memory))
    return memory


@transaction.atomic
def memory_boost(*, actor: User, memory_id, amount: float = 0.1, factor: float | None = None, reason: str = "",
                 curator: bool = False) -> Memory:
    """Raise a memory's importance (curation from the admin and the dashboard) by ``amount``, and its salience by
    half that; or, with ``factor`` (Context Graph's boost_importance), set importance to clamp(importance x factor,
    0, 1), where a factor below 1 lowers it and salience stays."""
    if factor is not None:
        factor = BOOST_FACTOR.clean(factor, field="factor")
    else:
        amount = clean_unit(amount, field_name="amount")
    reason = clean_text(reason, field_name="reason", max_chars=MAX_BOOST_REASON_CHARS)
    memory = _get_writable(actor=actor, memory_id=memory_id, include_deleted=False, curator=curator)
    before = memory.importance
    if factor is not None:
        memory.importance = round(min(1.0, max(0.0, memory.importance * factor)), 6)
    else:
        memory.importance = round(min(1.0, memory.importance + amount), 4)
        memory.salience = round(min(1.0, memory.salience + amount / 2), 4)
    memory.save(update_fields=["importance", "salience", "updated_at"])
    detail = {"fields": {"importance": [before, memory.importance]}}
    if reason:
        detail["reason"] = reason
    changes.report([Change(Action.BOOSTED, str(memory.pk), memory.owner_id, actor.pk, detail)])
    events.publish_after_commit(events.Kind.MEMORY_BOOSTED, memory.cube_id, events.memory_changed(memory))
    return memory


def memory_reinforce(*, memory_ids: list) -> int:
    """Record an access of each memory (retrieval calls this for what it returns): count it, and add
    strength, less when the memory was reinforced within the hour. One UPDATE for the whole page."""
    if not memory_ids:
        return 0
    now = timezone.now()
    recent = now - timezone.timedelta(seconds=REINFORCE_WINDOW_SECONDS)
    # An access is bookkeeping, not a write anyone was promised: as its own transaction its commit does not wait
    # for the WAL flush (a crash may forget the last accesses, never a memory; docs/guarantees.md).
    relaxed = unflushed_commit_sql()
    # Raw SQL: every retrieval runs this, and the ORM would take longer to build it than PostgreSQL to run it.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Memory._meta.db_table} SET access_count = access_count + 1, last_accessed_at = %s, "
            "strength = LEAST(1.0, strength + CASE WHEN last_accessed_at >= %s THEN %s ELSE %s END) "
            f"WHERE id = ANY(%s::uuid[]) AND deleted_at IS NULL{relaxed}",
            [now, recent, REINFORCE_STEP / 2, REINFORCE_STEP, list(memory_ids)],
        )
        return cursor.rowcount


def memory_decay(*, now=None) -> int:
    """Bring every live memory's strength up to date (the periodic Celery task). Each run decays from
    the memory's last update point (creation, access or previous decay), so running it often or
    rarely gives the same strengths. Returns how many memories it touched."""
    now = now or timezone.now()
    factor = Case(*[When(primary_sector=s, then=Value(f)) for s, f in SECTOR_DECAY_FACTORS.items()],
                  default=Value(1.0), output_field=FloatField())
    # GREATEST skips NULLs in PostgreSQL, so never-accessed memories decay from creation.
    days = RawSQL("EXTRACT(EPOCH FROM (%s - GREATEST(created_at, last_accessed_at, decayed_at))) / 86400.0",
                  (now,), output_field=FloatField())
    decayed = Greatest(Value(DECAY_FLOOR), F("strength") * Exp(-F("decay_rate") * factor * days))
    return Memory.objects.filter(deleted_at__isnull=True, strength__gt=DECAY_FLOOR, created_at__lt=now).update(
        strength=decayed, decayed_at=now,
    )
