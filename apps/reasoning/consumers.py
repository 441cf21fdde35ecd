"""The notebook run websocket (/ws/runs/): watch your own cell runs live.

The page's session authenticates the socket (AuthMiddlewareStack); without a logged-in user it is closed with
4401. Messages from the client: ``{"type": "watch", "run": "<run id>"}`` and ``{"type": "unwatch", "run": ...}``.
To the client: ``{"type": "run", "run": {...}}`` (the run's state, services/cell_runs.py ``cell_run_state``) at
once on watch and after every change (its output so far while it runs), and ``{"type": "error", "code",
"message", ...}``. Someone else's run and an unknown one get the same ``run_not_found``: nothing leaks.
"""
from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from apps.core.aliases import Aliases
from apps.core.exceptions import DomainError, InvalidInput
from apps.graph.groups import cell_run_group
from apps.reasoning.services.cell_runs import cell_run_get, cell_run_state

CLOSE_UNAUTHENTICATED = 4401
# At most this many runs per socket: a page watches the runs it started.
MAX_WATCHED = 50
# The services' argument names -> the socket messages' names.
SOCKET_ALIASES = Aliases({"run_id": "run"})


def _state(user, run_id) -> dict:
    return cell_run_state(cell_run_get(actor=user, run_id=run_id))


class CellRunConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.watched: set[str] = set()
        self.user = self.scope.get("user")
        await self.accept()
        if self.user is None or not self.user.is_authenticated:
            await self.send_json({"type": "error", "code": "not_authenticated",
                                  "message": "Log in first: run progress is for the page's signed-in user."})
            await self.close(code=CLOSE_UNAUTHENTICATED)

    async def disconnect(self, code):
        for run_id in list(self.watched):
            await self.channel_layer.group_discard(cell_run_group(run_id), self.channel_name)
        self.watched.clear()

    async def decode_json(self, text_data):
        try:
            return await super().decode_json(text_data)
        except ValueError:
            return None

    async def receive_json(self, content, **kwargs):
        kind = content.get("type") if isinstance(content, dict) else None
        handlers = {"watch": self._watch, "unwatch": self._unwatch}
        if kind not in handlers:
            await self._error(InvalidInput("type must be watch or unwatch.", field="type"))
            return
        try:
            with SOCKET_ALIASES.reported():
                await handlers[kind](content.get("run"))
        except DomainError as exc:
            await self._error(exc, run=content.get("run") if isinstance(content.get("run"), str) else None)

    async def run_changed(self, message):
        """A watched run changed (services/cell_runs.py): send its state as stored now."""
        run_id = message["run"]
        if run_id not in self.watched:
            return
        await self.send_json({"type": "run", "run": await database_sync_to_async(_state)(self.user, run_id)})

    async def _watch(self, run_id):
        if not isinstance(run_id, str) or not run_id:
            raise InvalidInput("run is required: the id of one of your notebook cell runs.", field="run_id")
        # Read first: an unknown run and someone else's are refused before joining anything.
        state = await database_sync_to_async(_state)(self.user, run_id)
        run_id = state["id"]
        if run_id not in self.watched:
            if len(self.watched) >= MAX_WATCHED:
                raise InvalidInput(f"A socket watches at most {MAX_WATCHED} runs: unwatch finished ones.",
                                   field="run_id")
            # Joined before the state is read again, so no change between the two is lost.
            await self.channel_layer.group_add(cell_run_group(run_id), self.channel_name)
            self.watched.add(run_id)
            state = await database_sync_to_async(_state)(self.user, run_id)
        await self.send_json({"type": "run", "run": state})

    async def _unwatch(self, run_id):
        if isinstance(run_id, str) and run_id in self.watched:
            self.watched.discard(run_id)
            await self.channel_layer.group_discard(cell_run_group(run_id), self.channel_name)
        await self.send_json({"type": "unwatched", "run": run_id})

    async def _error(self, exc: DomainError, **context):
        await self.send_json({"type": "error", "code": exc.code, "message": exc.message,
                              **{key: value for key, value in {**exc.extra, **context}.items() if value is not None}})
