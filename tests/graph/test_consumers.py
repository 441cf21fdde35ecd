"""The /ws/graph/ consumer through the whole ASGI application: auth, subscriptions, events, catch-up."""
import pytest
from django.test import Client

from apps.graph import consumers
from apps.graph.selectors import graph_snapshot
from apps.memories.services import (
    memory_boost, memory_delete, memory_reembed, memory_restore, memory_store_many, memory_update,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _last_event_id(db_call, user) -> int:
    return (await db_call(graph_snapshot, actor=user)).last_event_id


async def test_a_stored_memory_arrives_with_its_node_and_links(user, personal_cube, open_socket, bearer, store,
                                                              db_call):
    # Shared tags widen the pair's link weight over the waypoint floor (0.5): on text alone it is ~0.55.
    first = await db_call(store, user, "The deploy pipeline runs on GitHub Actions every night", tags=["ci"])
    connected, socket = await open_socket([await bearer(user)])
    assert connected
    assert (await socket.subscribe(personal_cube)) == [{"type": "subscribed", "cube": personal_cube}]

    second = await db_call(store, user, "The nightly deploy pipeline on GitHub Actions failed", tags=["ci"])
    event = await socket.event()
    assert event["kind"] == "memories.created" and event["cube"] == personal_cube and event["id"] > 0
    [node] = event["payload"]["nodes"]
    assert node["id"] == str(second.pk) and node["content"].startswith("The nightly deploy")
    assert set(node) == {"id", "content", "kind", "sector", "importance", "strength", "salience", "created_at", "cube",
                         "tags", "keywords"}
    assert node["tags"] == ["ci"] and node["keywords"] == second.keywords[:5]
    assert {"source": str(second.pk), "target": str(first.pk)} in [
        {"source": edge["source"], "target": edge["target"]} for edge in event["payload"]["edges"]]


async def test_a_store_notifies_over_its_own_connection_not_a_new_one(user, personal_cube, open_socket, bearer, store,
                                                                      db_call, monkeypatch):
    from apps.graph import layers

    connected, socket = await open_socket([await bearer(user)])
    assert connected and (await socket.subscribe(personal_cube))[0]["type"] == "subscribed"

    async def refuse(*args, **kwargs):
        raise AssertionError("a new connection was opened to send one event")

    monkeypatch.setattr(layers.psycopg.AsyncConnection, "connect", refuse)  # the listener is connected already
    stored = await db_call(store, user, "The release checklist lives in the wiki")
    event = await socket.event()
    assert event["kind"] == "memories.created" and event["payload"]["nodes"][0]["id"] == str(stored.pk)


async def test_every_kind_of_change_arrives_in_order(user, personal_cube, open_socket, bearer, store, db_call):
    memory = await db_call(store, user, "Alice prefers tea over coffee in the morning")
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)

    await db_call(memory_update, actor=user, memory_id=memory.pk, content="Alice prefers green tea in the morning")
    updated = await socket.event()
    assert updated["kind"] == "memory.updated"
    assert updated["payload"]["node"]["content"] == "Alice prefers green tea in the morning"
    assert updated["payload"]["outgoing_edges"] == []  # relinked: no other memory to link to

    await db_call(memory_update, actor=user, memory_id=memory.pk, importance=0.9)
    assert "outgoing_edges" not in (await socket.event())["payload"]  # same content: links unchanged

    await db_call(memory_boost, actor=user, memory_id=memory.pk, amount=0.05)
    boosted = await socket.event()
    assert boosted["kind"] == "memory.boosted" and boosted["payload"]["node"]["importance"] == 0.95

    await db_call(memory_reembed, actor=user, memory_id=memory.pk)
    assert (await socket.event())["payload"] == {"id": str(memory.pk), "outgoing_edges": []}

    await db_call(memory_delete, actor=user, memory_id=memory.pk)
    soft = await socket.event()
    assert (soft["kind"], soft["payload"]) == ("memory.soft_deleted", {"id": str(memory.pk)})

    await db_call(memory_restore, actor=user, memory_id=memory.pk)
    restored = await socket.event()
    assert restored["kind"] == "memory.restored" and restored["payload"]["node"]["strength"] == 1.0

    await db_call(memory_delete, actor=user, memory_id=memory.pk, soft=False)
    hard = await socket.event()
    assert (hard["kind"], hard["payload"]) == ("memory.hard_deleted", {"id": str(memory.pk)})

    await db_call(memory_store_many, actor=user, items=[{"content": "First imported note"},
                                                        {"content": "Second imported note"}])
    imported = await socket.event()
    assert [node["content"] for node in imported["payload"]["nodes"]] == ["First imported note", "Second imported note"]
    ids = [updated["id"], boosted["id"], soft["id"], restored["id"], hard["id"], imported["id"]]
    assert ids == sorted(ids)
    assert await socket.nothing_more()


