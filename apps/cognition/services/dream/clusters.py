"""NREM summarise: clusters of the owner's graph get an extractive summary node, each member linked to it.

Two stages of one phase, each worked in batches by the run (runs.py):
- ``knn``: the owner's live memory and summary nodes of their writable cubes made before the run (a dream's own
  summaries left out), by id, each with its CLUSTER_NEIGHBOURS nearest in its cube (the dedupe's statement) at
  cosine >= CLUSTER_COSINE; the pairs found are appended to the run's list "pairs" (at most CLUSTER_PAIRS_MAX: the
  stage ends when they reach it).
- ``summarise``: the connected components of those pairs with at least CLUSTER_MIN_NODES nodes, largest first, then
  by their smallest id (the run's list "clusters"). Each cluster's still-live members are written up by
  inject_context's extractive distillation (apps/cognition/distill.py, structured: their sentences closest to the
  cluster's centroid, SUMMARY_TOKENS at most).
  A dream summary of the same cube whose members (the sources of its hierarchical nrem links) overlap the cluster's
  by SUMMARY_OVERLAP or more (Jaccard) is rewritten in place: content, keywords and vector, and its member links
  (departed members unlinked, stayers reweighted, newcomers linked). Otherwise a new ``summary`` memory is stored
  through the memory core (memory_store_prepared, without nearest-neighbour links: its edges are its members'). Each
  member gets a hierarchical edge member -> summary (origin nrem), weighing its cosine to the summary, which is what
  entailment_query walks. Each summary made or rewritten is an Event naming its members (``derived_from``).
The undo: made summaries and links are removed, a rewritten summary and its links come back as they were.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from django.db.models import Q
from django.utils import timezone

from apps.cognition import utl
from apps.cognition.distill import Source, distill
from apps.cognition.limits import DistillationMode
from apps.cognition.models import Event
from apps.cognition.services.curation import MERGEABLE_KINDS
from apps.cognition.services.dream.limits import (
    CLUSTER_COSINE, CLUSTER_MIN_NODES, CLUSTER_NEIGHBOURS, CLUSTER_PAIRS_MAX, SUMMARY_MARK, SUMMARY_OVERLAP,
    SUMMARY_TOKENS, WEIGHT_FLOOR,
)
from apps.cognition.services.dream.nrem import dreamable, nearest
from apps.cognition.services.dream.work import Context, Work, pair
from apps.cognition.services.undo import link_rows, snapshot_take
from apps.graph import events
from apps.memories import changes
from apps.memories.changes import Action, Change
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.sectors import embed_contents
from apps.memories.services import memory_prepare_many, memory_store_prepared
from apps.memories.text import extract_keywords

HIERARCHICAL = MemoryLink.LinkType.HIERARCHICAL


def summarise(ctx: Context, cursor, size: int) -> Work:
    if ctx.state.get("stage") == "summarise":
        return _summarise(ctx, cursor, size)
    return _knn(ctx, cursor, size)


# --- knn ----------------------------------------------------------------------------------------------------------

def _knn(ctx: Context, cursor, size: int) -> Work:
    started = ctx.windows["started"]
    nodes = (Memory.objects.filter(owner=ctx.owner, cube_id__in=ctx.cube_ids, deleted_at__isnull=True,
                                   kind__in=MERGEABLE_KINDS, created_at__lt=started)
             .exclude(metadata__has_key=SUMMARY_MARK))
    if cursor:
        nodes = nodes.filter(pk__gt=cursor)
    batch = [str(pk) for pk in nodes.order_by("pk").values_list("pk", flat=True)[:size]]
    work = Work(items=len(batch), cursor=batch[-1] if batch else cursor)
    work.counters["nodes_clustered"] += len(batch)
    # The pairs found go to the run's list "pairs" (one item a batch); a pair found from both ends is there twice.
    found = ctx.state.get("found", 0)
    room = max(CLUSTER_PAIRS_MAX - found, 0)
    near = nearest(ctx, batch, floor=CLUSTER_COSINE, k=CLUSTER_NEIGHBOURS, without_summaries=True) if batch else {}
    pairs = sorted({pair(node, neighbour) for node, neighbours in near.items() for neighbour, _ in neighbours})[:room]
    if pairs:
        work.appended = {"pairs": [pairs]}
    found += len(pairs)
    if len(batch) == size and found < CLUSTER_PAIRS_MAX:
        work.state = {"stage": "knn", "found": found}
        return work
    # Every node is read, or the pairs are at their cap: the clusters are drawn, and the next batches write them up.
    if found >= CLUSTER_PAIRS_MAX and len(batch) == size:
        work.notes.append(f"NREM summarise: {CLUSTER_PAIRS_MAX} close pairs were found before every node was read; "
                          "the clusters were drawn from them.")
    edges = {tuple(found_pair) for chunk in [*ctx.listed("pairs"), pairs] for found_pair in chunk}
    members = sorted({node for edge in edges for node in edge})
    clusters = [sorted(group) for group in utl.components(members, sorted(edges)) if len(group) >= CLUSTER_MIN_NODES]
    clusters.sort(key=lambda group: (-len(group), group[0]))
    if not clusters:
        work.notes.append(f"NREM summarise: no {CLUSTER_MIN_NODES} or more nodes were joined by cosine >= "
                          f"{CLUSTER_COSINE}, so no cluster was summarised.")
    # The clusters go to the run's list "clusters", one item each, where the summarise batches read them by position.
    work.state, work.appended = {"stage": "summarise", "clusters": len(clusters)}, {"clusters": clusters}
    work.cursor = 0
    work.done = not clusters
    return work


# --- summarise ----------------------------------------------------------------------------------------------------

def _summarise(ctx: Context, cursor, size: int) -> Work:
    start = cursor or 0
    chunk = ctx.listed("clusters", start, start + size)
    work = Work(items=len(chunk), cursor=start + len(chunk))
    work.done = work.cursor >= ctx.state["clusters"]
    work.counters["clusters_examined"] += len(chunk)
    live = dreamable(ctx, {node for group in chunk for node in group})
    groups = [[node for node in group if node in live] for group in chunk]
    groups = [group for group in groups if len(group) >= CLUSTER_MIN_NODES]
    if not groups:
        return work
    memories = {str(memory.pk): memory for memory in Memory.objects.filter(pk__in=[n for g in groups for n in g])}
    vectors = {str(memory_id): np.asarray(vector, dtype=np.float64) for memory_id, vector in
               MemoryVector.objects.filter(memory_id__in=list(memories)).values_list("memory_id", "embedding")}
    existing = _dream_summaries(ctx, {memories[group[0]].cube_id for group in groups})
    claimed: set[str] = set()
    for group in groups:
        group = [node for node in group if node in vectors]
        if len(group) < CLUSTER_MIN_NODES:  # members without a vector (being re-embedded) are left out
            continue
        cube_id = memories[group[0]].cube_id
        text, importance = _write_up(group, memories, vectors)
        match = _overlapping(set(group), existing.get(cube_id, {}), claimed)
        if match is None:
            _create(ctx, work, cube_id, group, text, importance, vectors)
        else:
            claimed.add(match)
            _rewrite(ctx, work, match, group, text, importance, vectors)
    return work


def _write_up(group: list[str], memories: dict[str, Memory], vectors: dict[str, np.ndarray]) -> tuple[str, float]:
    """The cluster's extractive summary (its members' sentences closest to its centroid) and its importance (the
    members' mean)."""
    centroid = np.mean([vectors[node] for node in group], axis=0)
    centroid /= np.linalg.norm(centroid) or 1.0
    ranked = sorted(group, key=lambda node: (-utl.cosine(vectors[node], centroid), node))
    sources = [Source(node_id=node, content=memories[node].content, score=utl.cosine(vectors[node], centroid),
                      vector=vectors[node]) for node in ranked]
    distilled = distill(sources=sources, query_vector=centroid, max_tokens=SUMMARY_TOKENS,
                        mode=DistillationMode.STRUCTURED, verbosity=0)
    importance = round(float(np.mean([memories[node].importance for node in group])), 6)
    return distilled.text, importance


def _dream_summaries(ctx: Context, cube_ids: set) -> dict:
    """{cube: {summary id: its members}}: the owner's live dream summaries in these cubes not made by this run,
    members being the sources of their hierarchical nrem links."""
    summaries = {str(pk): cube for pk, cube in Memory.objects.filter(
        owner=ctx.owner, cube_id__in=cube_ids, deleted_at__isnull=True, metadata__has_key=SUMMARY_MARK,
        created_at__lt=ctx.windows["started"]).values_list("pk", "cube_id")}
    members: dict[str, set[str]] = defaultdict(set)
    for source, target in MemoryLink.objects.filter(target_id__in=list(summaries), link_type=HIERARCHICAL,
                                                    origin=MemoryLink.Origin.NREM).values_list("source_id",
                                                                                               "target_id"):
        members[str(target)].add(str(source))
    found: dict = defaultdict(dict)
    for summary, cube in summaries.items():
        found[cube][summary] = members[summary]
    return found


def _overlapping(group: set[str], summaries: dict[str, set[str]], claimed: set[str]) -> str | None:
    """The dream summary sharing the most of the cluster's members (Jaccard >= SUMMARY_OVERLAP), if any."""
    scored = sorted(((len(group & members) / len(group | members), summary)
                     for summary, members in summaries.items() if summary not in claimed and members),
                    key=lambda item: (-item[0], item[1]))
    return scored[0][1] if scored and scored[0][0] >= SUMMARY_OVERLAP else None


def _member_links(summary: Memory, summary_vector, group: list[str], vectors: dict) -> list[MemoryLink]:
    return [MemoryLink(source_id=node, target_id=summary.pk, link_type=HIERARCHICAL,
                       weight=_weight(vectors[node], summary_vector), origin=MemoryLink.Origin.NREM,
                       last_activated_at=None) for node in group]


def _weight(member_vector, summary_vector) -> float:
    return round(max(WEIGHT_FLOOR, min(1.0, utl.cosine(member_vector, np.asarray(summary_vector)))), 6)


def _create(ctx: Context, work: Work, cube_id, group: list[str], text: str, importance: float,
            vectors: dict[str, np.ndarray]) -> None:
    batch = memory_prepare_many(actor=ctx.owner, cube_id=str(cube_id), items=[{
        "content": text, "kind": Memory.Kind.SUMMARY, "importance": importance,
        "metadata": {SUMMARY_MARK: {"dream_run_id": str(ctx.run.pk), "members": len(group)}}}])
    [stored] = memory_store_prepared(batch, link=False)
    summary = stored.memory
    summary_vector = MemoryVector.objects.filter(memory=summary).values_list("embedding", flat=True).get()
    made = MemoryLink.objects.bulk_create(_member_links(summary, summary_vector, group, vectors))
    work.made_memories.append(str(summary.pk))
    work.made_links.extend(link.pk for link in made)
    work.counters["summaries_created"] += 1
    work.counters["summary_edges_created"] += len(made)
    _told(ctx, work, summary, group, made=True)


def _rewrite(ctx: Context, work: Work, summary_id: str, group: list[str], text: str, importance: float,
             vectors: dict[str, np.ndarray]) -> None:
    """Rewrite a dream summary for the cluster it overlaps: what differs is changed, after its rows are kept."""
    summary = Memory.objects.select_for_update().get(pk=summary_id)
    links = {str(link.source_id): link for link in MemoryLink.objects.select_for_update().filter(
        target_id=summary_id, link_type=HIERARCHICAL, origin=MemoryLink.Origin.NREM)}
    # A member already joined to the summary by a link of another kind keeps that one (one link per pair).
    taken = {str(node) for both in MemoryLink.objects.filter(
        Q(source_id__in=group, target_id=summary_id) | Q(source_id=summary_id, target_id__in=group))
        .exclude(pk__in=[link.pk for link in links.values()]).values_list("source_id", "target_id")
        for node in both} - {summary_id}
    content_changed = summary.content != text
    stored = MemoryVector.objects.filter(memory=summary)

    def member_changes():
        summary_vector = stored.values_list("embedding", flat=True).get()
        weights = [(link, _weight(vectors[node], summary_vector)) for node, link in links.items() if node in group]
        return summary_vector, [(link, weight) for link, weight in weights if weight != link.weight]

    departed = [link for node, link in links.items() if node not in group]
    newcomers = [node for node in group if node not in links and node not in taken]
    summary_vector, reweighted = member_changes()
    if not (content_changed or departed or reweighted or newcomers):
        work.counters["summaries_unchanged"] += 1
        return
    if summary_id not in ctx.seen_memories:  # the summary and its links as they were, before the run changed them
        work.rows.append(snapshot_take([summary_id]))
    else:
        work.link_rows.extend(link_rows([link.pk for link in links.values()
                                         if link.pk not in ctx.seen_links and link.pk not in ctx.made_links]))
    if content_changed:
        [vector] = embed_contents([text])
        before = summary.content
        summary.content, summary.keywords, summary.importance = text, extract_keywords(text), importance
        summary.metadata = {**summary.metadata, SUMMARY_MARK: {"dream_run_id": str(ctx.run.pk),
                                                               "members": len(group)}}
        summary.save(update_fields=["content", "keywords", "importance", "metadata", "updated_at"])
        stored.update(embedding=vector.vector, tokens=vector.tokens)
        changes.report([Change(Action.UPDATED, summary_id, summary.owner_id, None,
                               {"fields": {"content": [before, text]}, "reason": "dream summary"})])
        events.publish_after_commit(events.Kind.MEMORY_UPDATED, summary.cube_id, events.memory_changed(summary))
        # The weights from the vector as stored (half precision), so a later dream finds the same ones.
        summary_vector, reweighted = member_changes()
    MemoryLink.objects.filter(pk__in=[link.pk for link in departed]).delete()
    now = timezone.now()
    for link, weight in reweighted:
        link.weight, link.updated_at = weight, now
    MemoryLink.objects.bulk_update([link for link, _ in reweighted], ["weight", "updated_at"])
    made = MemoryLink.objects.bulk_create(_member_links(summary, summary_vector, newcomers, vectors))
    work.made_links.extend(link.pk for link in made)
    work.counters["summaries_updated"] += 1
    work.counters["summary_edges_created"] += len(made)
    work.counters["summary_edges_removed"] += len(departed)
    work.counters["summary_edges_reweighted"] += len(reweighted)
    _told(ctx, work, summary, group, made=False, departed=[str(link.source_id) for link in departed])


def _told(ctx: Context, work: Work, summary: Memory, group: list[str], *, made: bool, departed=()) -> None:
    """The summary's Event (the node first, then its members: lineage's ``derived_from``), and the batch's detail."""
    summary_id = str(summary.pk)
    Event.objects.create(owner=ctx.owner, actor=None, actor_label="dream", action=Event.Action.DREAMED,
                         node_ids=[summary_id, *group], reversal_hash=ctx.run.reversal_hash,
                         detail={"dream_run_id": str(ctx.run.pk), "phase": "nrem_summarise",
                                 "summary": "created" if made else "updated", "derived_from": group,
                                 "departed": list(departed)})
    work.detail.setdefault("summaries", []).append(
        {"summary_id": summary_id, "members": group, "made": made, "departed": list(departed)})
    work.touched |= {summary_id, *group, *departed}
    work.redrawn.add(summary_id)
    work.relinked |= set(group) | set(departed)
