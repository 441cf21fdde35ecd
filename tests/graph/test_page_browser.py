"""The graph page in a real browser (Debian's chromium through Playwright) against the whole ASGI stack
on uvicorn (websockets included): it loads a seeded graph, shows a memory stored through REST without a
reload, opens a node's panel, curates (boost, delete, restore, link, unlink) and catches up after its
socket drops. To refresh the screenshots in the docs:
ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/graph/test_page_browser.py"""
import base64
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from playwright.sync_api import expect, sync_playwright

from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_delete
from config.asgi import application
from tests.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE
from tests.browser import log_in as browser_log_in  # this module's log_in also waits for the graph
from tests.mcp.support import serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BUNDLE = Path(settings.BASE_DIR) / "static" / "graph" / "graph.js"
WAIT_MS = 15000


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    """uvicorn serving config.asgi (HTTP, websockets) plus static files from the finders, as runserver would."""
    if not BUNDLE.exists():
        pytest.fail("static/graph/graph.js is missing: build the graph page with `make frontend` (needs Node 20+)")
    with serving(ASGIStaticFilesHandler(application), lifespan="on") as url:
        yield url


@pytest.fixture
def seeded(user, store):
    """Linked memories of alice's in two sectors."""
    common = {"tags": ["garden"], "category": "home", "session_id": "spring"}
    return [
        store(user, "The tomatoes went into the south bed on 12 April; water them every other evening.", **common),
        store(user, "Slugs ate the lettuce seedlings again: put copper tape around the raised bed.",
              primary_sector="episodic", **common),
        store(user, "Compost from the left bin is ready in May; the right bin was started in March.",
              primary_sector="procedural", **common),
        store(user, "Water the tomatoes in the south bed in the evening, never at noon.", **common),
    ]


@pytest.fixture
def browser_page(live_url, monkeypatch):
    # Playwright's sync API runs an event loop in this thread, so Django would refuse the test's own
    # (synchronous, committed) database reads and writes between browser steps.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=DESKTOP)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield page, errors
        browser.close()
        # The test's own queries ran in Playwright's context, on a connection of their own.
        connections.close_all()


def off_loop(function, *args, **kwargs):
    """Call a service from another thread: its after-commit publish (async_to_sync) cannot run in the
    thread where Playwright's event loop runs."""
    def call():
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


def log_in(page, live_url, username="alice"):
    browser_log_in(page, f"{live_url}/login/?next=/graph/", username)
    expect(page.get_by_role("heading", name="Memory graph")).to_be_visible()


def node_count(page) -> int:
    return page.evaluate("window.engramGraph.graph.order")


def wait_for_nodes(page, count: int) -> None:
    page.wait_for_function(f"window.engramGraph && window.engramGraph.graph.order === {count}", timeout=WAIT_MS)


def click_node(page, memory_id: str, shift: bool = False) -> None:
    """Click a node where sigma draws it (viewport coordinates of its display data). Sigma takes two
    clicks on the canvas within 300 ms for a double click (which zooms), so wait that out first. A frame still
    owed (a node moved by an event) is drawn first: the click aims where the graph is now."""
    page.wait_for_timeout(350)
    point = page.evaluate(
        """id => { const r = window.engramGraph.renderer; r.flush(); const d = r.getNodeDisplayData(id);
                   const p = r.framedGraphToViewport(d); const box = r.getContainer().getBoundingClientRect();
                   return {x: box.left + p.x, y: box.top + p.y}; }""", memory_id)
    if shift:
        page.keyboard.down("Shift")
    page.mouse.click(point["x"], point["y"])
    if shift:
        page.keyboard.up("Shift")


def settle(page) -> None:
    """Stop the layout so that nodes stay where a click aims."""
    page.evaluate("window.engramGraph.layout.stop()")
    page.wait_for_timeout(100)


def open_settled(page, live_url) -> None:
    """Log in to the graph page, wait for the four seeded memories and stop their layout."""
    log_in(page, live_url)
    wait_for_nodes(page, 4)
    settle(page)


