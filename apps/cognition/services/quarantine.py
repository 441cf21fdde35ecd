"""The quarantine: a node that check_adversarial flagged at store (an injection or an anomaly) is kept, but out of
the graph's reach until a reviewer (someone who may write its cube) releases it or forgets it.

Kept out how: retrieval and search leave quarantined nodes out (the exclusion cognition registers with
apps/memories/exclusions.py, applied by memory_filtered); the node keeps no link, so no traversal (neighbourhoods,
inject_context's expansion, causal paths) reaches it; the store records it in the session as activating nothing.
The links the store made and the ones it was asked to make (link_to) are written in the adversarial_block Event and
made on release.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from apps.accounts.models import User
from apps.cognition.lineage import changes_by
from apps.cognition.models import Event, NodeProfile
from apps.cognition.selectors.lineage import parse_node_id
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.immune import AdversarialCheck
from apps.core.exceptions import DomainError, NotFound, PermissionDenied
from apps.cubes.access import cube_ids_readable, cube_ids_writable
from apps.memories.models import Memory, MemoryLink
from apps.memories.services.curation import memory_link, memory_link_many, memory_unlink


def node_quarantine(*, actor: User, memory: Memory, check: AdversarialCheck, link_to: list[str]) -> Event:
    """Take a node just stored (inside its transaction) out of the graph's reach: its automatic links go, and the
    adversarial_block Event keeps them, with ``link_to`` and the findings, for the review."""
    made = list(MemoryLink.objects.filter(source=memory).values("target_id", "link_type", "weight"))
    for link in made:
        memory_unlink(actor=actor, source_id=memory.pk, target_id=link["target_id"])
    return Event.objects.create(
        owner_id=memory.owner_id, actor=actor, actor_label=memory.agent_id or actor.get_username(),
        action=Event.Action.ADVERSARIAL_BLOCK, node_ids=[memory.pk], reason=check.details,
        detail={"quarantined": True, "attack_type": check.attack_type, "confidence": check.confidence,
                "findings": [finding.as_dict() for finding in check.findings],
                "links_removed": [{"target": str(link["target_id"]), "link_type": link["link_type"],
                                   "weight": link["weight"]} for link in made],
                "link_to": [str(target) for target in link_to]})


@dataclass(frozen=True)
class Released:
    memory: Memory
    links_restored: int
    # Links that could not come back (their other end is gone, or no longer yours to read).
    links_lost: int


def node_release(*, actor: User, node_id, curator: bool = False) -> Released:
    """A reviewer's release of a quarantined node: back in retrieval, with the links its store made and those it
    asked for (as far as their other ends still live and are readable), and a restored Event. The reviewer may
    write the node's cube; a node they cannot read, or that is not in quarantine, is not found. ``curator``: any
    user's node, as its owner would release it, recorded as the actor's."""
    node = parse_node_id(node_id)
    owner = curator_scope(actor=actor, curator=curator, rows=NodeProfile.objects.filter(memory_id=node),
                          owner_field="memory__owner")
    with transaction.atomic(), changes_by(actor if owner != actor else None):
        profile = (NodeProfile.objects.select_for_update(of=("self",)).select_related("memory")
                   .filter(memory_id=node, quarantined=True, memory__deleted_at__isnull=True,
                           memory__cube_id__in=cube_ids_readable(actor=owner)).first())
        if profile is None:
            raise NotFound(f"Node {node} is not in a quarantine you can see: it is unknown, not yours, forgotten or "
                           "released already.", extra={"field": "node_id", "suggestion":
                                                       "List the quarantine (GET /api/v1/cognition/quarantine/)."})
        memory = profile.memory
        if not cube_ids_writable(actor=owner).filter(id=memory.cube_id).exists():
            raise PermissionDenied(f"Node {node} is in cube {memory.cube_id}, which you may read but not change: its "
                                   "owner or a writer of the cube reviews it.", extra={"field": "node_id"})
        profile.quarantined = False
        profile.save(update_fields=["quarantined"])
        block = (Event.objects.filter(action=Event.Action.ADVERSARIAL_BLOCK, node_ids__contains=[memory.pk])
                 .order_by("-created_at", "-id").first())
        restored, lost = _relink(owner, memory, block.detail if block else {})
        Event.objects.create(owner_id=memory.owner_id, actor=actor, actor_label=actor.get_username(),
                             action=Event.Action.RESTORED, node_ids=[memory.pk],
                             reason=f"Released from quarantine by {actor.get_username()}.",
                             detail={"released_from_quarantine": True, "links_restored": restored,
                                     "links_lost": lost})
    return Released(memory=memory, links_restored=restored, links_lost=lost)


def _relink(actor: User, memory: Memory, detail: dict) -> tuple[int, int]:
    restored = lost = 0
    for link in detail.get("links_removed", []):
        try:
            with transaction.atomic():
                memory_link(actor=actor, source_id=memory.pk, target_id=link["target"], link_type=link["link_type"],
                            weight=link["weight"])
            restored += 1
        except DomainError:  # the other end is gone or out of reach: the rest still come back
            lost += 1
    for target in detail.get("link_to", []):
        try:
            with transaction.atomic():
                restored += len(memory_link_many(actor=actor, source_id=memory.pk, target_ids=[target]))
        except DomainError:
            lost += 1
    return restored, lost
