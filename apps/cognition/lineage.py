"""The recorder of memory changes (apps/memories/changes.py) as Events: a node's lineage and the system log.
Registered at start-up (apps.py); runs inside the transaction of the change it records."""
from __future__ import annotations

from apps.cognition.models import Event
from apps.memories.changes import Change

def record_changes(changes: list[Change]) -> None:
    Event.objects.bulk_create([
        Event(owner_id=change.owner_id, actor_id=change.actor_id, actor_label=change.detail.get("agent_id", ""),
              action=change.action.value, node_ids=[change.memory_id], detail=change.detail,
              reason=change.detail.get("reason", ""))
        for change in changes
    ])
