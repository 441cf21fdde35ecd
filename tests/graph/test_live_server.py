"""The whole stack as `manage.py serve` runs it: uvicorn, a real websocket client, a store through REST."""
import asyncio
import json

import httpx
import pytest
import websockets

from tests.mcp.support import serving

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with serving("config.asgi:application", lifespan="on") as url:
        yield url


async def test_a_memory_stored_through_rest_reaches_an_open_websocket(live_url, user, personal_cube, make_token,
                                                                       db_call):
    headers = {"Authorization": f"Bearer {await db_call(make_token, user)}"}
    socket_url = live_url.replace("http://", "ws://") + "/ws/graph/"
    async with websockets.connect(socket_url, additional_headers=headers, origin=live_url) as socket:
        await socket.send(json.dumps({"type": "subscribe", "cube": personal_cube}))
        assert json.loads(await asyncio.wait_for(socket.recv(), 10)) == {"type": "subscribed", "cube": personal_cube}
        async with httpx.AsyncClient(base_url=live_url, headers=headers, timeout=30) as http:
            stored = await http.post("/api/v1/memories/", json={"content": "The office moves to Lyon in June"})
        assert stored.status_code == 201
        event = json.loads(await asyncio.wait_for(socket.recv(), 10))
        assert event["kind"] == "memories.created" and event["payload"]["nodes"][0]["id"] == stored.json()["id"]


async def test_a_foreign_origin_cannot_open_the_socket(live_url):
    socket_url = live_url.replace("http://", "ws://") + "/ws/graph/"
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with websockets.connect(socket_url, origin="http://evil.example"):
            pass
    assert refused.value.response.status_code == 403
