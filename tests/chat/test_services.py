"""chat_send, chat_history, chat_clear and chat_session_list, through the service layer: the three backends
(a real OpenAI-compatible HTTP server, the MCP client's sampling callable, extractive), stored turns,
history in the prompt, isolation and bad input."""
import asyncio
import socket

import pytest
from channels.db import database_sync_to_async

from apps.chat.llm import NO_MODEL_NOTE, LLMUnavailable
from apps.chat.models import ChatMessage, ChatSession
from apps.chat.selectors import chat_history, chat_session_list
from apps.chat.services import HISTORY_CHARS, chat_clear, chat_send
from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.services import cube_share
from tests.chat.conftest import FAKE_ANSWER, FAKE_MODEL

pytestmark = pytest.mark.django_db

CAT_QUESTION = "What is my cat called?"


def test_llm_endpoint_gets_the_memories_history_and_limits_and_its_answer_is_stored(user, pet_memories, llm_server):
    first = chat_send(actor=user, query=CAT_QUESTION, top_k=2, max_tokens=120)
    assert (first.response, first.method, first.model, first.token_count) == (FAKE_ANSWER, "llm", FAKE_MODEL, 9)
    [request] = llm_server.requests
    assert (request["model"], request["max_tokens"], request["stream"]) == (FAKE_MODEL, 120, False)
    assert llm_server.headers[0]["Authorization"] == "Bearer sk-test"
    system, question = request["messages"]
    assert system["role"] == "system" and question == {"role": "user", "content": CAT_QUESTION}
    assert "[1] My cat is named Miso." in system["content"]
    # top_k=2 retrieves the vet appointment too, but it is below the relevance floor: not in the prompt.
    assert len(first.context_used) == 1 and "[2]" not in system["content"] and "vet" not in system["content"]
    assert first.context_used[0].memory == pet_memories[0]
    assert 0 < first.context_used[0].relevance <= 1

    second = chat_send(actor=user, query="And what colour is she?", session_id=first.session.pk)
    assert second.session == first.session
    messages = llm_server.requests[1]["messages"]
    assert messages[1:] == [
        {"role": "user", "content": CAT_QUESTION},
        {"role": "assistant", "content": FAKE_ANSWER},
        {"role": "user", "content": "And what colour is she?"},
    ]
    stored = list(ChatMessage.objects.filter(session=first.session).values_list("role", "content", "method", "model"))
    assert stored == [("user", CAT_QUESTION, "", ""), ("assistant", FAKE_ANSWER, "llm", FAKE_MODEL),
                      ("user", "And what colour is she?", "", ""), ("assistant", FAKE_ANSWER, "llm", FAKE_MODEL)]
    answer = ChatMessage.objects.filter(session=first.session, role="assistant").first()
    assert answer.context_used[0] == {"memory_id": str(pet_memories[0].pk), "cube_id": "alice-pets",
                                      "relevance_score": first.context_used[0].relevance}
    assert answer.token_count == 9
    assert first.session.title == CAT_QUESTION


def test_llm_without_usage_reports_an_estimate(user, pet_memories, llm_server):
    llm_server.body = {"choices": [{"message": {"role": "assistant", "content": "x" * 40}}]}
    reply = chat_send(actor=user, query=CAT_QUESTION)
    assert (reply.token_count, reply.model) == (10, FAKE_MODEL)


def test_history_in_the_prompt_is_bounded_by_characters(user, pet_memories, llm_server):
    reply = chat_send(actor=user, query="a" * 10000)
    chat_send(actor=user, query="b" * 10000, session_id=reply.session.pk)
    chat_send(actor=user, query="short one", session_id=reply.session.pk)
    # The first query matched nothing, and started the session: answered without the model.
    history = llm_server.requests[-1]["messages"][1:-1]
    # The second query alone is over the budget: only the answer after it is kept.
    assert history == [{"role": "assistant", "content": FAKE_ANSWER}]
    assert sum(len(message["content"]) for message in history) <= HISTORY_CHARS