def assert_no_sideways_scroll(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the graph page scrolls sideways by {overflow}px at {page.viewport_size['width']}px"


def test_the_page_shows_the_graph_and_a_memory_stored_through_rest_appears_live(
        live_url, user, seeded, make_token, shots, browser_page):
    page, errors = browser_page
    log_in(page, live_url)
    wait_for_nodes(page, 4)
    edges = MemoryLink.objects.filter(source__in=seeded).count()
    assert edges and page.evaluate("window.engramGraph.graph.size") == edges
    expect(page.locator("#graph-count")).to_have_text(f"4 memories · {edges} link{'s' if edges > 1 else ''}")
    expect(page.locator("#graph-live")).to_have_text("Live")
    expect(page.get_by_role("group", name="Legend")).to_contain_text("Clusters")
    # Linked as a star (each new memory to the one it resembles most), the four still make one cluster.
    expect(page.locator("#graph-clusters .legend-count")).to_have_text(["4"])
    assert page.evaluate("!!window.engramGraph.renderer.getCanvases().nodes.getContext('webgl2') || "
                         "!!window.engramGraph.renderer.getCanvases().nodes.getContext('webgl')")

    headers = {"Authorization": f"Bearer {off_loop(make_token, user)}"}
    stored = httpx.post(f"{live_url}/api/v1/memories/", headers=headers, timeout=60,
                        json={"content": "Pick the tomatoes in the south bed when they turn deep red.",
                              "tags": ["garden"], "category": "home", "session_id": "spring"})
    assert stored.status_code == 201, stored.text
    new_id = stored.json()["id"]
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=new_id, timeout=WAIT_MS)
    assert node_count(page) == 5
    new_links = MemoryLink.objects.filter(source_id=new_id).count()
    assert page.evaluate("id => window.engramGraph.graph.outDegree(id)", new_id) == new_links
    assert page.evaluate("id => window.engramGraph.flash.has(id)", new_id), "what changed is highlighted"
    expect(page.locator("#graph-toast")).to_contain_text("Pick the tomatoes")

    page.get_by_role("searchbox", name="Find in the graph").fill("tomatoes")
    expect(page.locator("#graph-search-count")).to_have_text("3 matches")
    settle(page)
    page.wait_for_timeout(600)  # the camera's move to the matches
    page.screenshot(path=str(shots / "graph.png"), full_page=True)
    page.get_by_role("searchbox", name="Find in the graph").fill("")
    assert errors == []


