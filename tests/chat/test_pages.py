"""The chat page (/chat/) through Django's test client: a question stores both turns and the page shows the
answer with the memories it used (relevance, links to their pages) and which backend answered; with no model
the extractive answer and its note show; another user's session is the 404 page; the service's complaints go
next to their field; clearing asks first; the page's queries are bounded."""
import pytest
from django.urls import reverse
from django.utils.html import escape

from apps.chat.llm import NO_MODEL_HOWTO, NO_MODEL_SUMMARY, STORED_NO_MODEL_NOTE
from apps.chat.models import ChatMessage, ChatSession
from apps.chat.services import chat_send
from apps.cubes.services import cube_register
from tests.chat.conftest import FAKE_ANSWER, FAKE_MODEL

pytestmark = pytest.mark.django_db

CAT_QUESTION = "What is my cat called?"


def url(name, *args):
    return reverse(f"chat:{name}", args=args)


def ask(client, address, query=CAT_QUESTION, **data):
    return client.post(address, {"query": query, "top_k": 3, **data})


@pytest.fixture
def conversation(user, pet_memories, no_llm):
    """alice asked about her cat once (extractively)."""
    return chat_send(actor=user, query=CAT_QUESTION).session


def test_pages_require_login(client, conversation):
    for address in (url("index"), url("new"), url("session", conversation.pk), url("clear", conversation.pk)):
        response = client.get(address)
        assert response.status_code == 302 and response["Location"].startswith(reverse("dashboard:login"))


def test_without_sessions_the_page_offers_a_new_conversation(alice, pets_cube):
    response = alice.get(url("index"))
    assert response.status_code == 200 and response.context["session"] is None
    html = response.content.decode()
    assert "New conversation" in html and f'action="{url("new")}"' in html
    assert 'value="alice-pets"' in html  # a checkbox for each readable cube


def test_the_index_goes_on_with_the_latest_conversation(alice, conversation):
    response = alice.get(url("index"))
    assert response.status_code == 302 and response["Location"] == url("session", conversation.pk)


def test_asking_stores_both_turns_and_shows_the_memories_used_with_links(alice, user, pet_memories, no_llm):
    response = ask(alice, url("new"))
    session = ChatSession.objects.get(owner=user)
    user_turn, answer = ChatMessage.objects.filter(session=session).order_by("created_at", "id")
    assert (user_turn.role, user_turn.content) == ("user", CAT_QUESTION)
    assert answer.role == "assistant" and answer.method == "extractive"
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(url("session", session.pk)) and location.endswith(f"#message-{answer.pk}")

    page = alice.get(url("session", session.pk))
    html = page.content.decode()
    cat = pet_memories[0]
    assert f'href="{reverse("dashboard:memory-detail", args=[cat.pk])}"' in html
    assert "My cat is named Miso." in html
    [turn] = [turn for turn in page.context["turns"] if turn["message"].role == "assistant"]
    assert turn["used"][0]["memory"] == cat and 0 < turn["used"][0]["relevance"] <= 1
    assert 'class="bar"' in html and "relevance" in html
    # No model: the extractive answer with how many tokens; the note on configuring a model is the page's.
    assert f"{answer.token_count} tokens" in html and "Extractive (no model)" not in html
    assert turn["text"] == "From your memories:\n- My cat is named Miso. [1]"
    assert html.count(escape(NO_MODEL_SUMMARY)) == 1 and html.count(escape(NO_MODEL_HOWTO)) == 1
    assert 'class="chat-mode chat-note"' in html


def test_an_answer_from_the_configured_model_shows_the_model_and_its_token_count(alice, user, pet_memories,
                                                                                   llm_server):
    ask(alice, url("new"))
    session = ChatSession.objects.get(owner=user)
    html = alice.get(url("session", session.pk)).content.decode()
    assert escape(FAKE_ANSWER) in html and "9 tokens" in html
    # Which model writes the answers is said once, above the conversation, not on each answer.
    assert html.count(f"<code>{FAKE_MODEL}</code>") == 1 and 'id="chat-mode"' in html
    assert "Configured language model" not in html and escape(NO_MODEL_SUMMARY) not in html


