"""Faults under a real Engram server process (uvicorn) on a PostgreSQL cluster of this module's own
(tests/core/faults_support.py): the database going away and coming back, kill -9 of the server with writes in
flight, and 50 concurrent MCP writers. The shared embedded server under var/ is never stopped.
"""
import asyncio
import json
import os
import signal
import threading
from collections import Counter

import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.core.faults_support import EngramServer, ScratchCluster, wait_for

pytestmark = pytest.mark.slow

USERS = ["ann", "ben", "cat", "dan", "eve"]


@pytest.fixture(scope="module")
def cluster():
    cluster = ScratchCluster()
    yield cluster
    cluster.destroy()


@pytest.fixture(scope="module")
def server_and_tokens(cluster):
    server = EngramServer(cluster)
    tokens = server.prepare(USERS)
    yield server, tokens
    server.stop()


@pytest.fixture
def engram(server_and_tokens):
    """The server, running (a test before may have killed it)."""
    server, _ = server_and_tokens
    if server.process is None or server.process.poll() is not None:
        server.start()
    return server


@pytest.fixture
def tokens(server_and_tokens) -> dict[str, str]:
    return server_and_tokens[1]


def rest(server, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=120)


async def mcp_call(url: str, token: str, tool: str, arguments: dict):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return await client.call_tool(tool, arguments)


def memories_in_database(cluster) -> list[tuple[str, str, str]]:
    """(content, owner's username, cube's owner's username) of every memory, read straight from PostgreSQL."""
    with cluster.connect() as db:
        return db.execute(
            "SELECT m.content, owner.username, cube_owner.username FROM memories_memory m "
            "JOIN accounts_user owner ON owner.id = m.owner_id JOIN cubes_cube c ON c.id = m.cube_id "
            "JOIN accounts_user cube_owner ON cube_owner.id = c.owner_id").fetchall()


# --- The database goes away under a running server, and comes back ----------------------------------------

def waiting_on_locks(cluster) -> list[int]:
    """The server processes of the sessions waiting on a lock."""
    with cluster.connect() as db:
        return [pid for (pid,) in db.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                             "AND wait_event_type = 'Lock'")]


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_with_the_lock_held(cluster, holder, waiting: list[int]) -> None:
    """Stop the cluster so that the waiting sessions die while the lock is still held. A fast stop ends every
    session at once, in no set order: had the holder's ended first, its lock would go and a waiting write
    could commit before its own session ended. So the holder's server process is paused until theirs are gone."""
    holder_pid = holder.info.backend_pid
    os.kill(holder_pid, signal.SIGSTOP)
    stopping = threading.Thread(target=cluster.stop)
    stopping.start()
    try:
        wait_for(lambda: not any(running(pid) for pid in waiting), "the waiting sessions to end")
    finally:
        os.kill(holder_pid, signal.SIGCONT)
        stopping.join(timeout=120)
    holder.close()


