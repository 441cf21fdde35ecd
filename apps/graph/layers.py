"""A channel layer on PostgreSQL LISTEN/NOTIFY: the embedded default's layer, no Redis needed.

Groups cross processes: ``group_send`` is a NOTIFY on the database, and every process with local
group members LISTENs on one connection per event loop and hands each notification to its own
members. Channels stay in the process that owns them (a consumer's channel lives where its socket
is), which is all Engram needs: nothing sends to another process's channel directly.

Why not the PyPI package channels-postgres: it keeps one module-wide connection pool bound to the
first event loop, takes session advisory locks on pooled connections, reads a second database alias,
and at start deletes every queued message of every process.

Limits: a message must be JSON (not msgpack) and below PostgreSQL's NOTIFY limit of 8000 bytes;
apps/graph/events.py sends a reference to the stored event for anything larger.
"""
from __future__ import annotations

import asyncio
import json
import logging
import weakref
from dataclasses import dataclass, field

import psycopg
from channels.layers import InMemoryChannelLayer
from django.db import connections

logger = logging.getLogger(__name__)

NOTIFY_CHANNEL = "engram_channel_layer"
# PostgreSQL refuses NOTIFY payloads of 8000 bytes or more.
MAX_NOTIFY_BYTES = 7999
RECONNECT_DELAY_SECONDS = 1.0
# Django connection parameters that are not libpq's.
_NOT_LIBPQ = {"cursor_factory", "context", "prepare_threshold", "server_side_binding"}


class MessageTooLarge(ValueError):
    pass


@dataclass
class _Listener:
    task: asyncio.Task | None = None
    ready: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class PostgresNotifyChannelLayer(InMemoryChannelLayer):
    def __init__(self, database: str = "default", **kwargs):
        super().__init__(**kwargs)
        self.database = database
        self._listeners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Listener] = weakref.WeakKeyDictionary()

    def conninfo(self) -> str:
        # Read at each connect: the test runner renames the database after settings load.
        params = connections[self.database].get_connection_params()
        return psycopg.conninfo.make_conninfo(
            **{key: value for key, value in params.items() if key not in _NOT_LIBPQ and value is not None}
        )

    async def group_add(self, group: str, channel: str) -> None:
        await super().group_add(group, channel)
        # Listening before returning: nothing published after a subscription is missed.
        await self._listening()

    async def group_discard(self, group: str, channel: str) -> None:
        await super().group_discard(group, channel)
        if not self.groups:
            await self._stop_listening()

    async def group_send(self, group: str, message: dict) -> None:
        payload = self._payload(group, message)
        async with await psycopg.AsyncConnection.connect(self.conninfo(), autocommit=True) as connection:
            await connection.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, payload))

    def group_send_now(self, group: str, message: dict) -> None:
        """group_send for synchronous code outside a transaction (a request thread after its commit), over
        the thread's own Django connection: a new connection per message cost the server a backend start
        and ~7% of a store's Python time under 50 writers. Inside a transaction PostgreSQL would hold the
        NOTIFY until commit, so the caller must not be in one."""
        payload = self._payload(group, message)
        with connections[self.database].cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, payload])

    def _payload(self, group: str, message: dict) -> str:
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        payload = json.dumps({"group": group, "message": message}, separators=(",", ":"))
        if len(payload.encode()) > MAX_NOTIFY_BYTES:
            raise MessageTooLarge(f"A group message must stay below {MAX_NOTIFY_BYTES} bytes of JSON; "
                                  f"this one has {len(payload.encode())}.")
        return payload

    async def flush(self) -> None:
        await super().flush()
        await self._stop_listening()

    async def close(self) -> None:
        await self._stop_listening()

    async def _listening(self) -> None:
        loop = asyncio.get_running_loop()
        listener = self._listeners.get(loop)
        if listener is None or listener.task.done():
            listener = self._listeners[loop] = _Listener()
            listener.task = loop.create_task(self._listen(listener))
        await asyncio.shield(listener.ready)

    async def _stop_listening(self) -> None:
        listener = self._listeners.pop(asyncio.get_running_loop(), None)
        if listener is None:
            return
        listener.task.cancel()
        try:
            await listener.task
        except (asyncio.CancelledError, Exception):
            pass

    async def _listen(self, listener: _Listener) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.conninfo(), autocommit=True) as connection:
                    await connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    if not listener.ready.done():
                        listener.ready.set_result(None)
                    async for notification in connection.notifies():
                        delivery = json.loads(notification.payload)
                        await InMemoryChannelLayer.group_send(self, delivery["group"], delivery["message"])
            except psycopg.OperationalError as exc:
                if not listener.ready.done():
                    listener.ready.set_exception(exc)
                    return
                # Sockets subscribed meanwhile miss what was sent while the database was away; a
                # client that reconnects catches up with `since`.
                logger.warning("Channel layer lost its LISTEN connection (%s); reconnecting", exc)
                await asyncio.sleep(RECONNECT_DELAY_SECONDS)
