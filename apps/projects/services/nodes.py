"""Each decision, issue, sharp edge and episode is also a node of the memory graph: a Memory of the
matching kind, in the entity's cube, whose content is the entity's text. Search, the live graph and
linking then see Mind's knowledge like any other memory, and context retrieval finds it semantically.

The services of entities.py call these after every write, so the node never drifts from its entity:
created with it, re-embedded when its text changes, soft-deleted and restored with it.
"""
from __future__ import annotations

from django.conf import settings

from apps.accounts.models import User
from apps.memories.models import Memory
from apps.memories.services import memory_delete, memory_restore, memory_store, memory_update
from apps.projects.models import Decision, Episode, Issue, ProjectEntity, SharpEdge

NODE_KINDS: dict[type[ProjectEntity], str] = {
    Decision: Memory.Kind.DECISION, Issue: Memory.Kind.ISSUE, SharpEdge: Memory.Kind.SHARP_EDGE,
    Episode: Memory.Kind.EPISODE,
}
# A decision is a judgement, an issue and an episode are things that happened, a sharp edge is know-how.
NODE_SECTORS = {
    Memory.Kind.DECISION: "reflective", Memory.Kind.ISSUE: "episodic", Memory.Kind.SHARP_EDGE: "procedural",
    Memory.Kind.EPISODE: "episodic",
}


def _lines(*labelled: tuple[str, str]) -> list[str]:
    return [f"{label}: {value}" for label, value in labelled if value]


def _listed(values: list[str]) -> str:
    return "; ".join(values)


def node_kind(entity: ProjectEntity) -> str:
    return NODE_KINDS[type(entity)]


def node_text(entity: ProjectEntity) -> str:
    """The node's content: the entity's title and prose, labelled, one line each. The only place that
    decides what of an entity is searchable; cut to the memory content limit (the entity keeps it all)."""
    if isinstance(entity, Decision):
        alternatives = _listed([
            f"{alt['option']} (rejected: {alt['rejected_because']})" if alt.get("rejected_because") else alt["option"]
            for alt in entity.alternatives
        ])
        lines = _lines(("Decision", entity.title), ("Description", entity.description), ("Context", entity.context),
                       ("Reasoning", entity.reasoning), ("Alternatives", alternatives),
                       ("Revisit if", entity.revisit_if), ("Triggers", _listed(entity.trigger_phrases)))
    elif isinstance(entity, Issue):
        lines = _lines(("Issue", entity.title), ("Description", entity.description),
                       ("Symptoms", _listed(entity.symptoms)), ("Current theory", entity.current_theory),
                       ("Blocked by", entity.blocked_by), ("Resolution", entity.resolution),
                       ("Triggers", _listed(entity.trigger_phrases)))
        lines += [f"Attempt: {a['what']} -> {a['result']}" + (f" (learned: {a['learned']})" if a.get("learned") else "")
                  for a in entity.attempts]
    elif isinstance(entity, SharpEdge):
        lines = _lines(("Sharp edge", entity.title), ("Description", entity.description),
                       ("Workaround", entity.workaround), ("Symptoms", _listed(entity.symptoms)),
                       ("Root cause", entity.root_cause),
                       ("Detects", _listed([p.get("description") or p["pattern"] for p in entity.detection_patterns])))
    else:
        lines = _lines(("Episode", entity.title), ("Narrative", entity.narrative), ("Mood", _listed(entity.mood_arc)),
                       ("Lessons", _listed(entity.lessons)), ("Breakthroughs", _listed(entity.breakthroughs)),
                       ("Frustrations", _listed(entity.frustrations)))
    return "\n".join(lines)[:settings.ENGRAM_MAX_CONTENT_CHARS]


def node_create(*, actor: User, entity: ProjectEntity) -> Memory:
    """Store the entity's node (embedding and linking it) and point the entity at it."""
    kind = node_kind(entity)
    memory = memory_store(
        actor=actor, content=node_text(entity), kind=kind, cube_id=entity.cube_id, primary_sector=NODE_SECTORS[kind],
        tags=["mind", kind], category=kind,
        metadata={"entity": kind, "entity_id": str(entity.pk),
                  "project_id": str(entity.project_id) if entity.project_id else None},
    ).memory
    entity.node = memory
    type(entity).objects.filter(pk=entity.pk).update(node=memory)
    return memory


def node_sync(*, actor: User, entity: ProjectEntity) -> Memory:
    """Bring the node in step with the entity after an update: new text re-embeds it. A node the user
    removed from the memory graph separately comes back (restored, or made anew when hard-deleted),
    since a live entity always has a live node."""
    memory = Memory.objects.filter(pk=entity.node_id).first() if entity.node_id else None
    if memory is None:
        return node_create(actor=actor, entity=entity)
    if memory.deleted_at is not None:
        memory = memory_restore(actor=actor, memory_id=memory.pk)
    text = node_text(entity)
    if memory.content != text:
        memory = memory_update(actor=actor, memory_id=memory.pk, content=text).memory
    entity.node = memory
    return memory


def node_delete(*, actor: User, entity: ProjectEntity) -> None:
    """Soft-delete the node with its entity (restorable with it)."""
    if entity.node_id and Memory.objects.filter(pk=entity.node_id, deleted_at__isnull=True).exists():
        memory_delete(actor=actor, memory_id=entity.node_id, soft=True)


def node_purge(*, actor: User, entity: ProjectEntity) -> None:
    """Delete the node for good with its entity (its vectors and links go with it)."""
    if entity.node_id and Memory.objects.filter(pk=entity.node_id).exists():
        memory_delete(actor=actor, memory_id=entity.node_id, soft=False)
