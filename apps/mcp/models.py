"""What the MCP edge remembers about its clients: one row per MCP client (``apps.mcp.server.client_key``), so
that MemGOS's session_info reports real figures (when the client came, when it was last active, how many tool
calls it made, which cubes it worked with)."""
from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import connection, models


class McpClientSessionManager(models.Manager):
    def record_call(self, *, key: str, user_id: int, cube_ids: Iterable[str] = ()) -> None:
        """Count one tool call of this client, in one UPSERT: a tool call pays one cheap statement for it.
        The cubes it named join the client's active cubes (kept in first-use order, without repeats)."""
        table = self.model._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                INSERT INTO {table} (key, user_id, created_at, last_activity, tool_calls_count, active_cubes)
                VALUES (%s, %s, now(), now(), 1, %s::varchar[])
                ON CONFLICT (key) DO UPDATE SET
                    last_activity = now(),
                    tool_calls_count = {table}.tool_calls_count + 1,
                    active_cubes = {table}.active_cubes || ARRAY(
                        SELECT cube FROM unnest(EXCLUDED.active_cubes) AS cube
                        WHERE cube <> ALL({table}.active_cubes))
                """,
                [key, user_id, list(dict.fromkeys(cube_ids))],
            )


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
