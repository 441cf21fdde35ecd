"""The dashboard on a phone and from the keyboard (issue 21, items 8 and 9), in a real browser (Debian's
chromium through Playwright) against the whole ASGI stack on uvicorn, websockets included (the graph page
needs them): the folding main menu, the Cognition tabs as one sideways strip, the graph's panel as a bottom
sheet within the viewport; the command palette (Ctrl-K), "/" and "?", the focus ring on buttons, the memory
page's title."""
import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from playwright.sync_api import expect, sync_playwright

from apps.projects.services.projects import project_create
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
    expect(links).to_have_count(12)
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


def contrast(first: str, second: str) -> float:
    """WCAG contrast ratio of two CSS rgb()/rgba() colours (alpha ignored: the ring is opaque)."""
    def luminance(colour):
        channels = [int(value) / 255 for value in re.findall(r"[\d.]+", colour)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_ctrl_k_opens_the_palette_and_the_words_of_a_memory_open_it(live_url, user, seeded, browser):
    errors = []
    project = project_create(actor=user, name="Raised bed rebuild")
    page = open_page(browser, DESKTOP, errors)
    log_in(page, f"{live_url}/login/?next=/")
    expect(page.get_by_role("heading", name="Hello, alice")).to_be_visible()
    browse = page.get_by_role("link", name="Browse all")
    browse.focus()

    page.keyboard.press("Control+k")
    palette = page.get_by_role("dialog", name="Command palette")
    expect(palette).to_be_visible()
    expect(palette).to_have_attribute("aria-modal", "true")
    combobox = palette.get_by_role("combobox")
    expect(combobox).to_be_focused()
    options = palette.get_by_role("option")
    expect(options.first).to_have_text("HomePage")  # every page before anything is typed
    for _ in range(4):  # focus stays inside the dialog
        page.keyboard.press("Tab")
        assert palette.evaluate("(dialog) => dialog.contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(palette).to_be_hidden()
    expect(browse).to_be_focused()  # back where it was

    # Arrow keys choose, Enter opens: a Cognition page by its name.
    page.keyboard.press("Control+k")
    combobox.fill("neuromod")
    expect(options.first).to_contain_text("Cognition › Neuromodulation")
    expect(options.last).to_contain_text("Search for “neuromod”")
    page.keyboard.press("ArrowDown")
    expect(options.last).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowUp")
    expect(options.first).to_have_attribute("aria-selected", "true")
    assert combobox.get_attribute("aria-activedescendant") == options.first.get_attribute("id")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_url}{reverse('dashboard:cognition-neuromodulation')}")

    # A project by its name, then a memory by its words: typed and Enter at once opens the best match.
    page.keyboard.press("Control+k")
    combobox.fill("raised bed rebuild")
    expect(options.first).to_have_text("Raised bed rebuildProject")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+k")
    combobox.type("copper tape slugs")
    page.keyboard.press("Enter")
    slugs = seeded[1]
    expect(page).to_have_url(f"{live_url}{reverse('dashboard:memory-detail', args=[slugs.pk])}")
    # Each memory's page has its own title: the start of its content.
    assert page.title() == f"{slugs.content[:59]}… · Memory · Engram"
    assert project.pk

    # "Search for ..." runs the dashboard's search.
    page.keyboard.press("Control+k")
    combobox.fill("evening watering")
    expect(options.first).to_contain_text("water them every other evening")
    page.keyboard.press("ArrowUp")  # from the first suggestion up to the last: the search
    expect(options.last).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_url}/search/?q=evening+watering")
    expect(page.locator(".result").first).to_contain_text("water them every other evening")
    assert errors == []


def test_slash_question_mark_the_shortcuts_help_and_the_focus_ring(live_url, user, seeded, browser):
    errors = []
    page = open_page(browser, DESKTOP, errors)
    log_in(page, f"{live_url}/login/?next=/")
    expect(page.get_by_role("heading", name="Hello, alice")).to_be_visible()

    page.keyboard.press("/")
    expect(page.get_by_role("searchbox", name="Search memories")).to_be_focused()
    page.keyboard.type("?")  # typing in a field types
    expect(page.get_by_role("searchbox", name="Search memories")).to_have_value("?")
    page.get_by_role("heading", name="Hello, alice").click()

    page.keyboard.press("?")
    shortcuts = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(shortcuts).to_be_visible()
    expect(shortcuts).to_contain_text("Open the command palette")
    page.keyboard.press("Escape")
    expect(shortcuts).to_be_hidden()
    page.get_by_role("contentinfo").get_by_role("link", name="Keyboard shortcuts").click()
    expect(shortcuts).to_be_visible()
    shortcuts.get_by_role("button", name="Close").click()
    expect(shortcuts).to_be_hidden()
    expect(page).to_have_url(f"{live_url}/")

    # The primary button's focus ring: solid, 2 px or more, 3:1 against the page at least.
    store_button = page.get_by_role("link", name="Store a memory")
    store_button.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focused from the keyboard: :focus-visible
    expect(store_button).to_be_focused()
    ring = store_button.evaluate("e => { const s = getComputedStyle(e); "
                                 "return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor]; }")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert ring[0] == "solid" and ring[1] >= 2, ring
    assert contrast(ring[2], background) >= 3, (ring, background)

    # On a phone the top bar's search button opens the same palette.
    page.set_viewport_size(PHONE)
    page.get_by_role("button", name="Jump to…").click()
    expect(page.get_by_role("dialog", name="Command palette")).to_be_visible()
    assert_no_sideways_scroll(page, "home with the palette open")
    assert errors == []