async def test_a_large_event_reaches_the_socket_through_the_stored_copy(user, personal_cube, open_socket, bearer,
                                                                        db_call):
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)
    items = [{"content": f"Imported note number {n} about topic {n * 7} " + "x" * 150, "primary_sector": "semantic"}
             for n in range(60)]
    await db_call(memory_store_many, actor=user, items=items, link=False)
    event = await socket.event()
    assert event["kind"] == "memories.created" and len(event["payload"]["nodes"]) == 60


async def test_foreign_and_unknown_cubes_are_refused_alike(user, other_user, personal_cube, open_socket, bearer, store,
                                                           db_call):
    connected, socket = await open_socket([await bearer(other_user)])
    [foreign] = await socket.subscribe(personal_cube)
    [unknown] = await socket.subscribe("no-such-cube")
    assert foreign["type"] == "error" and foreign["code"] == "not_found"
    assert foreign["message"].replace(personal_cube, "X") == unknown["message"].replace("no-such-cube", "X")
    assert set(foreign) == set(unknown) == {"type", "code", "message", "field", "cube"}

    await db_call(store, user, "Alice's private note that Bob must never see")
    assert await socket.nothing_more()


async def test_unsubscribe_stops_the_events(user, personal_cube, open_socket, bearer, store, db_call):
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)
    await socket.send({"type": "unsubscribe", "cube": personal_cube})
    assert await socket.receive() == {"type": "unsubscribed", "cube": personal_cube}
    await db_call(store, user, "A note stored after unsubscribing")
    assert await socket.nothing_more()


async def test_anonymous_sockets_are_closed_with_4401(open_socket, personal_cube):
    connected, socket = await open_socket()
    assert connected
    await socket.send({"type": "subscribe", "cube": personal_cube})
    refusal = await socket.receive()
    assert refusal["type"] == "error" and refusal["code"] == "not_authenticated" and '"auth"' in refusal["message"]
    assert await socket.communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}


@pytest.mark.parametrize("header", [b"Bearer not-a-real-token", b"Basic YWxpY2U6c2VjcmV0"])
async def test_a_bad_authorization_header_is_closed_with_4401(open_socket, header):
    connected, socket = await open_socket([(b"authorization", header)])
    assert (await socket.receive())["code"] == "not_authenticated"
    assert await socket.communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}


async def test_a_token_without_the_read_scope_is_refused(user, open_socket, bearer):
    connected, socket = await open_socket([await bearer(user, scopes=("write",))])
    assert "read scope" in (await socket.receive())["message"]
    assert await socket.communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}


async def test_a_first_auth_message_authenticates(user, personal_cube, open_socket, make_token, store, db_call):
    token = await db_call(make_token, user, ("read",))
    connected, socket = await open_socket()
    await socket.send({"type": "auth", "token": token})
    assert await socket.receive() == {"type": "authenticated", "user": "alice"}
    await socket.subscribe(personal_cube)
    await db_call(store, user, "Stored after a message-authenticated subscription")
    assert (await socket.event())["kind"] == "memories.created"


async def test_a_wrong_auth_message_is_closed_with_4401(open_socket):
    connected, socket = await open_socket()
    await socket.send({"type": "auth", "token": "guess"})
    assert (await socket.receive())["code"] == "not_authenticated"
    assert await socket.communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}