def test_a_second_question_goes_on_in_the_same_session(alice, user, conversation):
    response = ask(alice, url("session", conversation.pk), "Who is the vet appointment for?", top_k=2,
                   cubes=["alice-pets"])
    assert response.status_code == 302
    assert "cube=alice-pets" in response["Location"] and "top_k=2" in response["Location"]
    assert ChatSession.objects.filter(owner=user).count() == 1
    assert ChatMessage.objects.filter(session=conversation).count() == 4
    kept = alice.get(response["Location"].split("#")[0])
    assert kept.context["form"]["cubes"].value() == ["alice-pets"] and kept.context["form"]["top_k"].value() == "2"


def test_the_chosen_cubes_limit_the_memories_used(alice, user, pet_memories, no_llm, store):
    work = cube_register(actor=user, cube_id="alice-work", name="Work")
    store(user, "The quarterly report is due on Friday.", cube_id=work.pk)
    ask(alice, url("new"), "When is the quarterly report due?", cubes=["alice-work"])
    answer = ChatMessage.objects.get(session__owner=user, role="assistant")
    assert {record["cube_id"] for record in answer.context_used} == {"alice-work"}


def test_another_users_session_is_the_404_page(bob, conversation):
    for address in (url("session", conversation.pk), url("clear", conversation.pk), url("session", "chat_nope")):
        assert bob.get(address).status_code == 404, address
    assert ask(bob, url("session", conversation.pk)).status_code == 404
    assert bob.post(url("clear", conversation.pk)).status_code == 404
    assert ChatMessage.objects.filter(session=conversation).count() == 2
    assert conversation.title not in bob.get(url("new")).content.decode()


def test_bad_input_goes_next_to_its_field(alice, user, other_user, pets_cube, no_llm):
    empty = ask(alice, url("new"), "   ")
    assert empty.status_code == 200
    assert "empty" in empty.context["form"].errors["query"][0]
    assert 'id="id_query_error"' in empty.content.decode()

    too_many = ask(alice, url("new"), top_k=11)
    assert "from 1 to 10" in too_many.context["form"].errors["top_k"][0]

    cube_register(actor=other_user, cube_id="bobs-secrets")
    strangers = ask(alice, url("new"), cubes=["bobs-secrets"])
    assert "cubes" in strangers.context["form"].errors
    assert not ChatSession.objects.filter(owner=user).exists()


def test_an_unreachable_model_is_said_above_the_form_and_nothing_is_stored(alice, user, pet_memories, llm_server):
    llm_server.status = 500
    response = ask(alice, url("new"))
    assert response.status_code == 200
    assert "is unavailable" in response.context["form"].non_field_errors()[0]
    assert not ChatMessage.objects.filter(session__owner=user).exists()


def test_clear_asks_then_deletes_the_conversation(alice, conversation):
    confirm = alice.get(url("clear", conversation.pk))
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    assert ChatSession.objects.filter(pk=conversation.pk).exists()

    response = alice.post(url("clear", conversation.pk))
    assert response.status_code == 302 and response["Location"] == url("new")
    assert not ChatSession.objects.filter(pk=conversation.pk).exists()
    assert not ChatMessage.objects.filter(session_id=conversation.pk).exists()


def test_the_page_queries_do_not_grow_with_turns_or_sessions(alice, user, pet_memories, no_llm,
                                                              django_assert_max_num_queries):
    session = chat_send(actor=user, query=CAT_QUESTION).session
    for index in range(4):
        chat_send(actor=user, query=f"Tell me about the dog, part {index}", session_id=session.pk)
        chat_send(actor=user, query=f"Another topic {index}")
    # Session, user, cubes, the chat session, its message count and page, the memories used, the session list.
    with django_assert_max_num_queries(8):
        response = alice.get(url("session", session.pk))
    assert len(response.context["turns"]) == 10 and len(response.context["sessions"]) == 5


