"""Django's views under ASGI run on a fixed pool of threads (apps/core/handlers.py)."""
import asyncio
import json
import threading

import httpx
import pytest
from django.core import signals
from django.http import JsonResponse, StreamingHttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from apps.core.handlers import THREAD_NAME_PREFIX, PooledASGIHandler

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def where(request):
    return JsonResponse({"thread": threading.current_thread().name})


@csrf_exempt
def echo(request):
    return JsonResponse({"body": json.loads(request.body)})


def stream(request):
    return StreamingHttpResponse(iter([b"first,", b"second"]))


def boom(request):
    raise RuntimeError("a view that fails")


urlpatterns = [path("where/", where), path("echo/", echo), path("stream/", stream), path("boom/", boom)]


@pytest.fixture
def client(settings):
    """A handler of this module's views with `threads` threads, and an httpx client of it; the handlers'
    threads stop after the test."""
    settings.ROOT_URLCONF = __name__
    handlers = []

    async def make(threads=2):
        handler = PooledASGIHandler(threads=threads)  # after the URLconf is set: middleware loads here
        handlers.append(handler)
        return handler, httpx.AsyncClient(transport=httpx.ASGITransport(app=handler), base_url="http://testserver")
    yield make
    for handler in handlers:
        handler.executor.shutdown()

@pytest.fixture
def signal_threads():
    """The thread each request_started and request_finished signal ran on."""
    seen = {"started": [], "finished": []}

    def started(**kwargs):
        seen["started"].append(threading.current_thread().name)

    def finished(**kwargs):
        seen["finished"].append(threading.current_thread().name)

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    yield seen
    signals.request_started.disconnect(started)
    signals.request_finished.disconnect(finished)


async def test_views_run_on_the_pool_threads_which_every_request_reuses(client):
    _, http = await client(threads=2)
    async with http:
        names = [(await http.get("/where/")).json()["thread"] for _ in range(6)]
        names += [answer.json()["thread"] for answer in await asyncio.gather(*[http.get("/where/") for _ in range(6)])]
    assert all(name.startswith(THREAD_NAME_PREFIX) for name in names), names
    assert len(set(names)) <= 2  # Django's own handler started a new thread for each of the 12


async def test_a_request_starts_and_finishes_on_the_thread_that_ran_its_view(client, signal_threads):
    # request_finished gives the thread's database connection back to the pool: it must run there.
    _, http = await client()
    async with http:
        view_thread = (await http.get("/where/")).json()["thread"]
    assert signal_threads == {"started": [view_thread], "finished": [view_thread]}


async def test_request_finished_names_the_handler_as_its_sender(client):
    # The handler sets HttpResponse's private _handler_class (apps/core/handlers.py): this fails when Django
    # renames it or stops sending it as request_finished's sender.
    senders = []

    def finished(sender, **kwargs):
        senders.append(sender)

    signals.request_finished.connect(finished)
    try:
        _, http = await client()
        async with http:
            await http.get("/where/")
    finally:
        signals.request_finished.disconnect(finished)
    assert senders == [PooledASGIHandler], f"Django's HttpResponse.close() sent request_finished as {senders}"


async def test_the_body_reaches_the_view(client):
    _, http = await client()
    async with http:
        answer = await http.post("/echo/", json={"text": "a body read on the event loop", "limit": 3})
    assert answer.status_code == 200
    assert answer.json() == {"body": {"text": "a body read on the event loop", "limit": 3}}


@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume synchronous iterators")
async def test_a_streaming_response_is_sent_whole_and_then_closed(client, signal_threads):
    _, http = await client()
    async with http:
        answer = await http.get("/stream/")
    assert answer.status_code == 200 and answer.content == b"first,second"
    assert len(signal_threads["finished"]) == 1


async def test_a_failing_view_is_a_500_answer_and_the_handler_goes_on(client):
    _, http = await client()
    async with http:
        failed = await http.get("/boom/")
        after = await http.get("/where/")
    assert failed.status_code == 500 and "a view that fails" not in failed.text  # DEBUG is off: no traceback
    assert after.status_code == 200


async def test_the_application_serves_the_api_through_the_pool(user, make_token):
    # config.asgi as uvicorn serves it (without the server), with concurrent calls.
    from channels.db import database_sync_to_async

    from apps.cubes.services import cube_ensure_personal
    from config.asgi import application

    await database_sync_to_async(cube_ensure_personal)(actor=user)
    token = await database_sync_to_async(make_token)(user)
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost",
                                 headers={"Authorization": f"Bearer {token}"}) as http:
        answers = await asyncio.gather(*[http.get("/api/v1/cubes/") for _ in range(8)])
        refused = await http.get("/api/v1/cubes/", headers={"Authorization": "Bearer eng_not-a-token"})
    assert [answer.status_code for answer in answers] == [200] * 8
    assert all(answer.json()["count"] == 1 for answer in answers)  # the personal cube
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "authentication_failed"
