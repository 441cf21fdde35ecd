"""Streamed answers: the service (chat_prepare, chat_stream) against the fake model server streaming as OpenAI does,
and the page's stream view served by uvicorn as `manage.py serve` serves it (config.asgi: Django's views on the
pool, the response's server-sent events sent from the event loop), read with a real HTTP client. The fake model
holds its answer after the first piece until the test has seen that piece arrive: an answer buffered anywhere on
the way would never arrive while held."""
import json
import re
import threading

import httpx
import pytest
from channels.db import database_sync_to_async
from django.test import Client

from apps.chat.llm import LLMUnavailable
from apps.chat.models import ChatMessage, ChatSession
from apps.chat.services import chat_prepare, chat_stream
from tests.chat.conftest import FAKE_ANSWER, FAKE_MODEL, FAKE_PIECES
from tests.mcp.support import serving

CAT_QUESTION = "What is my cat called?"
READ_TIMEOUT = 10  # seconds a held stream may take to show its first piece before the test gives up


async def collect(turn):
    return [piece async for piece in chat_stream(turn)]


@pytest.mark.django_db(transaction=True)
async def test_chat_stream_yields_the_models_pieces_then_stores_the_whole_answer(user, pet_memories, llm_server):
    turn = await database_sync_to_async(chat_prepare)(actor=user, query=CAT_QUESTION, max_tokens=90)
    assert turn.streams
    pieces = await collect(turn)
    assert [piece.text for piece in pieces[:-1]] == FAKE_PIECES
    reply = pieces[-1].reply
    assert (reply.response, reply.method, reply.model) == (FAKE_ANSWER, "llm", FAKE_MODEL)
    assert [item.memory for item in reply.context_used] == [pet_memories[0]]
    [request] = llm_server.requests
    assert (request["stream"], request["max_tokens"]) == (True, 90)
    stored = await database_sync_to_async(list)(ChatMessage.objects.order_by("id").values_list("role", "content"))
    assert stored == [("user", CAT_QUESTION), ("assistant", FAKE_ANSWER)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("steer, reason", [
    ({"break_after_first": True}, r"ended before its last chunk \(data: \[DONE\]\)"),
    ({"status": 500, "body": {"error": "boom"}}, "HTTP 500"),
    ({"pieces": ["Miso", {"not": "text"}]}, "not an OpenAI chat completion chunk"),
])
async def test_a_failed_stream_raises_and_stores_nothing(user, pet_memories, llm_server, steer, reason):
    for name, value in steer.items():
        setattr(llm_server, name, value)
    turn = await database_sync_to_async(chat_prepare)(actor=user, query=CAT_QUESTION)
    with pytest.raises(LLMUnavailable, match=reason):
        await collect(turn)
    assert not await database_sync_to_async(ChatSession.objects.exists)()


@pytest.mark.django_db(transaction=True)
async def test_without_a_model_the_stream_is_the_whole_answer_at_once(user, pet_memories, no_llm):
    turn = await database_sync_to_async(chat_prepare)(actor=user, query="zzzz qqqq nothing relevant")
    assert not turn.streams
    first, last = await collect(turn)
    assert first.text.startswith("Nothing in your memories is relevant") and last.reply.method == "none"


# The page's stream view over the whole ASGI stack.

@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with serving("config.asgi:application", lifespan="on") as url:
        yield url


@pytest.fixture
def browser_like(live_url, user):
    """An HTTP client logged in as alice (her session cookie), with the chat page's CSRF token."""
    login = Client()
    login.force_login(user)
    with httpx.Client(base_url=live_url, timeout=httpx.Timeout(30, read=READ_TIMEOUT)) as http:
        http.cookies.set("sessionid", login.cookies["sessionid"].value)
        page = http.get("/chat/new/")
        assert page.status_code == 200
        http.csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        yield http


def events(response):
    """(event, data) for each server-sent event, as the lines arrive."""
    name = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield name, json.loads(line.removeprefix("data: "))


def ask(http, path, **data):
    return http.stream("POST", path, data={"csrfmiddlewaretoken": http.csrf, "top_k": 3, "query": CAT_QUESTION,
                                           **data})


@pytest.mark.django_db(transaction=True)
def test_the_page_gets_the_answer_as_it_is_written_and_it_is_stored_once_complete(browser_like, pet_memories,
                                                                                   llm_server):
    llm_server.hold = threading.Event()
    with ask(browser_like, "/chat/new/stream/") as response:
        assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
        stream = events(response)
        assert next(stream) == ("token", {"text": FAKE_PIECES[0]})
        # The model is still writing: the first piece came through on its own, and nothing is stored yet.
        assert not ChatMessage.objects.exists()
        llm_server.hold.set()
        rest = list(stream)
    assert rest[:-1] == [("token", {"text": piece}) for piece in FAKE_PIECES[1:]]
    name, done = rest[-1]
    answer = ChatMessage.objects.get(role="assistant")
    assert name == "done" and done["message_id"] == answer.pk and done["session_id"] == answer.session_id
    assert done["url"].startswith(f"/chat/{answer.session_id}/?") and done["url"].endswith(f"#message-{answer.pk}")
    assert (answer.content, answer.method) == (FAKE_ANSWER, "llm")
    assert answer.context_used[0]["memory_id"] == str(pet_memories[0].pk)
    assert ChatMessage.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_stream_that_breaks_is_reported_as_a_failure_and_not_stored(browser_like, pet_memories, llm_server):
    llm_server.break_after_first = True
    with ask(browser_like, "/chat/new/stream/") as response:
        received = list(events(response))
    assert received[0] == ("token", {"text": FAKE_PIECES[0]})
    name, error = received[-1]
    assert name == "error" and error["code"] == "llm_unavailable" and "data: [DONE]" in error["message"]
    assert len(received) == 2 and not ChatSession.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_bob_cannot_stream_into_alices_session(browser_like, user, other_user, pet_memories, llm_server):
    """browser_like is alice; bob asks in her session with his own login: the 404 page, nothing asked or stored."""
    session = ChatSession.objects.create(owner=user, title="cat", last_activity="2026-01-01T00:00:00Z")
    login = Client()
    login.force_login(other_user)
    browser_like.cookies.set("sessionid", login.cookies["sessionid"].value)
    page = browser_like.get("/chat/new/")
    browser_like.csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    with ask(browser_like, f"/chat/{session.pk}/stream/") as response:
        response.read()
    assert response.status_code == 404 and llm_server.requests == []
    assert browser_like.get(f"/chat/{session.pk}/").status_code == 404
    assert not ChatMessage.objects.filter(session=session).exists()