async def test_the_session_cookie_of_a_logged_in_page_authenticates(user, personal_cube, open_socket, db_call):
    client = Client()
    await db_call(client.force_login, user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    connected, socket = await open_socket([(b"cookie", cookie)])
    assert (await socket.subscribe(personal_cube)) == [{"type": "subscribed", "cube": personal_cube}]


async def test_a_foreign_origin_is_refused(user, open_socket, bearer):
    connected, _ = await open_socket([await bearer(user)], origin=(b"origin", b"http://evil.example"))
    assert not connected


@pytest.mark.parametrize(("message", "field"), [
    ({"type": "subscribe"}, "cube"),
    ({"type": "subscribe", "cube": 7}, "cube"),
    ({"type": "subscribe", "cube": "x", "since": -1}, "since"),
    ({"type": "subscribe", "cube": "x", "since": "5"}, "since"),
    ({"type": "subscribe", "cube": "x", "since": True}, "since"),
    ({"type": "subscribe", "cube": "x", "since": 2**63}, "since"),
    ({"type": "subscribe", "cube": "x", "since": 1e308}, "since"),
    ({"type": "shout"}, "type"),
    (["subscribe"], "type"),
])
async def test_bad_messages_get_an_error_naming_the_field(user, open_socket, bearer, message, field):
    connected, socket = await open_socket([await bearer(user)])
    await socket.send(message)
    error = await socket.receive()
    assert (error["type"], error["code"], error["field"]) == ("error", "invalid_input", field)


async def test_a_reconnecting_socket_catches_up_with_since(user, personal_cube, open_socket, bearer, store, db_call):
    memory = await db_call(store, user, "Bob's birthday is on the ninth of March")
    since = await _last_event_id(db_call, user)
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)
    await socket.close()

    await db_call(memory_boost, actor=user, memory_id=memory.pk)
    await db_call(memory_delete, actor=user, memory_id=memory.pk)

    connected, socket = await open_socket([await bearer(user)])
    *replayed, done = await socket.subscribe(personal_cube, since=since)
    assert [event["kind"] for event in replayed] == ["memory.boosted", "memory.soft_deleted"]
    assert all(event["type"] == "event" and event["id"] > since for event in replayed)
    assert done == {"type": "subscribed", "cube": personal_cube, "replayed": 2}

    await db_call(memory_restore, actor=user, memory_id=memory.pk)
    assert (await socket.event())["kind"] == "memory.restored"
    assert await socket.nothing_more()


async def test_catch_up_beyond_the_replay_limit_asks_for_a_reload(user, personal_cube, open_socket, bearer, store,
                                                                   db_call, monkeypatch):
    monkeypatch.setattr(consumers, "REPLAY_LIMIT", 2)
    memory = await db_call(store, user, "A note boosted many times")
    since = await _last_event_id(db_call, user)
    for _ in range(3):
        await db_call(memory_boost, actor=user, memory_id=memory.pk, amount=0.01)
    connected, socket = await open_socket([await bearer(user)])
    messages = await socket.subscribe(personal_cube, since=since)
    assert [message["type"] for message in messages] == ["event", "event", "reload", "subscribed"]
    assert messages[2]["cube"] == personal_cube and "snapshot" in messages[2]["message"]


async def test_catch_up_never_replays_another_users_cube(user, other_user, personal_cube, open_socket, bearer, store,
                                                         db_call):
    since = await _last_event_id(db_call, user)
    await db_call(store, user, "Alice's secret plan")
    connected, socket = await open_socket([await bearer(other_user)])
    [refusal] = await socket.subscribe(personal_cube, since=since)
    assert refusal["code"] == "not_found"
    assert await socket.nothing_more()


async def test_a_socket_that_never_authenticates_is_closed(open_socket, monkeypatch):
    monkeypatch.setattr(consumers, "AUTH_TIMEOUT_SECONDS", 0.2)
    connected, socket = await open_socket()
    assert (await socket.receive())["message"] == "No authentication in time."
    assert await socket.communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}