def test_database_down_mid_request_answers_503_and_a_tool_error_then_recovers_by_itself(engram, cluster, tokens):
    api = rest(engram, tokens["ann"])
    created = api.post("/api/v1/memories/", json={"content": "Written before the database went away"})
    assert created.status_code == 201, created.text

    # Mid-request: a lock on ann's and ben's cubes stops both writes inside their transactions (a memory's
    # insert checks its cube's row), where the test sees them wait; then the database stops under them. (Two
    # cubes: concurrent stores into one cube share a transaction, so a second write to ann's would wait in
    # the server for the first, not in the database.)
    ben = rest(engram, tokens["ben"])
    bens = ben.post("/api/v1/memories/", json={"content": "Ben's first memory makes his cube"})
    assert bens.status_code == 201, bens.text
    holder = cluster.connect()
    holder.execute("BEGIN")
    holder.execute("SELECT 1 FROM cubes_cube WHERE owner_id IN (SELECT id FROM accounts_user WHERE username IN "
                   "('ann', 'ben')) FOR UPDATE")
    answers = {}

    def rest_write():
        answers["rest"] = api.post("/api/v1/memories/", json={"content": "Written as the database went away"})

    def mcp_write():
        answers["mcp"] = asyncio.run(mcp_call(f"{engram.url}/mcp/thoughtmcp/", tokens["ben"], "store_memory",
                                              {"userId": "ben", "sessionId": "faults", "primarySector": "semantic",
                                               "content": "Stored as the database went away"}))

    writes = [threading.Thread(target=rest_write), threading.Thread(target=mcp_write)]
    for write in writes:
        write.start()
    def both_waiting():
        pids = waiting_on_locks(cluster)
        return pids if len(pids) >= 2 else None

    waiting = wait_for(both_waiting, "both writes to wait inside their transactions")
    stop_with_the_lock_held(cluster, holder, waiting)
    try:
        for write in writes:
            write.join(timeout=120)
        response = answers["rest"]
        assert response.status_code == 503, f"{response.text}\n{engram.log_tail(0)}"
        assert int(response.headers["Retry-After"]) > 0
        assert response.json()["error"]["code"] == "database_unavailable"
        result = answers["mcp"]
        assert result.is_error
        failure = json.loads(result.content[0].text)
        assert failure["success"] is False and "Internal server error" not in failure["error"], failure

        # While it is down: every REST answer is the same 503, and /healthz says which part failed.
        for path in ("/api/v1/memories/", f"/api/v1/memories/{created.json()['id']}/"):
            response = api.get(path)
            assert response.status_code == 503, response.text
            assert int(response.headers["Retry-After"]) > 0
            error = response.json()["error"]
            assert error["code"] == "database_unavailable" and error["message"], error
        health = httpx.get(f"{engram.url}/healthz", timeout=60)
        assert health.status_code == 503 and "database" in health.json()["failed"]
        # A new MCP request cannot even have its token checked: a 503 saying when to retry, not a 500.
        fresh = httpx.post(f"{engram.url}/mcp/thoughtmcp/", timeout=60, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {tokens['ann']}", "Accept": "application/json, text/event-stream"})
        assert fresh.status_code == 503 and int(fresh.headers["Retry-After"]) > 0, fresh.text
        assert fresh.json()["error"]["data"]["code"] == "database_unavailable"
    finally:
        cluster.start()

    # No restart of Engram: its pool makes new connections once the server answers again.
    wait_for(lambda: api.get("/api/v1/memories/").status_code == 200, "REST to answer again")
    contents = [item["content"] for item in api.get("/api/v1/memories/").json()["results"]]
    assert contents == ["Written before the database went away"]  # the interrupted writes left nothing
    assert "Stored as the database went away" not in [content for content, _, _ in memories_in_database(cluster)]
    result = asyncio.run(mcp_call(f"{engram.url}/mcp/thoughtmcp/", tokens["ann"], "search_memories",
                                  {"userId": "ann", "text": "database"}))
    assert not result.is_error, result.content
    assert httpx.get(f"{engram.url}/healthz", timeout=60).json()["checks"]["database"]["ok"]
    api.delete(f"/api/v1/memories/{created.json()['id']}/", params={"hard": "true"})
    ben.delete(f"/api/v1/memories/{bens.json()['id']}/", params={"hard": "true"})


# --- kill -9 of the web server with 20 writers in flight -------------------------------------------------

WRITERS = 20
WRITES_EACH = 8  # bounded: at most 160 writes
KILL_AFTER = 40  # acknowledged writes


def test_every_write_acknowledged_before_kill_9_is_there_after_restart_exactly_once(engram, cluster, tokens):
    token = tokens["ben"]
    acknowledged: list[tuple[str, str]] = []  # (content, id)
    lock = threading.Lock()
    enough = threading.Event()

    def writer(number: int) -> None:
        with rest(engram, token) as api:
            for item in range(WRITES_EACH):
                content = f"Kill test writer {number} item {item}"
                try:
                    response = api.post("/api/v1/memories/", json={"content": content, "tags": ["kill-test"]})
                except httpx.TransportError:
                    return  # the server is gone: this write was never acknowledged
                if response.status_code != 201:
                    return
                with lock:
                    acknowledged.append((content, response.json()["id"]))
                    if len(acknowledged) >= KILL_AFTER:
                        enough.set()

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    assert enough.wait(timeout=300), f"only {len(acknowledged)} writes were acknowledged"
    engram.kill()  # with writes still in flight
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert len(acknowledged) < WRITERS * WRITES_EACH, "every write finished before the kill: nothing was in flight"

    engram.start()
    stored = Counter(content for content, owner, _ in memories_in_database(cluster)
                     if owner == "ben" and content.startswith("Kill test writer"))
    for content, _ in acknowledged:
        assert stored[content] == 1, content
    # A write in flight at the kill may have committed without its answer: it is there once, or not at all.
    assert max(stored.values()) == 1
    with rest(engram, token) as api:
        for content, memory_id in acknowledged:
            response = api.get(f"/api/v1/memories/{memory_id}/")
            assert response.status_code == 200 and response.json()["content"] == content


# --- 50 concurrent MCP writers ----------------------------------------------------------------------------

SESSIONS = 50
STORES_EACH = 20


def test_50_concurrent_mcp_writers_store_everything_once_and_see_only_their_own(engram, cluster, tokens):
    url = f"{engram.url}/mcp/thoughtmcp/"

    async def session(number: int) -> list[str]:
        username = USERS[number % len(USERS)]
        stored = []
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens[username]}"}, timeout=300) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                for item in range(STORES_EACH):
                    content = f"Concurrent session {number} of {username} item {item}"
                    result = await client.call_tool("store_memory", {
                        "userId": username, "sessionId": f"session-{number}", "content": content,
                        "primarySector": "semantic"})
                    assert not result.is_error, result.content
                    stored.append(content)
        return stored

    async def run_all():
        return await asyncio.gather(*(session(number) for number in range(SESSIONS)))

    acknowledged = [content for stored in asyncio.run(run_all()) for content in stored]
    assert len(acknowledged) == SESSIONS * STORES_EACH

    rows = [row for row in memories_in_database(cluster) if row[0].startswith("Concurrent session")]
    counts = Counter(content for content, _, _ in rows)
    assert set(counts) == set(acknowledged)  # all stored, nothing else
    assert max(counts.values()) == 1  # none duplicated
    for content, owner, cube_owner in rows:
        # In the writer's own personal cube.
        assert content.split(" of ")[1].split(" ")[0] == owner == cube_owner

    async def search(username: str, text: str) -> list[str]:
        result = await mcp_call(url, tokens[username], "search_memories",
                                {"userId": username, "text": text, "limit": 100})
        assert not result.is_error, result.content
        return [memory["content"] for memory in json.loads(result.content[0].text)["data"]["memories"]]

    async def isolation():
        for number, username in enumerate(USERS):
            # Another writer's exact words find only the searcher's own memories.
            other = USERS[(number + 1) % len(USERS)]
            found = await search(username, f"Concurrent session {number + 1} of {other} item 7")
            assert found and all(f" of {username} " in content for content in found), (username, found[:3])

    asyncio.run(isolation())