def test_unreachable_endpoint_is_a_clear_error_and_nothing_is_stored(user, pet_memories, settings):
    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.ENGRAM_LLM_BASE_URL = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(LLMUnavailable) as error:
        chat_send(actor=user, query=CAT_QUESTION)
    assert error.value.code == "llm_unavailable"
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in error.value.message
    assert "cannot connect" in error.value.message
    assert not ChatSession.objects.exists() and not ChatMessage.objects.exists()


def test_slow_endpoint_times_out_with_a_clear_error(user, pet_memories, llm_server, settings):
    settings.ENGRAM_LLM_TIMEOUT_SECONDS = 0.2
    llm_server.delay = 1.0
    with pytest.raises(LLMUnavailable, match="ENGRAM_LLM_TIMEOUT_SECONDS"):
        chat_send(actor=user, query=CAT_QUESTION)


@pytest.mark.parametrize("status, body, reason", [
    (500, {"error": "boom"}, "HTTP 500"),
    (200, {"choices": []}, "not an OpenAI chat completion"),
])
def test_failing_endpoint_is_a_clear_error(user, pet_memories, llm_server, status, body, reason):
    llm_server.status, llm_server.body = status, body
    with pytest.raises(LLMUnavailable, match=reason):
        chat_send(actor=user, query=CAT_QUESTION)