def test_a_long_conversation_shows_its_latest_messages_and_links_to_earlier_ones(alice, conversation,
                                                                                  django_assert_max_num_queries):
    ChatMessage.objects.bulk_create(ChatMessage(session=conversation, role=ChatMessage.Role.USER,
                                                content=f"message {index}") for index in range(102))
    with django_assert_max_num_queries(8):
        latest = alice.get(url("session", conversation.pk))
    assert [turn["text"] for turn in latest.context["turns"]][-1] == "message 101"
    assert len(latest.context["turns"]) == 100 and latest.context["earlier_offset"] == 0
    assert "Showing 100 of 104 messages" in latest.content.decode()

    earlier = alice.get(url("session", conversation.pk), {"offset": 0})
    assert earlier.context["turns"][0]["message"].content == CAT_QUESTION
    assert len(earlier.context["turns"]) == 100 and earlier.context["earlier_offset"] is None


def test_nothing_relevant_offers_a_search_for_the_question(alice, user, pet_memories, no_llm):
    ask(alice, url("new"), "zzzz qqqq nothing relevant")
    session = ChatSession.objects.get(owner=user)
    page = alice.get(url("session", session.pk))
    html = page.content.decode()
    search = f'{reverse("dashboard:search")}?q=zzzz+qqqq+nothing+relevant'
    assert f'class="search-instead" href="{search}"' in html
    assert "Nothing in your memories is relevant" in html and "Memories used" not in html


def test_the_mode_is_said_once_for_a_conversation_of_two_answers(alice, user, pet_memories, no_llm):
    first = ask(alice, url("new"))
    session = ChatSession.objects.get(owner=user)
    ask(alice, url("session", session.pk), "Who is the vet appointment for?")
    html = alice.get(first["Location"].split("#")[0]).content.decode()
    assert ChatMessage.objects.filter(session=session, role="assistant").count() == 2
    assert html.count("No language model is configured") == 1
    assert "data-stream-url" not in html  # nothing to stream without a model


def test_answers_stored_with_the_note_show_without_it(alice, conversation):
    answer = ChatMessage.objects.get(session=conversation, role="assistant")
    answer.content = f"{answer.content}\n\n{STORED_NO_MODEL_NOTE}"
    answer.save()
    page = alice.get(url("session", conversation.pk))
    assert page.content.decode().count("No language model is configured") == 1
    assert page.context["turns"][1]["text"] == "From your memories:\n- My cat is named Miso. [1]"


def test_with_a_model_the_form_streams(alice, conversation, llm_server):
    html = alice.get(url("session", conversation.pk)).content.decode()
    assert f'data-stream-url="{url("session-stream", conversation.pk)}"' in html and "chat/chat.js" in html
    # An answer made before the model was configured says how it was made; the page's mode is the model.
    assert "Extractive (no model)" in html


@pytest.mark.parametrize("data, field", [
    ({"query": "   "}, "query"),
    ({"query": "x" * 10001}, "query"),
    ({"query": "ok", "top_k": 11}, "top_k"),
    ({"query": "ok", "cubes": ["bobs-secrets"]}, "cubes"),
])
def test_bad_input_to_the_stream_is_a_400_naming_the_field(alice, user, other_user, pets_cube, llm_server, data,
                                                           field):
    cube_register(actor=other_user, cube_id="bobs-secrets")
    response = alice.post(url("new-stream"), data)
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert list(error["fields"]) == [field] and error["code"] == "invalid_input"
    assert not ChatSession.objects.filter(owner=user).exists() and llm_server.requests == []


def test_bob_cannot_stream_into_alices_conversation(bob, conversation, llm_server):
    response = bob.post(url("session-stream", conversation.pk), {"query": CAT_QUESTION, "top_k": 3})
    assert response.status_code == 404 and llm_server.requests == []
    assert ChatMessage.objects.filter(session=conversation).count() == 2
    assert bob.get(url("session-stream", conversation.pk)).status_code == 405  # a POST only


def test_the_stream_needs_a_login(client, conversation):
    response = client.post(url("session-stream", conversation.pk), {"query": CAT_QUESTION})
    assert response.status_code == 302 and response["Location"].startswith(reverse("dashboard:login"))
