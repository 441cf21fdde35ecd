"""Curation by hand: a person links or unlinks two memories (from the graph page).

Automatic links come from apps/memories/services/linking.py when a memory is stored; these are the
manual ones. Both memories must be live and in cubes the actor may write. Each write publishes
``memory.relinked`` for the memory whose outgoing links changed, after commit (apps/graph/events.py),
so open graph pages redraw the edge.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from apps.accounts.models import User
from apps.core.exceptions import DomainError, InvalidInput, NotFound
from apps.graph import events
from apps.memories import changes
from apps.memories.changes import Action, Change
from apps.memories.models import MemoryLink
from apps.memories.selectors import memory_ids_readable
from apps.memories.services.lifecycle import _get_writable
from apps.memories.validation import clean_unit

DEFAULT_MANUAL_WEIGHT = 0.8


@dataclass(frozen=True)
class LinkResult:
    link: MemoryLink
    created: bool


def _pair(*, actor: User, source_id, target_id):
    if str(source_id) == str(target_id):
        raise InvalidInput("A memory cannot be linked to itself: choose two different memories.", field="target_id")
    return _writable(actor, source_id, "source_id"), _writable(actor, target_id, "target_id")


def _writable(actor: User, memory_id, field: str):
    """A live memory the actor may change; an error names ``field`` (source_id or target_id)."""
    try:
        return _get_writable(actor=actor, memory_id=memory_id, include_deleted=False)
    except DomainError as exc:
        exc.extra["field"] = field
        raise


def memory_link(*, actor: User, source_id, target_id, link_type: str = MemoryLink.LinkType.SEMANTIC,
                weight: float | None = None) -> LinkResult:
    """Link ``source`` to ``target`` (directed). An existing link between them takes the new type and weight."""
    if link_type not in MemoryLink.LinkType.values:
        raise InvalidInput(f"link_type must be one of {', '.join(MemoryLink.LinkType.values)}.", field="link_type")
    weight = DEFAULT_MANUAL_WEIGHT if weight is None else clean_unit(weight, field_name="weight")
    source, target = _pair(actor=actor, source_id=source_id, target_id=target_id)
    with transaction.atomic():
        link, created = MemoryLink.objects.update_or_create(
            source=source, target=target,
            defaults={"link_type": link_type, "weight": weight, "origin": MemoryLink.Origin.MANUAL},
        )
        changes.report([Change(Action.LINKED, str(source.pk), source.owner_id, actor.pk,
                               {"links": changes.link_detail([link])})])
        events.publish_after_commit(events.Kind.MEMORY_RELINKED, source.cube_id, events.memory_relinked(source))
    return LinkResult(link=link, created=created)


def memory_link_many(*, actor: User, source_id, target_ids: list, link_type: str = MemoryLink.LinkType.SEMANTIC,
                     weight: float | None = None) -> list[MemoryLink]:
    """Link ``source`` (a live memory the actor may change) to each of ``target_ids``: live memories the actor
    may read, since a link points at what its source's owner sees (Context Graph's store_memory link_to). An
    existing link takes the new type and weight. One statement for all; an unknown or unreadable target is "not
    found" and nothing is linked."""
    if link_type not in MemoryLink.LinkType.values:
        raise InvalidInput(f"link_type must be one of {', '.join(MemoryLink.LinkType.values)}.", field="link_type")
    weight = DEFAULT_MANUAL_WEIGHT if weight is None else clean_unit(weight, field_name="weight")
    source = _writable(actor, source_id, "source_id")
    wanted = list(dict.fromkeys(memory_ids_readable(actor=actor, memory_ids=target_ids, field="target_ids")))
    if str(source.pk) in wanted:
        raise InvalidInput("A memory cannot be linked to itself: leave its own id out.", field="target_ids")
    with transaction.atomic():
        links = MemoryLink.objects.bulk_create(
            [MemoryLink(source=source, target_id=target, link_type=link_type, weight=weight,
                        origin=MemoryLink.Origin.MANUAL) for target in wanted],
            update_conflicts=True, unique_fields=["source", "target"],
            update_fields=["link_type", "weight", "origin", "updated_at"],
        )
        if links:
            changes.report([Change(Action.LINKED, str(source.pk), source.owner_id, actor.pk,
                                   {"links": changes.link_detail(links)})])
            events.publish_after_commit(events.Kind.MEMORY_RELINKED, source.cube_id, events.memory_relinked(source))
    return links


def memory_unlink(*, actor: User, source_id, target_id) -> int:
    """Remove the links between two memories, in both directions. Returns how many were removed."""
    source, target = _pair(actor=actor, source_id=source_id, target_id=target_id)
    with transaction.atomic():
        links = MemoryLink.objects.filter(Q(source=source, target=target) | Q(source=target, target=source))
        removing = list(links)
        sources = {link.source_id for link in removing}
        if not sources:
            raise NotFound("These two memories are not linked.", extra={"field": "target_id"})
        owners = {source.pk: source.owner_id, target.pk: target.owner_id}
        changes.report(Change(Action.UNLINKED, str(link.source_id), owners[link.source_id], actor.pk,
                              {"links": changes.link_detail([link])}) for link in removing)
        removed, _ = links.delete()
        for memory in (source, target):
            if memory.pk in sources:
                events.publish_after_commit(events.Kind.MEMORY_RELINKED, memory.cube_id,
                                            events.memory_relinked(memory))
    return removed