def test_clicking_a_node_opens_the_panel_and_curation_goes_through_the_services(
        live_url, user, seeded, shots, browser_page):
    page, errors = browser_page
    open_settled(page, live_url)
    first, second = seeded[0], seeded[2]
    click_node(page, str(first.pk))
    panel = page.get_by_role("complementary", name="Selected memory")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("The tomatoes went into the south bed")
    expect(panel.get_by_role("meter", name="importance")).to_have_attribute("aria-valuenow", "0.50")
    expect(panel.get_by_role("link", name="Edit")).to_have_attribute("href", f"/memories/{first.pk}/edit/")
    page.screenshot(path=str(shots / "graph-panel.png"), full_page=True)

    panel.get_by_role("button", name="Boost").click()
    expect(page.locator("#graph-toast")).to_have_text("Importance raised by 0.1.")
    expect(panel.get_by_role("meter", name="importance")).to_have_attribute("aria-valuenow", "0.60")
    page.wait_for_function("id => window.engramGraph.graph.getNodeAttribute(id, 'importance') === 0.6",
                           arg=str(first.pk), timeout=WAIT_MS)
    first.refresh_from_db()
    assert first.importance == pytest.approx(0.6)

    # Link the first memory to the compost one (not linked yet), then unlink them.
    MemoryLink.objects.filter(source=first, target=second).delete()
    MemoryLink.objects.filter(source=second, target=first).delete()
    page.evaluate("window.engramGraph.load()")
    wait_for_nodes(page, 4)
    settle(page)
    click_node(page, str(first.pk))
    expect(panel).to_contain_text("The tomatoes went into the south bed")
    panel.get_by_role("button", name="Link to…").click()
    expect(panel).to_contain_text("Now click a second node")
    click_node(page, str(second.pk))
    panel.get_by_label("Type").select_option("causal")
    panel.get_by_role("button", name="Link", exact=True).click()
    expect(page.locator("#graph-toast")).to_have_text("Linked.")
    page.wait_for_function("([a, b]) => window.engramGraph.graph.hasEdge(a, b)", arg=[str(first.pk), str(second.pk)],
                           timeout=WAIT_MS)
    link = MemoryLink.objects.get(source=first, target=second)
    assert (link.link_type, link.weight) == ("causal", 0.8)
    click_node(page, str(second.pk), shift=True)
    panel.get_by_role("button", name="Unlink").click()
    expect(page.locator("#graph-toast")).to_have_text("Unlinked.")
    page.wait_for_function("([a, b]) => !window.engramGraph.graph.hasEdge(a, b)", arg=[str(first.pk), str(second.pk)],
                           timeout=WAIT_MS)
    assert not MemoryLink.objects.filter(source=first, target=second).exists()

    panel.get_by_role("button", name="Delete").click()
    expect(panel.get_by_role("heading", name="Deleted memory")).to_be_visible()
    page.wait_for_function("id => !window.engramGraph.graph.hasNode(id)", arg=str(first.pk), timeout=WAIT_MS)
    assert Memory.objects.get(pk=first.pk).deleted_at is not None
    panel.get_by_role("button", name="Restore").click()
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=str(first.pk), timeout=WAIT_MS)
    expect(panel.get_by_role("heading", name="Memory", exact=True)).to_be_visible()
    assert Memory.objects.get(pk=first.pk).deleted_at is None

    # A phone opens the page with the filters folded away and the panel under the graph.
    page.set_viewport_size(PHONE)
    page.reload()
    wait_for_nodes(page, 4)
    expect(page.get_by_role("button", name="Apply")).to_be_hidden()
    settle(page)
    click_node(page, str(first.pk))
    expect(panel).to_contain_text("The tomatoes went into the south bed")
    page.mouse.move(1, 1)
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(shots / "graph-phone.png"), full_page=True)
    assert errors == []


def test_a_dropped_socket_catches_up_on_what_it_missed(live_url, user, other_user, seeded, store, browser_page):
    page, errors = browser_page
    log_in(page, live_url)
    wait_for_nodes(page, 4)
    page.wait_for_function("window.engramGraph.live.connects === 1", timeout=WAIT_MS)
    # Close the socket and store while it is away: the reconnect subscribes with `since` and replays.
    page.evaluate("window.engramGraph.live.drop()")
    missed = off_loop(store, user, "The greenhouse door sticks in wet weather; plane the bottom edge.")
    page.wait_for_function("window.engramGraph.live.connects === 2", timeout=WAIT_MS)
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=str(missed.pk), timeout=WAIT_MS)
    assert node_count(page) == 5
    # Bob's memory, stored before one of alice's, never reaches alice's page.
    bobs = off_loop(store, other_user, "Bob's private note: the greenhouse key is under the mat.")
    after = off_loop(store, user, "Sow the beans after the last frost.")
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=str(after.pk), timeout=WAIT_MS)
    assert not page.evaluate("id => window.engramGraph.graph.hasNode(id)", str(bobs.pk))
    assert "under the mat" not in page.content()
    assert node_count(page) == 6
    assert errors == []


