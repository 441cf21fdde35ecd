"""The cube and chat pages in a real browser (Debian's chromium through Playwright) against a live server:
register a cube with the form (a bad id first), share it with bob, store memories in it, then ask the chat a
question and follow the memory the answer cites to its page. No page may scroll sideways on a phone. To refresh
the screenshots in the docs:
ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/dashboard/test_cubes_chat_browser.py"""
import pytest
from playwright.sync_api import expect, sync_playwright

from apps.cubes.models import CubeMembership
from apps.cubes.services import cube_register, cube_share
from apps.memories.models import Memory
from tests.browser import log_in, new_page

pytestmark = pytest.mark.slow

TOMATOES = "The tomatoes went into the south bed on 12 April; water them every other evening."


@pytest.fixture
def seeded(user, other_user, store, settings):
    """A cube bob shares with alice, memories in her personal cube, and no language model: the chat answers
    extractively, as it does until one is configured."""
    settings.ENGRAM_LLM_BASE_URL = None
    cube_register(actor=other_user, cube_id="bob-recipes", name="Bob's recipes")
    store(other_user, "Tomato soup: roast the tomatoes first, then blend with basil.", cube_id="bob-recipes")
    cube_share(actor=other_user, cube_id="bob-recipes", user="alice", role="reader")
    store(user, "Slugs ate the lettuce seedlings again: put copper tape around the raised bed.")


def test_create_and_share_a_cube_then_ask_the_chat_in_a_browser(live_server, seeded, shoot):
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, live_server.url + "/cubes/")
        expect(page.get_by_role("heading", name="Cubes", exact=True)).to_be_visible()
        expect(page.get_by_role("link", name="Bob's recipes")).to_be_visible()

        new_cube = page.locator("#new-cube")
        new_cube.get_by_label("Id").fill("my garden")
        new_cube.get_by_label("Name").fill("Garden notes")
        new_cube.get_by_role("button", name="Register cube").click()
        expect(page.locator("#id_cube_id_error")).to_contain_text("may hold only letters, digits")
        new_cube.get_by_label("Id").fill("garden")
        new_cube.get_by_label("Description").fill("What grows where, and when to water it")
        new_cube.get_by_role("button", name="Register cube").click()
        expect(page.get_by_text("Cube “Garden notes” registered.")).to_be_visible()
        expect(page.get_by_role("heading", name="Garden notes")).to_be_visible()

        share = page.locator("#share-form")
        share.get_by_label("Username").fill("zed")
        share.get_by_role("button", name="Share").click()
        expect(page.locator("#id_user_error")).to_contain_text("User 'zed' not found.")
        share.get_by_label("Username").fill("bob")
        share.get_by_label("Role").select_option("writer")
        share.get_by_role("button", name="Share").click()
        expect(page.get_by_text("Cube shared with bob as writer.")).to_be_visible()
        expect(page.locator("#members")).to_contain_text("bob")

        for content in (TOMATOES, "Compost from the left bin is ready in May; turn it every week."):
            page.goto(live_server.url + "/memories/new/")
            page.get_by_label("Content").fill(content)
            page.get_by_label("Cube").select_option("garden")
            page.get_by_role("button", name="Store").click()
            expect(page.get_by_text("Memory stored")).to_be_visible()
        page.goto(live_server.url + "/cubes/garden/")
        expect(page.locator("#statistics .stat").first).to_contain_text("2")
        shoot(page, "cubes-detail")

        page.get_by_role("link", name="Cubes", exact=True).first.click()
        expect(page.get_by_role("link", name="Garden notes")).to_be_visible()
        shoot(page, "cubes-list")

        page.get_by_role("link", name="Garden notes").click()
        page.get_by_role("link", name="Ask in chat").click()
        expect(page.get_by_label("Garden notes")).to_be_checked()
        page.get_by_label("Your question").fill("When should I water the tomatoes?")
        page.get_by_role("button", name="Ask").click()
        answer = page.locator(".turn-assistant").last
        expect(answer).to_contain_text("From your memories:")
        expect(page.locator("#chat-mode")).to_contain_text("No language model is configured")
        cited = answer.locator(".used-memory a.memory-link").first
        expect(cited).to_contain_text("The tomatoes went into the south bed")
        expect(page.locator(".session-list")).to_contain_text("When should I water the tomatoes?")
        shoot(page, "chat")

        cited.click()
        expect(page.get_by_text(TOMATOES)).to_be_visible()
        page.context.browser.close()

    assert CubeMembership.objects.get(cube_id="garden", user__username="bob").role == "writer"
    tomatoes = Memory.objects.get(content=TOMATOES)
    assert page.url.endswith(f"/memories/{tomatoes.pk}/")
