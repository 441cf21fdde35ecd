"""hydrate_citation: the nodes behind inject_context's citation tags, raw, with as much about them as asked.
A tag names a live node the actor may read; any other (unknown, forgotten, someone else's) is not found, under
the index of the tag that named it."""
from __future__ import annotations

from django.db.models import Q

from apps.accounts.models import User
from apps.cognition.citations import citation_prefix, citation_tag, id_range
from apps.cognition.limits import CITATION_HEX, CITATIONS_PER_CALL, VERBOSITY
from apps.cognition.models import Annotation
from apps.cognition.selectors.bundles import PREVIEW_CHARS, links_touching, visible_nodes
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import Memory
from apps.memories.selectors import memories_readable


def citation_hydrate(*, actor: User, citation_tags, include_neighbors: bool = False,
                     verbosity_level=None) -> list[dict]:
    """Each tag's node: {citation_tag, raw_content, metadata, neighbours}. Metadata by verbosity: 0 the node id;
    1 also kind, cube, dates, importance, tags and keywords; 2 also strength, salience, access, sector, agent,
    session, Context Graph's profile and the node's annotations. Neighbours (when asked): the linked live nodes
    the actor may read, either direction, strongest link first."""
    prefixes = _clean_tags(citation_tags)
    verbosity = VERBOSITY.clean(verbosity_level, field="verbosity_level")
    if not isinstance(include_neighbors, bool):
        raise InvalidInput("include_neighbors must be true or false.", field="include_neighbors")
    wanted = Q()
    for prefix in set(prefixes):
        wanted |= Q(pk__range=id_range(prefix))
    found = list(memories_readable(actor=actor).filter(wanted).select_related("node_profile"))
    memories = [_match(prefix, index, found) for index, prefix in enumerate(prefixes)]
    ids = list(dict.fromkeys(str(memory.pk) for memory in memories))
    notes = _annotations(ids) if verbosity >= 2 else {}
    linked = _neighbours(actor, ids) if include_neighbors else {}
    return [{"citation_tag": citation_tag(memory.pk), "raw_content": memory.content,
             "metadata": _metadata(memory, verbosity, notes.get(str(memory.pk), [])),
             "neighbours": linked.get(str(memory.pk), [])}
            for memory in memories]


def _clean_tags(citation_tags) -> list[str]:
    if not isinstance(citation_tags, (list, tuple)):
        raise InvalidInput("citation_tags must be a list of citation tags such as \"[node_0123456789ab]\".",
                           field="citation_tags")
    if not CITATIONS_PER_CALL.low <= len(citation_tags) <= CITATIONS_PER_CALL.high:
        raise InvalidInput(f"citation_tags must hold {CITATIONS_PER_CALL} tags, got {len(citation_tags)}.",
                           field="citation_tags")
    prefixes = []
    for index, tag in enumerate(citation_tags):
        prefix = citation_prefix(tag) if isinstance(tag, str) else None
        if prefix is None:
            raise InvalidInput(f"citation_tags[{index}] is not a citation tag: write it as inject_context does, "
                               f"\"[node_\" and the first {CITATION_HEX} hex digits of the node's id and \"]\".",
                               field=f"citation_tags[{index}]")
        prefixes.append(prefix)
    return prefixes


def _match(prefix: str, index: int, found: list[Memory]) -> Memory:
    matches = [memory for memory in found if memory.pk.hex.startswith(prefix)]
    if not matches:
        raise NotFound(f"citation_tags[{index}] ([node_{prefix}]) names no node of yours: it may have been forgotten "
                       "or merged, or belong to someone else.",
                       extra={"field": f"citation_tags[{index}]",
                              "suggestion": "Use a tag from a recent inject_context answer, or search_graph again."})
    if len(matches) > 1:
        raise InvalidInput(f"citation_tags[{index}] ([node_{prefix}]) fits {len(matches)} of your nodes: pass the "
                           "node's full id to get_neighborhood instead.", field=f"citation_tags[{index}]")
    return matches[0]


def _metadata(memory: Memory, verbosity: int, notes: list[dict]) -> dict:
    metadata: dict = {"node_id": str(memory.pk)}
    if verbosity >= 1:
        metadata.update({
            "kind": memory.kind, "cube_id": memory.cube_id, "created_at": memory.created_at.isoformat(),
            "updated_at": memory.updated_at.isoformat(), "importance": round(memory.importance, 4),
            "tags": memory.tags, "keywords": memory.keywords,
        })
    if verbosity >= 2:
        metadata.update({
            "primary_sector": memory.primary_sector, "strength": round(memory.strength, 4),
            "salience": round(memory.salience, 4), "access_count": memory.access_count,
            "last_accessed_at": memory.last_accessed_at.isoformat() if memory.last_accessed_at else None,
            "agent_id": memory.agent_id, "session_id": memory.session_id, "annotations": notes,
            "profile": _profile(memory),
        })
    return metadata


def _profile(memory: Memory) -> dict | None:
    """Context Graph's profile of the node, or None for a node stored through another way in."""
    profile = getattr(memory, "node_profile", None)
    if profile is None:
        return None
    return {"name": profile.name, "rationale": profile.rationale, "modality": profile.modality,
            "source": profile.source, "domain": profile.domain, "johari": profile.johari,
            "delta_s": round(profile.delta_s, 4), "activations": profile.activations,
            "last_activated_at": profile.last_activated_at.isoformat() if profile.last_activated_at else None}


def _annotations(ids: list[str]) -> dict[str, list[dict]]:
    notes: dict[str, list[dict]] = {}
    for note in Annotation.objects.filter(memory_id__in=ids).order_by("created_at"):
        notes.setdefault(str(note.memory_id), []).append({
            "annotation_type": note.annotation_type, "text": note.text, "author": note.author_label,
            "created_at": note.created_at.isoformat(),
            "reference": str(note.reference_id) if note.reference_id else None})
    return notes


def _neighbours(actor: User, ids: list[str]) -> dict[str, list[dict]]:
    edges = links_touching(ids)
    ends = {edge.other(node) for edge in edges for node in ids if node in (edge.source, edge.target)}
    rows = visible_nodes(actor=actor, node_ids=ends)
    linked: dict[str, list[dict]] = {}
    for edge in edges:  # strongest first
        for node in ids:
            other = edge.other(node) if node in (edge.source, edge.target) else None
            if other is None or other not in rows:
                continue
            linked.setdefault(node, []).append({
                "node_id": other, "citation_tag": citation_tag(other),
                "content": rows[other]["content"][:PREVIEW_CHARS], "kind": rows[other]["kind"],
                "edge_type": edge.edge_type, "weight": round(edge.weight, 4),
                "direction": "outgoing" if edge.source == node else "incoming"})
    return linked