def test_filters_reload_the_snapshot_and_live_events_respect_them(live_url, user, seeded, store, browser_page):
    page, errors = browser_page
    log_in(page, live_url)
    wait_for_nodes(page, 4)
    page.get_by_label("Sector").select_option("episodic")
    page.get_by_role("button", name="Apply").click()
    wait_for_nodes(page, 1)
    assert "sector=episodic" in page.url
    off_loop(store, user, "A semantic fact that the episodic filter hides.")
    shown = off_loop(store, user, "Yesterday the hose burst at the tap.", primary_sector="episodic")
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=str(shown.pk), timeout=WAIT_MS)
    assert node_count(page) == 2
    # A cap shows "N of M", newest first.
    page.goto(f"{live_url}/graph/?limit=2")
    wait_for_nodes(page, 2)
    expect(page.locator("#graph-count")).to_contain_text("Showing 2 of 6 memories (newest first)")
    assert page.evaluate("id => window.engramGraph.graph.hasNode(id)", str(shown.pk))
    # M stays right when a memory the page does not show goes: the page asks for the total again.
    off_loop(memory_delete, actor=user, memory_id=seeded[0].pk)
    expect(page.locator("#graph-count")).to_contain_text("Showing 2 of 5 memories (newest first)")
    page.get_by_label("Created from").fill("2026-05-02")
    page.get_by_label("Created to").fill("2026-05-01")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#graph-error")).to_contain_text("date_to must not be before date_from")
    assert errors == []


# Decodes two PNG screenshots in the page and returns the share of pixels that differ by more than a
# little in any channel (anti-aliasing and resampling stay under it).
PIXELS_DIFFER = """async ([a, b]) => {
  const pixels = async (png) => {
    const image = await createImageBitmap(await (await fetch(`data:image/png;base64,${png}`)).blob());
    const canvas = new OffscreenCanvas(image.width, image.height);
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, image.width, image.height).data;
  };
  const [x, y] = [await pixels(a), await pixels(b)];
  let differ = 0;
  for (let i = 0; i < x.length; i += 4) {
    if (Math.abs(x[i] - y[i]) > 60 || Math.abs(x[i + 1] - y[i + 1]) > 60 || Math.abs(x[i + 2] - y[i + 2]) > 60) differ += 1;
  }
  return differ / (x.length / 4);
}"""

# The renders counted so far, read two animation frames later: a render already scheduled has run by then.
AFTER_TWO_FRAMES = ("() => new Promise((done) => "
                    "requestAnimationFrame(() => requestAnimationFrame(() => done(window.__renders))))")


def glide_until_told(page) -> None:
    """Glide on every camera change and never redraw by itself; the frame owed so far is drawn first."""
    page.evaluate("() => { const r = window.engramGraph.renderer; r.setFrameMode('glide'); r.settleMs = 1e9; }")
    page.evaluate("window.engramGraph.renderer.flush()")


def canvas_png(page) -> str:
    return base64.b64encode(page.locator("#graph-canvas").screenshot()).decode()


def drawn_layers_transform(page) -> list:
    return page.evaluate("""Object.entries(window.engramGraph.renderer.getCanvases())
                              .map(([id, canvas]) => [id, canvas.style.transform])""")


