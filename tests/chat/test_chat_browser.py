"""The chat page in a real browser (Debian's chromium through Playwright) against the whole ASGI stack on uvicorn,
as `manage.py serve` runs it: a question about nothing in the memories is told so and offered a search that works;
a question about them cites each memory once; how answers are made is said once per conversation; with a model
configured (the fake OpenAI-compatible server) the answer shows as it is written, is stored once complete, and a
stream that breaks is shown as a failure and stored nowhere. Checked at 1440x900 and 390x844. To refresh the
screenshots in the docs: ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/chat/test_chat_browser.py"""
import re
import threading
from pathlib import Path

import pytest
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from playwright.sync_api import expect, sync_playwright

from apps.chat.models import ChatMessage, ChatSession
from config.asgi import application
from tests.browser import CHROMIUM, CHROMIUM_ARGS, PHONE, assert_no_sideways_scroll, log_in
from tests.chat.conftest import FAKE_ANSWER, FAKE_PIECES
from tests.mcp.support import serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1440, "height": 900}
WAIT_MS = 15000
GARDEN = [
    "The tomatoes went into the south bed on 12 April; water them every other evening.",
    "Slugs ate the lettuce seedlings again: put copper tape around the raised bed.",
    "Compost from the left bin is ready in May; the right bin was started in March.",
    "Water the tomatoes in the south bed in the evening, never at noon.",
    "There is nothing left in the freezer; buy peas on Saturday.",
]


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    """uvicorn serving config.asgi plus static files from the finders, as runserver would."""
    with serving(ASGIStaticFilesHandler(application), lifespan="on") as url:
        yield url


@pytest.fixture
def garden(user, store):
    return [store(user, content) for content in GARDEN]


@pytest.fixture
def page(live_url, user, monkeypatch):
    """Alice's browser on a new conversation. Ask for it after the fixtures that write: Playwright's sync API runs
    an event loop in this thread, and the test's own database reads then need DJANGO_ALLOW_ASYNC_UNSAFE."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=WIDE).new_page()
        page.set_default_timeout(WAIT_MS)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        log_in(page, f"{live_url}/login/?next=/chat/new/")
        expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
        yield page
        browser.close()
        assert errors == []
    connections.close_all()


def ask(page, question: str) -> None:
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask").click()


def check_layout(page, shots: Path, name: str) -> None:
    """No sideways scroll, and a screenshot, at both sizes."""
    for viewport, suffix in ((WIDE, ""), (PHONE, "-phone")):
        page.set_viewport_size(viewport)
        assert_no_sideways_scroll(page, name)
        page.screenshot(path=str(shots / f"{name}{suffix}.png"), full_page=True)
    page.set_viewport_size(WIDE)


def test_without_a_model_chat_says_when_nothing_is_relevant_and_cites_each_memory_once(garden, no_llm, shots, page,
                                                                                        live_url):
    ask(page, "zzzz qqqq nothing relevant")
    answer = page.locator(".turn-assistant").last
    expect(answer.locator(".turn-text")).to_contain_text("Nothing in your memories is relevant to this question")
    expect(answer.locator(".used")).to_have_count(0)
    expect(answer.get_by_role("link", name="Search your memories instead")).to_be_visible()

    ask(page, "When should I water the tomatoes?")
    answer = page.locator(".turn-assistant").last
    expect(answer.locator(".turn-text")).to_contain_text("From your memories:")
    text = answer.locator(".turn-text").inner_text()
    cited = re.findall(r"\[(\d+)\]", text)
    used = answer.locator(".used-memory")
    # Each memory once: cited once in the answer, listed once below it, and nothing else repeats them.
    assert sorted(cited) == [str(n) for n in range(1, used.count() + 1)] and used.count() == 2, text
    expect(used.first.locator("a.memory-link")).to_contain_text("tomatoes")
    assert "Sources" not in text and "(note" not in text
    # Two answers, one note on how they are made.
    expect(page.get_by_text("No language model is configured")).to_have_count(1)
    expect(page.locator(".chat-note")).to_have_count(1)
    check_layout(page, shots, "chat-nothing-relevant")

    page.locator(".turn-assistant").first.get_by_role("link", name="Search your memories instead").click()
    expect(page.get_by_label("Search", exact=True)).to_have_value("zzzz qqqq nothing relevant")
    assert page.url == f"{live_url}/search/?q=zzzz+qqqq+nothing+relevant"


def test_with_a_model_the_answer_shows_as_it_is_written_and_is_stored(garden, llm_server, shots, page):
    llm_server.hold = threading.Event()
    expect(page.locator("#chat-mode")).to_contain_text("fake-llm-1")
    ask(page, "When should I water the tomatoes?")
    streaming = page.locator(".turn-streaming")
    # The model holds the rest of its answer: what the page shows came in as it was written.
    expect(streaming.locator(".turn-text")).to_have_text(FAKE_PIECES[0])
    expect(page.get_by_role("button", name="Answering…")).to_be_disabled()
    assert not ChatMessage.objects.exists()
    llm_server.hold.set()
    expect(page.locator(".turn-assistant .turn-text")).to_have_text(FAKE_ANSWER)
    expect(page.locator(".turn-streaming")).to_have_count(0)  # the stored conversation, loaded again
    answer = ChatMessage.objects.get(role="assistant")
    assert (answer.content, answer.method) == (FAKE_ANSWER, "llm")
    expect(page).to_have_url(re.compile(rf"/chat/{answer.session_id}/\?.*#message-{answer.pk}$"))
    expect(page.locator(".used-memory")).to_have_count(len(answer.context_used))

    ask(page, "And how many days between watering?")
    expect(page.locator(".turn-assistant:not(.turn-streaming)")).to_have_count(2)  # stored, and loaded again
    expect(page.locator("#chat-mode")).to_have_count(1)
    expect(page.get_by_text("fake-llm-1")).to_have_count(1)
    check_layout(page, shots, "chat-model")


def test_a_stream_that_breaks_is_shown_as_a_failure_and_not_stored(garden, llm_server, page):
    llm_server.break_after_first = True
    ask(page, "When should I water the tomatoes?")
    failure = page.locator(".turn-failed [role=alert]")
    expect(failure).to_contain_text("The answer failed")
    expect(failure).to_contain_text("Nothing was stored")
    expect(page.get_by_role("button", name="Ask")).to_be_enabled()
    expect(page.get_by_label("Your question")).to_have_value("When should I water the tomatoes?")
    assert not ChatSession.objects.exists()


def test_bad_input_is_shown_next_to_its_field_without_leaving_the_page(garden, llm_server, page):
    page.get_by_label("Memories to use").fill("11")
    ask(page, "When should I water the tomatoes?")
    expect(page.locator("#id_top_k_error")).to_contain_text("from 1 to 10")
    expect(page.locator(".turn")).to_have_count(0)
    assert llm_server.requests == [] and not ChatSession.objects.exists()
