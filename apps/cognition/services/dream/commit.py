"""NREM commit: the owner's scratchpad thoughts that surprised enough are committed to the long-term graph.

temporary_scratchpad's seed: items are "auto-archived during Dream phase", and auto_commit_threshold says which
persist. A thought of the owner's scratchpads (services/scratchpad.py) stored before the run and not expired when
it started, whose surprise (delta S, measured when it was stored) is above its auto_commit_threshold, is stored
through store_memory's own path (services/store.py: node_store, with its adversarial check, profile and session
record) in the owner's personal cube, and leaves the scratchpad. Oldest first, then by id. The run's undo removes
the node and puts the item back as it was.
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils.dateparse import parse_datetime

from apps.cognition.models import ScratchpadItem
from apps.cognition.services.dream.work import Context, Work
from apps.cognition.services.store import node_store
from apps.cognition.services.undo import scratchpad_rows
from apps.core.exceptions import InvalidInput


def _rationale(item: ScratchpadItem) -> str:
    return (f"Committed by a dream from agent {item.agent_id}'s scratchpad: its surprise (delta S {item.delta_s:.2f}) "
            f"was above its auto_commit_threshold ({item.auto_commit_threshold:.2f}).")[:500]


def commit_thoughts(ctx: Context, cursor, size: int) -> Work:
    started = parse_datetime(ctx.windows["started"])
    thoughts = ScratchpadItem.objects.filter(owner=ctx.owner, created_at__lt=started, expires_at__gt=started,
                                             delta_s__gt=F("auto_commit_threshold"))
    if cursor:
        after_time, after_id = cursor
        thoughts = thoughts.filter(created_at__gte=parse_datetime(after_time)).exclude(
            created_at=parse_datetime(after_time), id__lte=after_id)
    batch = list(thoughts.order_by("created_at", "id")[:size])
    work = Work(items=len(batch), cursor=[batch[-1].created_at.isoformat(), str(batch[-1].pk)] if batch else cursor)
    work.done = len(batch) < size
    if not batch:
        if cursor is None:
            work.notes.append("NREM commit: no scratchpad thought was above its auto_commit_threshold.")
        return work
    work.counters["thoughts_examined"] += len(batch)
    before = {row["pk"]: row for row in scratchpad_rows([item.pk for item in batch])}
    committed = []
    for item in batch:
        try:
            with transaction.atomic():  # a refused store leaves the thought where it was
                stored = node_store(actor=ctx.owner, rationale=_rationale(item), content=item.content,
                                    importance=min(1.0, max(0.0, item.delta_s)),
                                    metadata={"source": "scratchpad", "agent_id": item.agent_id,
                                              "scratchpad_session_id": str(item.session_id), "tags": item.tags})
        except InvalidInput as exc:
            work.notes.append(f"NREM commit: thought {item.pk} was not committed: {exc.message}")
            continue
        committed.append({"scratchpad_item": str(item.pk), "node_id": str(stored.memory.pk),
                          "delta_s": item.delta_s, "threshold": item.auto_commit_threshold,
                          "quarantined": stored.quarantined})
        work.made_memories.append(str(stored.memory.pk))
        work.touched.add(str(stored.memory.pk))
        work.redrawn.add(str(stored.memory.pk))
        item.delete()
    work.rows.append({"scratchpad": [before[entry["scratchpad_item"]] for entry in committed]})
    work.counters["thoughts_committed"] += len(committed)
    work.detail = {"committed": committed}
    return work
