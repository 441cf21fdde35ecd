"""What the MCP edge remembers about its clients: one row per MCP client (``apps.mcp.server.client_key``), so
that MemGOS's session_info reports real figures (when the client came, when it was last active, how many tool
calls it made, which cubes it worked with)."""
from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F
from django.db.models.expressions import RawSQL
from django.db.models.functions import Now

from apps.core.commits import unflushed_commit


class McpClientSessionManager(models.Manager):
    def record_call(self, *, key: str, user_id: int, cube_ids: Iterable[str] = ()) -> None:
        """Count one tool call of this client, in one UPDATE once the client has its row: a tool call pays one
        cheap statement for it. The cubes it named join the client's active cubes (kept in first-use order,
        without repeats)."""
        cube_ids = list(dict.fromkeys(cube_ids))
        changes = {"last_activity": Now(), "tool_calls_count": F("tool_calls_count") + 1}
        if cube_ids:
            # The named cubes not listed yet, appended in the order named: the ORM has no ordered array union.
            changes["active_cubes"] = RawSQL(
                "active_cubes || ARRAY(SELECT cube FROM unnest(%s::varchar[]) AS cube WHERE cube <> ALL(active_cubes))",
                [cube_ids],
            )
        # A count of calls is bookkeeping: its commit need not wait for the WAL flush (docs/guarantees.md).
        if self.filter(unflushed_commit(), key=key).update(**changes):
            return
        _, created = self.get_or_create(key=key, defaults={
            "user_id": user_id, "created_at": Now(), "last_activity": Now(), "tool_calls_count": 1,
            "active_cubes": cube_ids,
        })
        if not created:  # a concurrent first call of this client created the row after the UPDATE
            self.filter(key=key).update(**changes)


class McpClientSession(models.Model):
    """One MCP client: a token over one MCP session (or stdio process), or over sessionless HTTP the token alone."""

    key = models.CharField(max_length=255, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_client_sessions")
    created_at = models.DateTimeField()
    last_activity = models.DateTimeField()
    tool_calls_count = models.PositiveIntegerField(default=0)
    active_cubes = ArrayField(models.CharField(max_length=100), default=list, blank=True)

    objects = McpClientSessionManager()

    class Meta:
        ordering = ["-last_activity"]

    def __str__(self) -> str:
        return f"{self.key} ({self.tool_calls_count} calls)"
