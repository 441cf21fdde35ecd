"""Fixtures of the live-graph tests: websocket clients of the whole ASGI application (config.asgi).

Consumer tests use ``django_db(transaction=True)``: events are published on commit, and the consumer
reads the database from worker threads that cannot see a test's open transaction.
"""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from apps.cubes.services import cube_ensure_personal
from config.asgi import application

ORIGIN = (b"origin", b"http://testserver")
SECONDS = 10


class GraphSocket:
    """A connected /ws/graph/ client with helpers that wait for the next message of a type."""

    def __init__(self, communicator: WebsocketCommunicator):
        self.communicator = communicator

    async def send(self, message: dict) -> None:
        await self.communicator.send_json_to(message)

    async def receive(self) -> dict:
        return await self.communicator.receive_json_from(timeout=SECONDS)

    async def subscribe(self, cube: str, since: int | None = None) -> list[dict]:
        """Subscribe; returns the messages before "subscribed" (replayed events, reload), then that one."""
        await self.send({"type": "subscribe", "cube": cube, **({} if since is None else {"since": since})})
        messages = [await self.receive()]
        while messages[-1]["type"] not in ("subscribed", "error"):
            messages.append(await self.receive())
        return messages

    async def event(self) -> dict:
        message = await self.receive()
        assert message["type"] == "event", message
        return message

    async def nothing_more(self) -> bool:
        return await self.communicator.receive_nothing(timeout=1)

    async def close(self) -> None:
        await self.communicator.disconnect()


@pytest.fixture
async def open_socket():
    """open_socket(headers=[...]) -> (connected, GraphSocket). Every socket is closed after the test."""
    sockets = []

    async def open_(headers=(), origin=ORIGIN):
        communicator = WebsocketCommunicator(application, "/ws/graph/", headers=[origin, *headers])
        connected, _ = await communicator.connect(timeout=SECONDS)
        socket = GraphSocket(communicator)
        if connected:
            sockets.append(socket)
        return connected, socket

    yield open_
    for socket in sockets:
        await socket.close()


@pytest.fixture
def bearer(make_token):
    """await bearer(user, scopes) -> the Authorization header of a new token."""
    async def header(user, scopes=("read",)):
        raw = await database_sync_to_async(make_token)(user, scopes)
        return (b"authorization", f"Bearer {raw}".encode())

    return header


@pytest.fixture
def db_call():
    """Run a service or selector from an async test, as the consumer does."""
    def call(function, *args, **kwargs):
        return database_sync_to_async(function)(*args, **kwargs)

    return call


@pytest.fixture
def personal_cube(user):
    return cube_ensure_personal(actor=user).pk