def test_a_slow_renderer_pans_by_moving_the_drawn_frame_then_redraws(live_url, user, seeded, browser_page):
    page, errors = browser_page
    open_settled(page, live_url)
    # The page measured what a frame costs and chose its mode from that.
    measured = page.evaluate("[window.engramGraph.frameCost, document.getElementById('graph-canvas').dataset.frames]")
    assert measured[0] > 0 and measured[1] == ("glide" if measured[0] > 40 else "redraw")
    glide_until_told(page)
    page.wait_for_timeout(100)
    before = canvas_png(page)

    # A pan: no frame is drawn, the drawn layers move (the mouse layer stays where pointers are read).
    renders = page.evaluate("""() => { const r = window.engramGraph.renderer; window.__renders = 0;
        r.on('afterRender', () => { window.__renders += 1; });
        const c = r.getCamera().getState(); r.getCamera().setState({ ...c, x: c.x + 0.15, y: c.y - 0.1 });
        return new Promise((done) => setTimeout(() => done(window.__renders), 300)); }""")
    assert renders == 0
    layers = dict(drawn_layers_transform(page))
    assert layers.pop("mouse") == ""
    assert all(value.startswith("matrix(") for value in layers.values()), layers
    moved = canvas_png(page)

    page.evaluate("window.engramGraph.renderer.flush()")
    assert all(value == "" for _, value in drawn_layers_transform(page))
    page.wait_for_timeout(100)
    redrawn = canvas_png(page)
    # The moved frame is the redrawn one (but for what was outside the old frame); the frame before the
    # pan is not, so the comparison can tell.
    unmoved = page.evaluate(PIXELS_DIFFER, [before, redrawn])
    assert unmoved > 0.005
    assert page.evaluate(PIXELS_DIFFER, [moved, redrawn]) < unmoved / 5

    # A fast renderer (or "redraw" forced) draws every camera change, as sigma does: once, whenever the
    # (maybe slow) next frame comes, and then nothing more is owed.
    page.evaluate("window.engramGraph.renderer.setFrameMode('redraw')")
    page.evaluate("""() => { const r = window.engramGraph.renderer; window.__renders = 0;
        const c = r.getCamera().getState(); r.getCamera().setState({ ...c, x: c.x - 0.15 }); }""")
    page.wait_for_function("""() => { const r = window.engramGraph.renderer;
        return window.__renders > 0 && !r.renderFrame && !r.paceTimer && !r.settleTimer; }""", timeout=WAIT_MS)
    assert page.evaluate(AFTER_TWO_FRAMES) == 1
    assert all(value == "" for _, value in drawn_layers_transform(page))
    assert errors == []


def test_a_gliding_zoom_puts_every_node_where_the_camera_would_draw_it(live_url, user, seeded, browser_page):
    page, errors = browser_page
    open_settled(page, live_url)
    glide_until_told(page)
    misplaced = page.evaluate("""() => {
        const r = window.engramGraph.renderer;
        const drawn = {};
        r.getGraph().forEachNode((id) => { drawn[id] = r.framedGraphToViewport(r.getNodeDisplayData(id)); });
        const c = r.getCamera().getState();
        r.getCamera().setState({ x: c.x - 0.1, y: c.y + 0.05, ratio: c.ratio * 0.6, angle: 0.3 });
        const m = new DOMMatrix(r.getCanvases().nodes.style.transform);
        const camera = r.getCamera().getState();
        let worst = 0;
        for (const [id, p] of Object.entries(drawn)) {
          const now = r.framedGraphToViewport(r.getNodeDisplayData(id), { cameraState: camera });
          const glided = m.transformPoint(new DOMPoint(p.x, p.y));
          worst = Math.max(worst, Math.hypot(glided.x - now.x, glided.y - now.y));
        }
        return worst; }""")
    assert misplaced < 0.5
    assert errors == []


def test_a_click_right_after_a_gliding_pan_picks_the_node_under_the_pointer(live_url, user, seeded, browser_page):
    page, errors = browser_page
    open_settled(page, live_url)
    glide_until_told(page)
    target = str(seeded[1].pk)
    # Centre the camera on the node (it was drawn elsewhere), then click it there before any redraw:
    # the press draws the owed frame first, so sigma's picking sees the current camera.
    point = page.evaluate("""id => {
        const r = window.engramGraph.renderer;
        const d = r.getNodeDisplayData(id);
        r.getCamera().setState({ ...r.getCamera().getState(), x: d.x, y: d.y });
        const p = r.framedGraphToViewport(r.getNodeDisplayData(id), { cameraState: r.getCamera().getState() });
        const box = r.getContainer().getBoundingClientRect();
        return { x: box.left + p.x, y: box.top + p.y, stale: r.getNodeAtPosition(p) }; }""", target)
    assert point["stale"] != target, "before the redraw, picking still sees the old frame"
    page.wait_for_timeout(350)
    page.mouse.click(point["x"], point["y"])
    panel = page.get_by_role("complementary", name="Selected memory")
    expect(panel).to_contain_text("Slugs ate the lettuce seedlings")
    assert page.evaluate("window.engramGraph.selected") == target
    assert errors == []
