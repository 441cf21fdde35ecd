"""Curation of the graph by an agent or a person: notes on a node, importance, merging near-duplicates and forgetting.

Merges and forgets are reversible: each keeps an exact snapshot in the undo log (services/undo.py) under a reversal
hash, and the nodes they hide stay soft-deleted, with their vectors, behind a Tombstone until the undo expires
(then cognition.purge_expired removes them for good). Each closes the curation tasks open about its nodes, records
an Event on each node, and publishes its live-graph event after commit.

``actor`` is whose graph is curated: their access decides what may be read and changed, and the undo is kept for
them. ``recorded_as`` (a curator deciding the actor's task in the admin, services/decisions.py) is who the records
name instead; it grants nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import ANNOTATION_MAX_CHARS, MERGE_MAX_SOURCES, PRIORS_MIN_COSINE, Domain
from apps.cognition.models import Annotation, Event, NodeProfile, Tombstone, UndoEntry
from apps.cognition.services.inbox import tasks_close_for
from apps.cognition.services.undo import snapshot_links, snapshot_take, undo_record
from apps.core.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from apps.cubes.access import cube_ids_writable
from apps.graph import events
from apps.memories import changes
from apps.memories.changes import Action, Change
from apps.memories.embeddings import embed_texts
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.selectors import memories_readable, parse_memory_id
from apps.memories.sectors import ContentVector
from apps.memories.services import (
    embed_memories, memory_boost, memory_delete, memory_delete_many, memory_prepare_many, memory_store_prepared,
)
from apps.memories.services.curation import memory_link
from apps.memories.validation import clean_text

MERGEABLE_KINDS = (Memory.Kind.MEMORY, Memory.Kind.SUMMARY)
# Where nodes of the other kinds are curated: they mirror an entity of their own app, which keeps them in step.
KIND_OWNERS = {
    Memory.Kind.DECISION: "a Mind decision: change it through the mind profile (mind_add_decision supersedes it)",
    Memory.Kind.ISSUE: "a Mind issue: change it through the mind profile (mind_update_issue)",
    Memory.Kind.SHARP_EDGE: "a Mind sharp edge: change it through the mind profile (mind_add_edge)",
    Memory.Kind.EPISODE: "a Mind episode: the mind profile writes it (mind_end_session)",
    Memory.Kind.THOUGHT: "a Thoughtbox thought: revise it through the thoughtbox profile (the thoughtbox tool)",
}
STRATEGIES = ("keep_newest", "keep_highest", "concatenate", "summarize")
FORGET_REASONS = tuple(reason.value for reason in (
    Tombstone.Reason.SEMANTIC_CANCER, Tombstone.Reason.ADVERSARIAL_INJECTION, Tombstone.Reason.USER_REQUESTED,
    Tombstone.Reason.OBSOLETE))
# The gardener's own reason (services/gardener/): no edge offers it to a caller.
SYSTEM_FORGET_REASONS = (Tombstone.Reason.GLYMPHATIC_CLEARANCE.value,)
ANNOTATION_TYPES = tuple(Annotation.AnnotationType.values)
# A summary keeps sentences until it is about as long as the average source; one this similar to a kept one repeats it.
REPEATED_SENTENCE_COSINE = 0.9
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NOTE_EXCERPT_CHARS = 120


def _choice(value, choices, *, field: str) -> str:
    if value not in choices:
        raise InvalidInput(f"{field} must be one of {', '.join(choices)}.", field=field)
    return value


def _node_id(value, *, field: str) -> str:
    try:
        return parse_memory_id(value)
    except NotFound:
        raise InvalidInput(f"{field} must hold node ids (UUIDs), got {value!r}.", field=field) from None


def _curated(*, actor: User, node_ids: list, field: str, lock: bool = False) -> list[Memory]:
    """The live nodes the actor may change, in the order named: one that is unknown, not the actor's to read, or
    hidden is not found; one in a cube the actor may only read is refused."""
    wanted = [_node_id(node_id, field=field) for node_id in node_ids]
    queryset = memories_readable(actor=actor).filter(pk__in=wanted)
    found = {str(memory.pk): memory for memory in (queryset.select_for_update() if lock else queryset)}
    for memory_id in wanted:
        if memory_id not in found:
            raise NotFound(f"Node {memory_id} not found: it is unknown, not yours, or forgotten already.",
                           extra={"field": field, "suggestion": "Use node ids from search_graph; search_tombstones "
                                                                "finds forgotten ones."})
    writable = set(cube_ids_writable(actor=actor).filter(id__in={m.cube_id for m in found.values()})
                   .values_list("id", flat=True))
    for memory in found.values():
        if memory.cube_id not in writable:
            raise PermissionDenied(f"Node {memory.pk} is in cube {memory.cube_id}, which you may read but not change.",
                                   extra={"field": field})
    return [found[memory_id] for memory_id in wanted]


def _close_tasks(by: User, memories: list[Memory]) -> None:
    for owner_id in {memory.owner_id for memory in memories}:
        tasks_close_for(owner=User(pk=owner_id), node_ids=[memory.pk for memory in memories], actor=by)


def _events(by: User, action: str, memories: list[Memory], *, reason: str = "", reversal_hash: str = "",
            detail: dict | None = None) -> None:
    """One Event of ``action`` on each node, made ``by`` whoever acted (the actor, or the curator for them)."""
    Event.objects.bulk_create([
        Event(owner_id=memory.owner_id, actor=by, actor_label=by.get_username(), action=action,
              node_ids=[memory.pk], reason=reason, reversal_hash=reversal_hash, detail=detail or {})
        for memory in memories
    ])


# --- annotate_node and boost_importance ------------------------------------------------------------------------

@transaction.atomic
def annotation_add(*, actor: User, node_id, text, annotation_type: str = Annotation.AnnotationType.USER_NOTE,
                   reference_node_id=None, recorded_as: User | None = None) -> Annotation:
    """Marginalia on a node the actor may change: a correction, a reference, a deprecation or a note, optionally
    pointing at another readable node. Closes the curation tasks open about the node."""
    by = recorded_as or actor
    annotation_type = _choice(annotation_type, ANNOTATION_TYPES, field="annotation_type")
    text = clean_text(text, field_name="annotation", max_chars=ANNOTATION_MAX_CHARS)
    if not text:
        raise InvalidInput("annotation is empty: write the note.", field="annotation")
    [memory] = _curated(actor=actor, node_ids=[node_id], field="node_id")
    reference = None
    if reference_node_id is not None:
        reference = memories_readable(actor=actor).filter(
            pk=_node_id(reference_node_id, field="reference_node_id")).first()
        if reference is None:
            raise NotFound(f"Reference node {reference_node_id} not found.", extra={"field": "reference_node_id"})
        if reference.pk == memory.pk:
            raise InvalidInput("reference_node_id is the annotated node itself: name another node.",
                               field="reference_node_id")
    annotation = Annotation.objects.create(memory=memory, author=by, author_label=by.get_username(),
                                           annotation_type=annotation_type, text=text, reference=reference)
    _events(by, Event.Action.ANNOTATED, [memory], detail={
        "annotation_id": str(annotation.pk), "annotation_type": annotation_type,
        "reference_node_id": str(reference.pk) if reference else None})
    _close_tasks(by, [memory])
    return annotation


@dataclass(frozen=True)
class BoostResult:
    memory: Memory
    previous_importance: float


def node_boost(*, actor: User, node_id, boost_factor: float = 1.5, reason: str = "") -> BoostResult:
    """importance = clamp(importance x boost_factor, 0, 1), through memory_boost (its Event is "boosted")."""
    with transaction.atomic():
        # Locked until the boost commits, so the importance read here is the one the boost multiplies.
        previous = (memories_readable(actor=actor).select_for_update().filter(pk=_node_id(node_id, field="node_id"))
                    .values_list("importance", flat=True).first())
        memory = memory_boost(actor=actor, memory_id=node_id, factor=boost_factor, reason=reason)
    return BoostResult(memory=memory, previous_importance=previous)


# --- merge_concepts ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MergeResult:
    merged: Memory | None
    nodes_merged: int
    edges_redirected: int
    priors_compatible: bool
    relational_edge_created: bool
    relational_note: str | None
    reversal_hash: str | None


@dataclass(frozen=True)
class Priors:
    compatible: bool
    # Each source's perspective: its domain when it has one, else its agent, for the relational note.
    labels: dict[str, str]
    why: str


def priors_check(sources: list[Memory]) -> Priors:
    """Compatible unless the sources' NodeProfile domains differ (general, the default, agrees with every domain),
    or two of their agents' centroids (the mean vector of each agent's live nodes in the cube) have cos < 0.7."""
    domains = dict(NodeProfile.objects.filter(memory__in=sources).values_list("memory_id", "domain"))
    domain_of = {str(memory.pk): domains.get(memory.pk, Domain.GENERAL) for memory in sources}
    labels = {}
    for memory in sources:
        domain = domain_of[str(memory.pk)]
        labels[str(memory.pk)] = (f"the {domain} domain" if domain != Domain.GENERAL
                                  else f"agent {memory.agent_id}'s view" if memory.agent_id
                                  else f"node {str(memory.pk)[:8]}")
    specific = sorted({domain for domain in domain_of.values() if domain != Domain.GENERAL})
    if len(specific) > 1:
        return Priors(False, labels, f"different domains ({', '.join(specific)})")
    agents = sorted({memory.agent_id for memory in sources if memory.agent_id})
    if len(agents) > 1:
        centroids = _agent_centroids(sources[0].cube_id, agents)
        for a, b in combinations(agents, 2):
            if a in centroids and b in centroids:
                similarity = utl.cosine(centroids[a], centroids[b])
                if similarity < PRIORS_MIN_COSINE:
                    return Priors(False, labels, f"agents {a} and {b} see differently (centroid cos "
                                                 f"{similarity:.2f} < {PRIORS_MIN_COSINE})")
    return Priors(True, labels, "")


def _agent_centroids(cube_id: str, agents: list[str]) -> dict[str, np.ndarray]:
    with connection.cursor() as cursor:
        # pgvector averages the vectors where they are: one row per agent comes back.
        cursor.execute(
            f"SELECT m.agent_id, avg(v.embedding::vector)::text FROM {Memory._meta.db_table} m "
            f"JOIN {MemoryVector._meta.db_table} v ON v.memory_id = m.id "
            "WHERE m.cube_id = %s AND m.agent_id = ANY(%s) AND m.deleted_at IS NULL GROUP BY m.agent_id",
            [cube_id, agents])
        return {agent: np.asarray([float(x) for x in text.strip("[]").split(",")]) for agent, text in cursor.fetchall()}


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in SENTENCE_END.split(" ".join(text.split())) if part.strip()]


def extractive_summary(contents: list[str]) -> str:
    """The most central sentences of the contents (each sentence's mean cosine to all the others, MiniLM vectors),
    skipping repeats, about as long as the average content, in their original order. No language model."""
    sentences = list(dict.fromkeys(sentence for content in contents for sentence in _sentences(content)))
    if len(sentences) <= 1:
        return sentences[0] if sentences else ""
    vectors = np.asarray(embed_texts(sentences))
    similarity = vectors @ vectors.T
    centrality = (similarity.sum(axis=1) - 1.0) / (len(sentences) - 1)
    budget = sum(len(content) for content in contents) / len(contents)
    chosen: list[int] = []
    for index in np.argsort(-centrality, kind="stable"):
        if any(similarity[index, kept] >= REPEATED_SENTENCE_COSINE for kept in chosen):
            continue
        if chosen and sum(len(sentences[kept]) for kept in chosen) + len(sentences[index]) > budget:
            continue
        chosen.append(int(index))
    return " ".join(sentences[index] for index in sorted(chosen))


def merged_content(sources: list[Memory], strategy: str) -> str:
    if strategy == "keep_newest":
        return max(sources, key=lambda memory: memory.created_at).content
    if strategy == "keep_highest":
        return max(sources, key=lambda memory: (memory.importance, memory.created_at)).content
    by_age = sorted(sources, key=lambda memory: memory.created_at)
    if strategy == "concatenate":
        return "\n\n".join(dict.fromkeys(memory.content for memory in by_age))
    return extractive_summary([memory.content for memory in by_age])


def merged_kind(sources: list[Memory], strategy: str) -> str:
    """A merge of memories that keeps their words (keep_*, concatenate) is a memory; a summary is one when its text
    is distilled (summarize) or a source is a summary already."""
    if strategy == "summarize" or any(memory.kind == Memory.Kind.SUMMARY for memory in sources):
        return Memory.Kind.SUMMARY
    return Memory.Kind.MEMORY


def _merge_sources(actor: User, source_node_ids) -> list[Memory]:
    if not isinstance(source_node_ids, list) or not all(isinstance(node_id, str) for node_id in source_node_ids):
        raise InvalidInput("source_node_ids must be a list of node ids.", field="source_node_ids")
    unique = list(dict.fromkeys(_node_id(node_id, field="source_node_ids") for node_id in source_node_ids))
    if len(unique) < 2:
        raise InvalidInput("source_node_ids must name at least two different nodes.", field="source_node_ids")
    if len(unique) > MERGE_MAX_SOURCES:
        raise InvalidInput(f"source_node_ids names {len(unique)} nodes; one merge takes at most {MERGE_MAX_SOURCES}.",
                           field="source_node_ids")
    sources = _curated(actor=actor, node_ids=unique, field="source_node_ids")
    for memory in sources:
        if memory.kind not in MERGEABLE_KINDS:
            owner = KIND_OWNERS.get(memory.kind, f"a {memory.kind} node, kept by the app that made it")
            raise InvalidInput(f"Node {memory.pk} is {owner}. merge_concepts merges memory and "
                               f"summary nodes only.", field="source_node_ids", extra={"kind": memory.kind})
    cubes = sorted({memory.cube_id for memory in sources})
    if len(cubes) > 1:
        raise InvalidInput(f"The nodes are in several cubes ({', '.join(cubes)}): a merge stays in one cube.",
                           field="source_node_ids")
    return sources


def nodes_merge(*, actor: User, source_node_ids, target_name, merge_strategy: str = "keep_highest",
                force_merge: bool = False, recorded_as: User | None = None) -> MergeResult:
    """Merge near-duplicate nodes into a new one (content by strategy, re-embedded, importance the highest), with
    every edge of the sources redirected to it; the sources stay hidden behind a Tombstone until the undo expires.
    Sources whose priors disagree (priors_check) are linked instead, unless force_merge."""
    merge_strategy = _choice(merge_strategy, STRATEGIES, field="merge_strategy")
    target_name = clean_text(target_name, field_name="target_name", max_chars=NodeProfile._meta.get_field("name")
                             .max_length)
    if not target_name:
        raise InvalidInput("target_name is empty: name the merged concept.", field="target_name")
    sources = _merge_sources(actor, source_node_ids)
    priors = priors_check(sources)
    if not priors.compatible and not force_merge:
        return _relate(actor, sources, priors)
    content = merged_content(sources, merge_strategy)
    if len(content) > settings.ENGRAM_MAX_CONTENT_CHARS:
        raise InvalidInput(f"The merged content would be {len(content)} characters, over the limit of "
                           f"{settings.ENGRAM_MAX_CONTENT_CHARS}.", field="merge_strategy",
                           extra={"suggestion": "Use summarize, keep_highest or keep_newest."})
    best = max(sources, key=lambda memory: (memory.importance, memory.created_at))
    agents = {memory.agent_id for memory in sources}
    batch = memory_prepare_many(actor=actor, cube_id=sources[0].cube_id, items=[{
        "content": content, "kind": merged_kind(sources, merge_strategy),
        "importance": max(memory.importance for memory in sources), "primary_sector": best.primary_sector,
        "agent_id": agents.pop() if len(agents) == 1 else "",
        "tags": list(dict.fromkeys(tag for memory in sources for tag in memory.tags)),
        "category": best.category, "context": best.context,
        "metadata": {"merged_from": [str(memory.pk) for memory in sources], "merge_strategy": merge_strategy},
    }])
    # A merge that keeps one source's words keeps its vector; another text goes through the model, outside the
    # transaction. (The dream's dedupe merges near-duplicates this way thousands of times on a large graph.)
    vectors = _kept_vector(sources, content) or embed_memories(batch.memories)
    return _merge(actor, recorded_as or actor, sources, batch, vectors, target_name=target_name,
                  strategy=merge_strategy, priors=priors)


def _kept_vector(sources: list[Memory], content: str) -> list[ContentVector] | None:
    """The stored vector of the source whose content the merge keeps word for word, if one does: the model would
    give that text the same vector."""
    kept = [memory.pk for memory in sources if memory.content == content]
    row = MemoryVector.objects.filter(memory_id__in=kept).values_list("embedding", "tokens").first() if kept else None
    return None if row is None else [ContentVector(list(row[0]), row[1])]


def _merge(actor, by, sources, batch, vectors, *, target_name: str, strategy: str, priors: Priors) -> MergeResult:
    with transaction.atomic():
        locked = _curated(actor=actor, node_ids=[memory.pk for memory in sources], field="source_node_ids", lock=True)
        if [memory.updated_at for memory in locked] != [memory.updated_at for memory in sources]:
            raise Conflict("A source node changed while the merge was prepared.",
                           extra={"field": "source_node_ids", "suggestion": "Call merge_concepts again."})
        source_ids = [memory.pk for memory in sources]
        snapshot = snapshot_take(source_ids)
        [stored] = memory_store_prepared(batch, vectors, link=False)
        merged = stored.memory
        snapshot["made"]["memories"] = [str(merged.pk)]
        domains = set(NodeProfile.objects.filter(memory__in=sources).values_list("domain", flat=True))
        NodeProfile.objects.create(
            memory=merged, name=target_name, source="merge_concepts", domain=domains.pop() if len(domains) == 1
            else Domain.GENERAL, rationale=f"Merged from {len(sources)} nodes ({strategy}).")
        redirected = _redirect_edges(by, sources, merged)
        memory_delete_many(actor=actor, memory_ids=source_ids)  # one statement for the sources, locked above
        entry = undo_record(actor=actor, operation=UndoEntry.Operation.MERGE,
                            node_ids=[*source_ids, merged.pk], snapshot=snapshot)
        Tombstone.objects.bulk_create([
            Tombstone(memory=memory, reason=Tombstone.Reason.MERGED, actor=by, actor_label=by.get_username(),
                      undo=entry, deadline=entry.expires_at) for memory in sources])
        detail = {"merged_node_id": str(merged.pk), "merged_from": [str(pk) for pk in source_ids],
                  "merge_strategy": strategy, "edges_redirected": redirected,
                  "priors_compatible": priors.compatible}
        _events(by, Event.Action.MERGED, [merged, *sources], reversal_hash=entry.reversal_hash, detail=detail,
                reason=priors.why and f"forced despite {priors.why}")
        _close_tasks(by, [merged, *sources])
        events.publish_after_commit(events.Kind.MEMORIES_MERGED, merged.cube_id,
                                    events.memories_merged(merged, source_ids))
    return MergeResult(merged=merged, nodes_merged=len(sources), edges_redirected=redirected,
                       priors_compatible=priors.compatible, relational_edge_created=False, relational_note=None,
                       reversal_hash=entry.reversal_hash)


def _redirect_edges(by: User, sources: list[Memory], merged: Memory) -> int:
    """Every edge of a source becomes an edge of the merged node: duplicates keep the highest weight (and its type)
    and add up their traversals; edges between sources would be self-loops and go. How many edges it has then."""
    source_ids = {memory.pk for memory in sources}
    links = list(MemoryLink.objects.filter(Q(source_id__in=source_ids) | Q(target_id__in=source_ids))
                 .select_related("source"))
    redirected: dict[tuple, MemoryLink] = {}
    for link in links:
        ends = tuple(merged.pk if end in source_ids else end for end in (link.source_id, link.target_id))
        if ends[0] == ends[1]:
            continue
        kept = redirected.get(ends)
        if kept is None:
            redirected[ends] = MemoryLink(source_id=ends[0], target_id=ends[1], link_type=link.link_type,
                                          weight=link.weight, traversal_count=link.traversal_count,
                                          origin=link.origin, last_activated_at=link.last_activated_at)
            continue
        kept.traversal_count += link.traversal_count
        if link.weight > kept.weight:
            kept.weight, kept.link_type = link.weight, link.link_type
    _report_unlinked(by, links, "merged")
    MemoryLink.objects.filter(pk__in=[link.pk for link in links]).delete()
    made = MemoryLink.objects.bulk_create(redirected.values())
    changes.report([Change(Action.LINKED, str(merged.pk), merged.owner_id, by.pk,
                           {"links": changes.link_detail([link for link in made if link.source_id == merged.pk]),
                            "reason": "merged"})])
    return len(made)


def _report_unlinked(by: User, links: list[MemoryLink], reason: str) -> None:
    """Each removed link in the lineage of the node it went out from (whoever's node that is)."""
    by_source: dict = {}
    for link in links:
        by_source.setdefault(link.source_id, []).append(link)
    changes.report(Change(Action.UNLINKED, str(source_id), removed[0].source.owner_id, by.pk,
                          {"links": changes.link_detail(removed), "reason": reason})
                   for source_id, removed in by_source.items())


def _relate(actor: User, sources: list[Memory], priors: Priors) -> MergeResult:
    """Instead of merging nodes whose priors disagree: an analogical edge from the first to each of the others,
    weighted by their similarity, and a note that keeps each perspective's own truth. A link already on such a pair
    takes the new type and weight, so the undo keeps it as it was (and removes the edges that are new)."""
    vectors = dict(MemoryVector.objects.filter(memory__in=sources).values_list("memory_id", "embedding"))
    first, others = sources[0], sources[1:]
    with transaction.atomic():
        snapshot = snapshot_links(pairs=[(first.pk, other.pk) for other in others], cube_ids=[first.cube_id])
        for other in others:
            similarity = utl.cosine(vectors[first.pk], vectors[other.pk])
            linked = memory_link(actor=actor, source_id=first.pk, target_id=other.pk,
                                 link_type=MemoryLink.LinkType.ANALOGICAL,
                                 weight=round(min(1.0, max(0.0, similarity)), 4))
            if linked.created:
                snapshot["made"]["links"].append(linked.link.pk)
        entry = undo_record(actor=actor, operation=UndoEntry.Operation.RELATE, node_ids=[m.pk for m in sources],
                            snapshot=snapshot)
    note = "; but ".join(f"in {priors.labels[str(memory.pk)]}, \"{_excerpt(memory.content)}\"" for memory in sources)
    note = note[0].upper() + note[1:] + f" (not merged: {priors.why})."
    return MergeResult(merged=None, nodes_merged=0, edges_redirected=0, priors_compatible=False,
                       relational_edge_created=True, relational_note=note, reversal_hash=entry.reversal_hash)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= NOTE_EXCERPT_CHARS else flat[:NOTE_EXCERPT_CHARS - 1] + "…"


# --- forget_concept ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ForgetResult:
    soft: bool
    edges_removed: int
    restore_deadline: datetime | None
    reversal_hash: str | None


def node_forget(*, actor: User, node_id, reason, cascade_edges: bool = True, soft_delete: bool = True,
                recorded_as: User | None = None) -> ForgetResult:
    """Soft (the default): the node is hidden with its vector, its edges removed (cascade_edges) into the undo
    snapshot, behind a Tombstone until the deadline. Hard (soft_delete false, only when the user asked for it):
    gone at once with everything on it, and nothing to undo."""
    by = recorded_as or actor
    if reason not in SYSTEM_FORGET_REASONS:
        reason = _choice(reason, FORGET_REASONS, field="reason")
    if not soft_delete and reason != Tombstone.Reason.USER_REQUESTED:
        raise InvalidInput("soft_delete: false deletes for good and needs reason user_requested.",
                           field="soft_delete", extra={"suggestion": "Leave soft_delete true (restorable for 30 days), "
                                                                     "or give reason user_requested."})
    with transaction.atomic():
        [memory] = _curated(actor=actor, node_ids=[node_id], field="node_id", lock=True)
        links = MemoryLink.objects.filter(Q(source=memory) | Q(target=memory))
        if not soft_delete:
            removed = links.count()
            _events(by, Event.Action.FORGOTTEN, [memory], reason=reason, detail={"soft": False,
                                                                               "edges_removed": removed})
            _close_tasks(by, [memory])
            memory_delete(actor=actor, memory_id=memory.pk, soft=False)
            events.publish_after_commit(events.Kind.MEMORY_FORGOTTEN, memory.cube_id,
                                        events.memory_forgotten(memory.pk, reason=reason, restore_deadline=None))
            return ForgetResult(soft=False, edges_removed=removed, restore_deadline=None, reversal_hash=None)
        snapshot = snapshot_take([memory.pk])
        removed = 0
        if cascade_edges:
            _report_unlinked(by, list(links.select_related("source")), reason)
            removed, _ = links.delete()
        memory_delete(actor=actor, memory_id=memory.pk)
        entry = undo_record(actor=actor, operation=UndoEntry.Operation.FORGET, node_ids=[memory.pk],
                            snapshot=snapshot)
        Tombstone.objects.create(memory=memory, reason=reason, actor=by, actor_label=by.get_username(),
                                 undo=entry, deadline=entry.expires_at)
        _events(by, Event.Action.FORGOTTEN, [memory], reason=reason, reversal_hash=entry.reversal_hash,
                detail={"soft": True, "edges_removed": removed, "restore_deadline": entry.expires_at.isoformat()})
        _close_tasks(by, [memory])
        events.publish_after_commit(events.Kind.MEMORY_FORGOTTEN, memory.cube_id,
                                    events.memory_forgotten(memory.pk, reason=reason,
                                                            restore_deadline=entry.expires_at))
    return ForgetResult(soft=True, edges_removed=removed, restore_deadline=entry.expires_at,
                        reversal_hash=entry.reversal_hash)
