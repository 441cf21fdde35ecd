"""The only way services publish live-graph events: ``publish_after_commit`` (plus the payload builders); and
``notify_after_commit``, the nudge a notebook cell run's watchers get when its state changes.

After the write commits, the event is stored in GraphEvent (its id is the sequence number clients
catch up from) and sent to the cube's group. A message too large for the channel layer carries only a
reference, and the consumer reads the stored event.
"""
from __future__ import annotations

import json

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.db.models import Q

from apps.graph.groups import cube_group
from apps.graph.models import GraphEvent
from apps.graph.selectors import EDGE_COLUMNS, edge_payload, node_payload
from apps.memories.models import Memory, MemoryLink

Kind = GraphEvent.Kind
# Below the PostgreSQL layer's NOTIFY limit (7999 bytes with its envelope), and small for Redis too.
MAX_INLINE_MESSAGE_BYTES = 7000

def publish_after_commit(kind: str, cube_id: str, payload: dict) -> None:
    """Store and broadcast the event once the current transaction commits (at once outside one).
    A failed broadcast is logged, never raised: the write it reports has already committed."""
    kind = Kind(kind)

    def publish() -> None:  # a function, not a partial: Django logs a robust hook's failure by its __qualname__
        _publish(kind, cube_id, payload)

    transaction.on_commit(publish, robust=True)

def event_message(event: GraphEvent) -> dict:
    """The event as a socket sends it to the client."""
    return {"type": "event", "id": event.id, "kind": event.kind, "cube": event.cube_id, "payload": event.payload}

def notify_after_commit(group: str, message: dict) -> None:
    """Send a small message to ``group`` once the current transaction commits (at once outside one): a nudge
    about state stored elsewhere (a notebook cell run's row), which the consumer then reads. Logged, never
    raised, on failure, like publish_after_commit."""
    def send() -> None:
        _send(group, message)

    transaction.on_commit(send, robust=True)

def _publish(kind: str, cube_id: str, payload: dict) -> None:
    event = GraphEvent.objects.create(cube_id=cube_id, kind=kind, payload=payload)
    message = {**event_message(event), "type": "graph.event"}
    if len(json.dumps(message)) > MAX_INLINE_MESSAGE_BYTES:
        message = {"type": "graph.event", "id": event.id, "cube": cube_id}
    _send(cube_group(cube_id), message)

def _send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    send_now = getattr(layer, "group_send_now", None)
    if send_now is not None and not transaction.get_connection().in_atomic_block:
        send_now(group, message)
    else:
        async_to_sync(layer.group_send)(group, message)

def _edges(links) -> list[dict]:
    return [edge_payload(**row) for row in links.values(*EDGE_COLUMNS)]

def memories_created(memories: list[Memory]) -> dict:
    ids = [memory.pk for memory in memories]
    # A causal claim's link may run into a new memory from its cause.
    return {"nodes": [node_payload(memory) for memory in memories],
            "edges": _edges(MemoryLink.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)))}

def memory_changed(memory: Memory, *, relinked: bool = False) -> dict:
    """A node's new state; ``outgoing_edges``, when present, replace all of the node's outgoing edges."""
    payload = {"node": node_payload(memory)}
    if relinked:
        payload["outgoing_edges"] = _edges(MemoryLink.objects.filter(source=memory))
    return payload

def memory_relinked(memory: Memory) -> dict:
    return {"id": str(memory.pk), "outgoing_edges": _edges(MemoryLink.objects.filter(source=memory))}

def memories_relinked(memories: list[Memory]) -> list[dict]:
    """memory_relinked of each of these memories, their outgoing edges read in one statement."""
    ids = [memory.pk for memory in memories]
    outgoing: dict[str, list[dict]] = {str(pk): [] for pk in ids}
    for row in MemoryLink.objects.filter(source_id__in=ids).values(*EDGE_COLUMNS):
        outgoing[str(row["source_id"])].append(edge_payload(**row))
    return [{"id": str(pk), "outgoing_edges": outgoing[str(pk)]} for pk in ids]

def memory_restored(memory: Memory) -> dict:
    """The node is back, with its edges in both directions (a client dropped them when it was deleted)."""
    links = MemoryLink.objects.filter(Q(source=memory) | Q(target=memory))
    return {"node": node_payload(memory), "edges": _edges(links)}

def memory_removed(memory_id) -> dict:
    return {"id": str(memory_id)}

def _node_with_edges(memories: list[Memory]) -> tuple[list[dict], list[dict]]:
    ids = [memory.pk for memory in memories]
    links = MemoryLink.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids))
    return [node_payload(memory) for memory in memories], _edges(links)

def memories_merged(merged: Memory, source_ids: list) -> dict:
    """The merged node with its edges both ways; the sources (``merged_from``) leave the graph."""
    [node], edges = _node_with_edges([merged])
    return {"node": node, "edges": edges, "merged_from": [str(source_id) for source_id in source_ids]}

def memory_forgotten(memory_id, *, reason: str, restore_deadline) -> dict:
    """The node leaves the graph; until ``restore_deadline`` (None: never, it is gone for good) it can come back."""
    return {"id": str(memory_id), "reason": reason,
            "restore_deadline": restore_deadline.isoformat() if restore_deadline else None}

def undo_applied(restored: list[Memory], removed_ids: list, operation: str) -> dict:
    """The nodes an undo brought back, with their edges both ways, and the nodes it removed (a merge's result)."""
    nodes, edges = _node_with_edges(restored)
    return {"operation": operation, "nodes": nodes, "edges": edges,
            "removed": [str(memory_id) for memory_id in removed_ids]}

def dream_progress(*, run_id, status: str, phase: str | None, batch: int, counters: dict) -> dict:
    """Where a dream stands after a batch (or as it stops): its step, the batch's number and the run's counters."""
    return {"dream_run_id": str(run_id), "status": status, "phase": phase, "batch": batch, "counters": counters}

def dream_changed(*, run_id, phase: str, batch: int, nodes: list[Memory], relinked: list[Memory]) -> dict:
    """What one batch of a dream changed in a cube: ``nodes`` it made or rewrote (upserted), and each ``relinked``
    node's outgoing edges, which replace the node's outgoing edges as memory.relinked's do (a merge's nodes come
    and go by its own memories.merged)."""
    return {"dream_run_id": str(run_id), "phase": phase, "batch": batch,
            "nodes": [node_payload(memory) for memory in nodes],
            "relinked": memories_relinked(relinked)}


def gardener_changed(*, step: str | None, reversal_hash: str | None, nodes: list[Memory], relinked: list[Memory],
                     status: str, batch: int, counters: dict) -> dict:
    """A gardener batch in one cube, and where its cycle stands: nodes whose fields changed (importance scaled), nodes
    whose outgoing edges changed (an edge pruned or cut), each with all its outgoing edges now (both empty in the
    owner's cubes the batch did not change), and the cycle's status (running, completed, interrupted, failed), batch
    number and counters. Merges and forgets publish their own events."""
    return {"step": step, "reversal_hash": reversal_hash, "nodes": [node_payload(memory) for memory in nodes],
            "relinked": memories_relinked(relinked), "status": status, "batch": batch, "counters": counters}
