"""The dashboard in a real browser (Debian's chromium through Playwright) against a live server:
log in, store a memory with the form, search it, open it, make a token; no page may scroll
sideways on a phone. Each page is screenshot at desktop and phone widths; to refresh the ones in
the docs: ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/dashboard/test_browser.py"""
import pytest
from playwright.sync_api import expect, sync_playwright

from apps.accounts.models import ApiToken
from apps.accounts.services import token_authenticate
from apps.memories.models import Memory
from tests.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PASSWORD

pytestmark = pytest.mark.slow


@pytest.fixture
def seeded(user, store):
    """A few related memories, so that the pages have links, tags and bars to show."""
    related = {"tags": ["garden"], "category": "home", "session_id": "spring"}
    store(user, "The tomatoes went into the south bed on 12 April; water them every other evening.", **related)
    store(user, "Slugs ate the lettuce seedlings again: put copper tape around the raised bed.",
          primary_sector="episodic", **related)
    store(user, "Compost from the left bin is ready in May; the right bin was started in March.",
          primary_sector="procedural", **related)


def test_store_search_open_and_make_a_token_in_a_browser(live_server, user, seeded, shoot):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=DESKTOP)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
        page = context.new_page()

        page.goto(live_server.url + "/")
        expect(page).to_have_url(f"{live_server.url}/login/?next=/")
        assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui"), "CSS not served"
        shoot(page, "login")
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Hello, alice")).to_be_visible()

        page.get_by_role("link", name="Store a memory").first.click()
        page.get_by_label("Content").fill("Feed the tomatoes in the south bed every week once they flower, and keep watering them.")
        page.get_by_label("Importance").fill("7")
        page.get_by_role("button", name="Store").click()
        expect(page.locator(".field-invalid")).to_have_count(1)
        expect(page.locator("#id_importance_error")).to_contain_text("between 0 and 1")
        shoot(page, "store-error")
        page.get_by_label("Importance").fill("0.7")
        page.get_by_label("Primary sector").select_option("procedural")
        page.get_by_label("Tags").fill("garden, tomatoes")
        page.get_by_label("Category").fill("home")
        page.get_by_role("button", name="Store").click()
        expect(page.get_by_text("Memory stored")).to_be_visible()
        expect(page.get_by_text("every week once they flower")).to_be_visible()

        page.get_by_role("link", name="Home", exact=True).click()
        expect(page.locator(".stat").first).to_contain_text("4")
        shoot(page, "home")

        page.get_by_role("searchbox", name="Search memories").fill("feed tomatoes")
        page.get_by_role("button", name="Search").click()
        first_result = page.locator(".result").first
        expect(first_result).to_contain_text("every week once they flower")
        expect(first_result.locator("b")).to_have_text(["Feed", "tomatoes"])
        shoot(page, "search")

        first_result.locator(".result-snippet").click()
        expect(page.get_by_role("heading", name="Memory", exact=True)).to_be_visible()
        expect(page.get_by_role("heading", name="Links")).to_be_visible()
        expect(page.locator(".link-list li").first).to_contain_text("The tomatoes went into the south bed")
        shoot(page, "detail")

        page.get_by_role("link", name="Tokens").click()
        page.get_by_label("Name").fill("garden agent")
        page.get_by_role("button", name="Create token").click()
        raw = page.get_by_label("Your token").input_value()
        assert raw.startswith("eng_")
        page.locator(".copy-row .copy-button").click()
        expect(page.locator(".copy-row .copy-button")).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == raw
        shoot(page, "token-created")
        page.get_by_role("link", name="Back to tokens").click()
        expect(page.get_by_role("cell", name="garden agent")).to_be_visible()
        assert raw not in page.content()
        shoot(page, "tokens")

        page.get_by_role("button", name="Log out").click()
        expect(page.get_by_role("heading", name="Log in to Engram")).to_be_visible()
        browser.close()

    stored = Memory.objects.get(content__startswith="Feed the tomatoes")
    assert stored.primary_sector == "procedural" and stored.tags == ["garden", "tomatoes"]
    assert stored.access_count == 1, "searching from the dashboard counts as an access"
    assert token_authenticate(raw=raw) == ApiToken.objects.get(name="garden agent")
