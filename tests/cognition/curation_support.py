"""What the curation and undo tests share: nodes written through the services without automatic links (so each test
draws the edges it means), and the exact state of nodes, row by row, to compare before and after an undo."""
from __future__ import annotations

from django.db.models import Q

from apps.cognition.models import Annotation, NodeProfile, Tombstone
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.services import memory_store_many
from apps.memories.services.curation import memory_link


def nodes(user, *contents: str, cube_id: str | None = None, **fields) -> list[Memory]:
    """Stored through memory_store_many without automatic links; ``fields`` apply to each."""
    results = memory_store_many(actor=user, items=[{"content": content, **fields} for content in contents],
                                cube_id=cube_id, link=False)
    return [result.memory for result in results]


def link(user, source, target, weight: float, link_type: str = "semantic") -> MemoryLink:
    return memory_link(actor=user, source_id=source.pk, target_id=target.pk, link_type=link_type, weight=weight).link


def _fields(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields
            if not field.generated}


def graph_state(memory_ids) -> dict:
    """Every row the undo must put back for these nodes, field by field: memory, vector (embedding and tokens),
    links both ways (ids, types, weights, traversals, timestamps), profile, annotations, and their tombstones."""
    ids = [str(memory_id) for memory_id in memory_ids]
    return {
        "memories": {str(m.pk): _fields(m) for m in Memory.objects.filter(pk__in=ids)},
        "vectors": {str(v.memory_id): (v.embedding, v.tokens) for v in MemoryVector.objects.filter(memory_id__in=ids)},
        "links": {row.pk: _fields(row) for row in
                  MemoryLink.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids))},
        "profiles": {str(p.memory_id): _fields(p) for p in NodeProfile.objects.filter(memory_id__in=ids)},
        "annotations": {str(a.pk): _fields(a) for a in Annotation.objects.filter(memory_id__in=ids)},
        "tombstones": sorted(str(t.memory_id) for t in Tombstone.objects.filter(memory_id__in=ids)),
    }


def everything() -> dict:
    """The whole graph (every memory, vector, link, profile, annotation, tombstone): to show that a call changed
    nothing at all."""
    return graph_state(Memory.objects.values_list("pk", flat=True))
