"""The dashboard on a phone and from the keyboard (issue 21, items 8 and 9), in a real browser (Debian's
chromium through Playwright) against the whole ASGI stack on uvicorn, websockets included (the graph page
needs them): the folding main menu, the Cognition tabs as one sideways strip, the graph's panel as a bottom
sheet within the viewport."""
import pytest
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from playwright.sync_api import expect, sync_playwright

from config.asgi import application
from tests.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE, assert_no_sideways_scroll, log_in
from tests.mcp.support import serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WAIT_MS = 15000
LAPTOPS = ({"width": 1440, "height": 900}, {"width": 1280, "height": 800})


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    if not (settings.BASE_DIR / "static" / "graph" / "graph.js").exists():
        pytest.fail("static/graph/graph.js is missing: build the graph page with `make frontend` (needs Node 20+)")
    with serving(ASGIStaticFilesHandler(application), lifespan="on") as url:
        yield url


@pytest.fixture
def seeded(user, store):
    common = {"tags": ["garden"], "category": "home"}
    return [
        store(user, "The tomatoes went into the south bed on 12 April; water them every other evening.", **common),
        store(user, "Slugs ate the lettuce seedlings again: put copper tape around the raised bed.",
              primary_sector="episodic", **common),
        store(user, "Compost from the left bin is ready in May; the right bin was started in March.",
              primary_sector="procedural", **common),
    ]


@pytest.fixture
def browser(live_url, monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own database reads run beside it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        connections.close_all()


def open_page(browser, viewport, errors, **context):
    page = browser.new_context(viewport=viewport, **context).new_page()
    page.set_default_timeout(WAIT_MS)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page


def box(locator) -> dict:
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                            "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; }")


def test_the_phone_menu_folds_the_navigation_and_opens_and_closes(live_url, user, browser):
    errors = []
    page = open_page(browser, PHONE, errors)
    log_in(page, f"{live_url}/login/?next=/")
    expect(page.get_by_role("heading", name="Hello, alice")).to_be_visible()
    nav = page.get_by_role("navigation", name="Main")
    toggle = nav.get_by_role("button", name="Menu")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(nav.get_by_role("link", name="Memories")).to_be_hidden()
    expect(nav.get_by_role("button", name="Log out")).to_be_hidden()
    assert box(page.locator(".topbar"))["height"] < 70, "the folded bar is one row"
    assert_no_sideways_scroll(page, "home, menu folded")

    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(nav.get_by_role("link", name="Memories")).to_be_visible()
    expect(nav.get_by_role("button", name="Log out")).to_be_visible()
    assert_no_sideways_scroll(page, "home, menu open")
    for link in nav.get_by_role("link").all():
        edges = box(link)
        assert edges["left"] >= 0 and edges["right"] <= PHONE["width"], link.text_content()
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_be_focused()
    expect(nav.get_by_role("link", name="Memories")).to_be_hidden()

    toggle.click()
    page.locator("main h1").click()  # a tap outside the menu folds it
    expect(toggle).to_have_attribute("aria-expanded", "false")

    toggle.click()
    nav.get_by_role("link", name="Memories").click()
    expect(page).to_have_url(f"{live_url}/memories/")
    expect(nav.get_by_role("button", name="Menu")).to_have_attribute("aria-expanded", "false")
    expect(nav.get_by_role("link", name="Graph")).to_be_hidden()
    page.go_back()
    expect(page.get_by_role("heading", name="Hello, alice")).to_be_visible()
    expect(nav.get_by_role("button", name="Menu")).to_have_attribute("aria-expanded", "false")

    # A laptop shows the links and no button.
    page.set_viewport_size(DESKTOP)
    expect(nav.get_by_role("button", name="Menu")).to_be_hidden()
    expect(nav.get_by_role("link", name="Memories")).to_be_visible()
    assert errors == []


def test_without_javascript_the_phone_menu_is_a_plain_list(live_url, user, browser):
    errors = []
    page = open_page(browser, PHONE, errors, java_script_enabled=False)
    log_in(page, f"{live_url}/login/?next=/")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Memories")).to_be_visible()
    expect(nav.get_by_role("button", name="Log out")).to_be_visible()
    toggle = page.locator(".nav-toggle")
    expect(toggle).to_be_attached()
    expect(toggle).to_be_hidden()  # a button that could not open anything
    assert_no_sideways_scroll(page, "home without JavaScript")


def test_the_cognition_tabs_are_one_strip_on_a_phone_and_break_between_groups_on_a_laptop(
        live_url, user, browser):
    errors = []
    page = open_page(browser, PHONE, errors)
    log_in(page, f"{live_url}/login/?next=/cognition/benchmarks/")
    tabs = page.get_by_role("navigation", name="Cognition sections")
    links = tabs.get_by_role("link")
    expect(links).to_have_count(11)
    tops = {round(box(link)["top"]) for link in links.all()}
    assert len(tops) == 1, f"the tabs take {len(tops)} rows on a phone"
    assert_no_sideways_scroll(page, "cognition benchmarks")
    current = box(tabs.get_by_role("link", name="Benchmarks"))
    assert current["left"] >= 0 and current["right"] <= PHONE["width"], "the current tab is scrolled into view"

    for viewport in LAPTOPS:
        page.set_viewport_size(viewport)
        for group in tabs.get_by_role("group").all():
            rows = {round(box(link)["top"]) for link in group.get_by_role("link").all()}
            assert len(rows) == 1, f"{group.get_attribute('aria-labelledby')} breaks inside at {viewport['width']}px"
        assert box(tabs)["height"] < 110, f"the tabs take more than two rows at {viewport['width']}px"
    assert errors == []


def test_the_graph_panel_is_a_bottom_sheet_within_a_phones_viewport(live_url, user, seeded, browser):
    errors = []
    page = open_page(browser, PHONE, errors)
    log_in(page, f"{live_url}/login/?next=/graph/")
    page.wait_for_function("window.engramGraph && window.engramGraph.graph.order === 3", timeout=WAIT_MS)
    page.evaluate("window.engramGraph.layout.stop()")
    page.evaluate("id => window.engramGraph.select(id)", str(seeded[1].pk))
    panel = page.get_by_role("complementary", name="Selected memory")
    expect(panel).to_contain_text("copper tape")
    sheet = box(panel)
    assert sheet["top"] >= 0 and sheet["bottom"] <= PHONE["height"] + 0.5, f"the panel is off-screen: {sheet}"
    assert sheet["bottom"] >= PHONE["height"] - 0.5, "the sheet sits on the bottom edge"
    assert sheet["height"] <= PHONE["height"] * 0.6, "the graph stays visible above the sheet"
    close = panel.get_by_role("button", name="Close the panel")
    closing = box(close)
    assert 0 <= closing["top"] and closing["bottom"] <= PHONE["height"]
    page.mouse.wheel(0, 600)  # the sheet stays put while the page scrolls under it
    assert box(panel)["bottom"] <= PHONE["height"] + 0.5
    assert_no_sideways_scroll(page, "graph with the panel open")
    close.click()
    expect(panel).to_be_hidden()
    assert errors == []
