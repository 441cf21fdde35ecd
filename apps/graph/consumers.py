"""The live-graph websocket (/ws/graph/): subscribe to cubes, receive their events.

Authentication: the session user (pages; AuthMiddlewareStack), an `Authorization: Bearer` header
(programs), or a first message `{"type": "auth", "token": ...}` (browsers cannot set headers). A
token needs the read scope. Anything else is closed with 4401. Messages are in docs/architecture.md.
"""
from __future__ import annotations

import asyncio

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from apps.accounts.services import token_authenticate
from apps.core.aliases import Aliases
from apps.core.exceptions import DomainError, InvalidInput
from apps.core.limits import EVENT_ID
from apps.cubes.access import cube_get_readable
from apps.graph.events import event_message
from apps.graph.groups import cube_group
from apps.graph.selectors import graph_event_get, graph_events_since

CLOSE_UNAUTHENTICATED = 4401
AUTH_TIMEOUT_SECONDS = 10
REPLAY_LIMIT = 500
# The services' argument names -> the socket messages' names.
SOCKET_ALIASES = Aliases({"cube_id": "cube"})


def _user_for_token(raw: str):
    token = token_authenticate(raw=raw)
    if token is None or not token.has_scope("read"):
        return None
    return token.user


def _bearer(scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            kind, _, raw = value.decode("latin-1").partition(" ")
            return raw.strip() if kind.lower() == "bearer" else ""
    return None


class GraphConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        # cube id -> the last event id replayed to this socket; live events up to it are duplicates.
        self.subscriptions: dict[str, int] = {}
        self.user = None
        self.auth_deadline = None
        await self.accept()
        raw = _bearer(self.scope)
        if raw is not None:
            self.user = await database_sync_to_async(_user_for_token)(raw)
            if self.user is None:
                await self._refuse("The bearer token is unknown, expired, revoked or lacks the read scope.")
            return
        session_user = self.scope.get("user")
        if session_user is not None and session_user.is_authenticated:
            self.user = session_user
            return
        self.auth_deadline = asyncio.get_running_loop().call_later(
            AUTH_TIMEOUT_SECONDS, lambda: asyncio.ensure_future(self._refuse("No authentication in time.")))

    async def disconnect(self, code):
        if self.auth_deadline is not None:
            self.auth_deadline.cancel()
        for cube_id in list(self.subscriptions):
            await self.channel_layer.group_discard(cube_group(cube_id), self.channel_name)
        self.subscriptions.clear()

    async def receive_json(self, content, **kwargs):
        kind = content.get("type") if isinstance(content, dict) else None
        if self.user is None:
            await self._authenticate(content if kind == "auth" else {})
            return
        handlers = {"subscribe": self._subscribe, "unsubscribe": self._unsubscribe}
        if kind not in handlers:
            await self._error(InvalidInput("type must be subscribe or unsubscribe.", field="type"))
            return
        try:
            with SOCKET_ALIASES.reported():
                await handlers[kind](content)
        except DomainError as exc:
            await self._error(exc, cube=content.get("cube"))

    async def decode_json(self, text_data):
        try:
            return await super().decode_json(text_data)
        except ValueError:
            return None

    async def graph_event(self, message):
        """A change of a subscribed cube, from the channel layer (see apps/graph/events.py)."""
        cube_id = message["cube"]
        if cube_id not in self.subscriptions or message["id"] <= self.subscriptions[cube_id]:
            return
        if "payload" not in message:  # too large for the layer: read the stored event
            event = await database_sync_to_async(graph_event_get)(actor=self.user, event_id=message["id"])
            if event is None:
                return
            message = event_message(event)
        await self.send_json({**message, "type": "event"})

    async def _authenticate(self, content):
        token = content.get("token")
        self.user = await database_sync_to_async(_user_for_token)(token) if isinstance(token, str) else None
        if self.user is None:
            await self._refuse('Authenticate first: send {"type": "auth", "token": "<API token with read scope>"}.')
            return
        self.auth_deadline.cancel()
        self.auth_deadline = None
        await self.send_json({"type": "authenticated", "user": self.user.get_username()})

    async def _subscribe(self, content):
        cube_id, since = content.get("cube"), content.get("since")
        if not isinstance(cube_id, str) or not cube_id:
            raise InvalidInput("cube is required: the id of a cube you may read.", field="cube")
        if since is not None:
            since = EVENT_ID.clean(since, field="since")
        # An unknown cube and someone else's get the same answer: nothing leaks.
        await database_sync_to_async(cube_get_readable)(actor=self.user, cube_id=cube_id)
        # Join before replaying, so that nothing published meanwhile is lost.
        await self.channel_layer.group_add(cube_group(cube_id), self.channel_name)
        self.subscriptions[cube_id] = 0
        if since is None:
            await self.send_json({"type": "subscribed", "cube": cube_id})
            return
        replay = await database_sync_to_async(graph_events_since)(
            actor=self.user, cube_id=cube_id, since=since, limit=REPLAY_LIMIT)
        for event in replay.events:
            await self.send_json(event_message(event))
        if replay.events:
            self.subscriptions[cube_id] = replay.events[-1].id
        if not replay.complete:
            await self.send_json({"type": "reload", "cube": cube_id,
                                  "message": "Too much changed since your last event: reload the snapshot."})
        await self.send_json({"type": "subscribed", "cube": cube_id, "replayed": len(replay.events)})

    async def _unsubscribe(self, content):
        cube_id = content.get("cube")
        if cube_id in self.subscriptions:
            del self.subscriptions[cube_id]
            await self.channel_layer.group_discard(cube_group(cube_id), self.channel_name)
        await self.send_json({"type": "unsubscribed", "cube": cube_id})

    async def _error(self, exc: DomainError, **context):
        await self.send_json({"type": "error", "code": exc.code, "message": exc.message,
                              **{key: value for key, value in {**exc.extra, **context}.items() if value is not None}})

    async def _refuse(self, message: str):
        if self.auth_deadline is not None:
            self.auth_deadline.cancel()
        await self.send_json({"type": "error", "code": "not_authenticated", "message": message})
        await self.close(code=CLOSE_UNAUTHENTICATED)