def test_extractive_answer_quotes_the_sentences_sharing_words_and_cites_each_memory_once(user, pet_memories, no_llm):
    reply = chat_send(actor=user, query=CAT_QUESTION, top_k=3)
    assert (reply.method, reply.model) == ("extractive", "extractive")
    # "She is a grey tabby..." shares no word with the question; the vet and the tea are below the floor.
    assert reply.response == "From your memories:\n- My cat is named Miso. [1]"
    assert [item.memory for item in reply.context_used] == [pet_memories[0]]
    assert NO_MODEL_NOTE not in reply.response  # the page says it once (apps/chat/views.py)
    assert reply.token_count == -(-len(reply.response) // 4)
    assert ChatMessage.objects.get(role="assistant").method == "extractive"


def test_extractive_answer_joins_a_memorys_sentences_and_keeps_fragments_with_their_sentence(user, store, no_llm):
    compost = store(user, "The left compost bin is ready in May. (note 1) Turn the compost bin every week. "
                          "Lettuce grows in the shade.")
    store(user, "Slugs ate the lettuce seedlings: put copper tape around the raised bed.")
    reply = chat_send(actor=user, query="When is the compost bin ready?", top_k=2)
    assert reply.response == ("From your memories:\n"
                              "- The left compost bin is ready in May. (note 1) Turn the compost bin every week. [1]")
    assert reply.response.count("[1]") == 1 and "- (note 1)" not in reply.response
    assert [item.memory for item in reply.context_used] == [compost]


def test_extractive_answer_numbers_only_the_memories_it_quotes(user, store, no_llm):
    tomatoes = store(user, "The tomatoes went into the south bed; water the tomatoes every other evening.")
    beans = store(user, "The beans in the north bed need water every morning.")
    reply = chat_send(actor=user, query="How often do I water the tomatoes and the beans?", top_k=5)
    assert [item.memory for item in reply.context_used] == [tomatoes, beans]
    assert reply.response.count("[1]") == 1 and reply.response.count("[2]") == 1 and "[3]" not in reply.response
    stored = ChatMessage.objects.get(role="assistant").context_used
    assert [record["memory_id"] for record in stored] == [str(tomatoes.pk), str(beans.pk)]


def test_nothing_relevant_is_said_and_no_model_is_asked(user, pet_memories, store, llm_server):
    store(user, "There is nothing left in the freezer.")  # "nothing" matches, and is all that does
    reply = chat_send(actor=user, query="zzzz qqqq nothing relevant", top_k=5)
    assert reply.context_used == [] and (reply.method, reply.model) == ("none", "")
    assert reply.response.startswith("Nothing in your memories is relevant to this question")
    assert llm_server.requests == []
    answer = ChatMessage.objects.get(role="assistant")
    assert (answer.context_used, answer.method) == ([], "none")


def test_extractive_answer_without_memories_says_nothing_is_relevant(user, no_llm):
    reply = chat_send(actor=user, query=CAT_QUESTION)
    assert reply.context_used == [] and "Nothing in your memories is relevant" in reply.response


def test_a_follow_up_with_nothing_relevant_asks_the_model_with_the_conversation(user, pet_memories, llm_server):
    first = chat_send(actor=user, query=CAT_QUESTION)
    reply = chat_send(actor=user, query="And how old is she?", session_id=first.session.pk)
    assert reply.context_used == [] and reply.method == "llm"
    system = llm_server.requests[1]["messages"][0]["content"]
    assert "none of the user's memories is relevant" in system and "[1]" not in system


def test_sampling_callable_answers_when_no_endpoint_is_configured(user, pet_memories, no_llm):
    calls = []

    def generate(messages, max_tokens):
        calls.append((messages, max_tokens))
        return "Miso, from your notes [1].", "client-model"

    reply = chat_send(actor=user, query=CAT_QUESTION, max_tokens=77, generate=generate)
    assert (reply.response, reply.method, reply.model) == ("Miso, from your notes [1].", "sampling", "client-model")
    [(messages, max_tokens)] = calls
    assert max_tokens == 77 and "Miso" in messages[0]["content"] and messages[-1]["content"] == CAT_QUESTION


def test_async_sampling_callable_is_awaited(user, pet_memories, no_llm):
    async def generate(messages, max_tokens):
        return "Miso.", "async-client"

    reply = chat_send(actor=user, query=CAT_QUESTION, generate=generate)
    assert (reply.response, reply.model) == ("Miso.", "async-client")


def test_configured_endpoint_wins_over_sampling(user, pet_memories, llm_server):
    reply = chat_send(actor=user, query=CAT_QUESTION, generate=lambda messages, max_tokens: ("no", "client"))
    assert reply.method == "llm" and len(llm_server.requests) == 1


def test_an_mcp_client_goes_on_with_its_own_session(user, pet_memories, no_llm):
    first = chat_send(actor=user, query=CAT_QUESTION, client_key="token-1:a")
    other = chat_send(actor=user, query=CAT_QUESTION, client_key="token-1:b")
    again = chat_send(actor=user, query="And the dog?", client_key="token-1:a")
    assert again.session == first.session != other.session
    assert chat_send(actor=user, query=CAT_QUESTION).session not in {first.session, other.session}


def test_cube_ids_restrict_the_context(user, pet_memories, store, no_llm):
    store(user, "My cat Miso also likes the balcony.")  # alice's personal cube
    reply = chat_send(actor=user, query=CAT_QUESTION, cube_ids=["alice-pets"], top_k=10)
    assert {item.memory.cube_id for item in reply.context_used} == {"alice-pets"}
    everywhere = chat_send(actor=user, query=CAT_QUESTION, top_k=10)
    assert len({item.memory.cube_id for item in everywhere.context_used}) == 2


def test_history_pages_and_totals(user, pet_memories, no_llm, django_assert_max_num_queries):
    session = chat_send(actor=user, query="first question").session
    for query in ("second question", "third question"):
        chat_send(actor=user, query=query, session_id=session.pk)
    with django_assert_max_num_queries(3):
        history = chat_history(actor=user, session_id=session.pk, limit=2, offset=2)
    assert history.total == 6
    assert [(m.role, m.content) for m in history.messages][0] == ("user", "second question")
    assert len(history.messages) == 2
    latest = chat_history(actor=user)
    assert latest.session == session and latest.total == 6 and len(latest.messages) == 6


def test_session_list_counts_messages_without_n_plus_one(user, pet_memories, no_llm, django_assert_max_num_queries):
    for query in ("one", "two", "three"):
        chat_send(actor=user, query=query)
    with django_assert_max_num_queries(1):
        sessions = list(chat_session_list(actor=user))
    assert [(s.title, s.message_count) for s in sessions] == [("three", 2), ("two", 2), ("one", 2)]


def test_clear_deletes_the_session_and_its_messages(user, pet_memories, no_llm):
    session = chat_send(actor=user, query=CAT_QUESTION).session
    chat_clear(actor=user, session_id=session.pk)
    assert not ChatSession.objects.exists() and not ChatMessage.objects.exists()
    with pytest.raises(NotFound):
        chat_history(actor=user, session_id=session.pk)
    assert chat_history(actor=user).session is None


def test_bob_cannot_read_continue_or_clear_alices_session(user, other_user, pet_memories, no_llm):
    session = chat_send(actor=user, query=CAT_QUESTION).session
    for call in (
        lambda: chat_history(actor=other_user, session_id=session.pk),
        lambda: chat_send(actor=other_user, query="hi", session_id=session.pk),
        lambda: chat_clear(actor=other_user, session_id=session.pk),
    ):
        with pytest.raises(NotFound) as error:
            call()
        assert error.value.extra["field"] == "session_id"
    assert list(chat_session_list(actor=other_user)) == []
    assert chat_history(actor=other_user).session is None
    assert ChatMessage.objects.filter(session=session).count() == 2


def test_bob_cannot_chat_over_alices_cube_until_it_is_shared(user, other_user, pet_memories, no_llm):
    with pytest.raises(NotFound) as error:
        chat_send(actor=other_user, query=CAT_QUESTION, cube_ids=["alice-pets"])
    assert error.value.extra["field"] == "cube_ids"
    unscoped = chat_send(actor=other_user, query=CAT_QUESTION, top_k=10)
    assert all(item.memory.cube_id != "alice-pets" for item in unscoped.context_used)
    cube_share(actor=user, cube_id="alice-pets", user="bob", role="reader")
    shared = chat_send(actor=other_user, query=CAT_QUESTION, cube_ids=["alice-pets"])
    assert shared.context_used[0].memory == pet_memories[0]


@pytest.mark.parametrize("arguments, field", [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": "x" * 10001}, "query"),
    ({"query": 42}, "query"),
    ({"query": "ok", "top_k": 0}, "top_k"),
    ({"query": "ok", "top_k": 11}, "top_k"),
    ({"query": "ok", "top_k": "3"}, "top_k"),
    ({"query": "ok", "max_tokens": 49}, "max_tokens"),
    ({"query": "ok", "max_tokens": 4001}, "max_tokens"),
    ({"query": "ok", "cube_ids": "alice-pets"}, "cube_ids"),
    ({"query": "ok", "cube_ids": ["bad id!"]}, "cube_ids[0]"),
])
def test_bad_input_names_the_field(user, no_llm, arguments, field):
    with pytest.raises(InvalidInput) as error:
        chat_send(actor=user, **arguments)
    assert error.value.field == field
    assert not ChatSession.objects.exists()


def test_unknown_cube_and_session_are_not_found(user, no_llm):
    with pytest.raises(NotFound, match="nope"):
        chat_send(actor=user, query="hi", cube_ids=["nope"])
    with pytest.raises(NotFound, match="chat_missing"):
        chat_send(actor=user, query="hi", session_id="chat_missing")
    with pytest.raises(NotFound):  # an id that cannot exist never reaches SQL
        chat_history(actor=user, session_id="chat_\x00")


@pytest.mark.parametrize("arguments, field", [
    ({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"offset": -1}, "offset"), ({"limit": True}, "limit"),
])
def test_history_bad_paging(user, arguments, field):
    with pytest.raises(InvalidInput) as error:
        chat_history(actor=user, **arguments)
    assert error.value.field == field


@pytest.mark.django_db(transaction=True)
async def test_async_sampling_runs_on_the_edges_event_loop(user, pet_memories, no_llm):
    """As the MCP edge calls it: chat_send in a worker thread, the client's model a coroutine on the loop."""
    loop = asyncio.get_running_loop()
    loops = []

    async def generate(messages, max_tokens):
        loops.append(asyncio.get_running_loop())
        return "Miso [1].", "client-llm"

    reply = await database_sync_to_async(chat_send)(actor=user, query=CAT_QUESTION, generate=generate)
    assert (reply.response, reply.method) == ("Miso [1].", "sampling") and loops == [loop]
