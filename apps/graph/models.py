from django.db import models


class GraphEvent(models.Model):
    """One change of the memory graph, kept for a while so that a reconnecting socket can catch up.

    The id is the event's sequence number: a client remembers the last id it saw and subscribes with
    ``since`` to get what it missed (see docs/architecture.md, "Live graph")."""

    class Kind(models.TextChoices):
        MEMORIES_CREATED = "memories.created", "Memories created"
        MEMORY_UPDATED = "memory.updated", "Memory updated"
        MEMORY_RELINKED = "memory.relinked", "Memory relinked"
        MEMORY_SOFT_DELETED = "memory.soft_deleted", "Memory soft-deleted"
        MEMORY_RESTORED = "memory.restored", "Memory restored"
        MEMORY_HARD_DELETED = "memory.hard_deleted", "Memory hard-deleted"
        MEMORY_BOOSTED = "memory.boosted", "Memory boosted"
        MEMORIES_MERGED = "memories.merged", "Memories merged"
        MEMORY_FORGOTTEN = "memory.forgotten", "Memory forgotten"
        UNDO_APPLIED = "undo.applied", "Undo applied"
        DREAM_PROGRESS = "dream.progress", "Dream progress"
        DREAM_CHANGED = "dream.changed", "Dream changed the graph"
        GARDENER_CHANGED = "gardener.changed", "Gardener changed the graph"

    id = models.BigAutoField(primary_key=True)
    cube = models.ForeignKey("cubes.Cube", on_delete=models.CASCADE, related_name="graph_events")
    kind = models.CharField(max_length=40, choices=Kind.choices)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["cube", "id"], name="graph_event_cube_id"),
            models.Index(fields=["created_at"], name="graph_event_created"),
        ]

    def __str__(self) -> str:
        return f"#{self.id} {self.kind} in {self.cube_id}"
