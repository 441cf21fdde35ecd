"""A memory's local graph in a real browser (Debian's chromium through Playwright): on a chain a -> b -> c, a's page
draws a and b at depth 1 and c too at depth 2, the slider (by keyboard) changes it, clicking b opens b's page, and a
memory with no links says why instead. At 1440x900 and 390x844; to refresh the screenshots in the docs:
ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/memories/test_local_graph_browser.py"""
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect, sync_playwright

from apps.memories.models import MemoryLink
from apps.memories.services import memory_store_many
from tests.browser import CHROMIUM, CHROMIUM_ARGS, PHONE, assert_no_sideways_scroll, log_in

pytestmark = pytest.mark.slow

BUNDLE = Path(settings.BASE_DIR) / "static" / "graph" / "local.js"
WIDE = {"width": 1440, "height": 900}
WAIT_MS = 15000


@pytest.fixture
def chain(user):
    """a -> b -> c (semantic, then causal) and d with no link, stored without the automatic links."""
    if not BUNDLE.exists():
        pytest.fail("static/graph/local.js is missing: build it with `make frontend` (needs Node 20+)")
    a, b, c, d = (str(result.memory.pk) for result in memory_store_many(actor=user, link=False, items=[
        {"content": "The lighthouse lamp needs a new bulb before winter.", "primary_sector": "procedural"},
        {"content": "Bulbs for the lamp come from the harbour chandlery.", "primary_sector": "semantic"},
        {"content": "The chandlery closes for the season in October, so the order is late.",
         "primary_sector": "episodic"},
        {"content": "My sister's birthday is on the ninth of March.", "primary_sector": "episodic"},
    ]))
    MemoryLink.objects.create(source_id=a, target_id=b, weight=0.8, link_type="semantic")
    MemoryLink.objects.create(source_id=c, target_id=b, weight=0.6, link_type="causal")
    return a, b, c, d


@pytest.fixture
def page(live_server):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=WIDE).new_page()
        page.set_default_timeout(WAIT_MS)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield page
        browser.close()
        assert not errors, errors


def drawn(page) -> list[str]:
    return sorted(page.evaluate("window.engramLocalGraph.graph.nodes()"))


def wait_for_load(page, loads: int) -> None:
    page.wait_for_function(f"window.engramLocalGraph && window.engramLocalGraph.loads >= {loads}")


def click_node(page, memory_id: str) -> None:
    """Click a node where sigma draws it; sigma counts two clicks within 300 ms as a double click (a zoom)."""
    page.locator("#local-canvas").scroll_into_view_if_needed()
    page.wait_for_timeout(350)
    point = page.evaluate(
        """id => { const r = window.engramLocalGraph.renderer; const d = r.getNodeDisplayData(id);
                   const p = r.framedGraphToViewport(d); const box = r.getContainer().getBoundingClientRect();
                   return {x: box.left + p.x, y: box.top + p.y}; }""", memory_id)
    page.mouse.click(point["x"], point["y"])


def screenshots(page, shots: Path, name: str) -> None:
    for viewport, suffix in ((WIDE, ""), (PHONE, "-phone")):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(200)  # sigma redraws at the new size
        assert_no_sideways_scroll(page, name)
        page.screenshot(path=str(shots / f"{name}{suffix}.png"), full_page=True)
    page.set_viewport_size(WIDE)


def test_the_local_graph_grows_with_the_depth_and_opens_a_neighbour(live_server, user, chain, page, shots):
    a, b, c, _ = chain
    log_in(page, f"{live_server.url}/memories/{a}/")
    wait_for_load(page, 1)
    assert drawn(page) == sorted([a, b])
    depth = page.get_by_label("Depth")
    expect(depth).to_have_value("1")
    expect(page.locator("#local-depth-value")).to_have_text("1 link away")
    expect(page.locator("#local-count")).to_have_text("1 linked memory · 1 link")
    legend = page.get_by_role("group", name="Legend")
    expect(legend).to_contain_text("This memory")
    expect(legend).to_contain_text("Semantic")
    expect(legend).not_to_contain_text("Causal")

    depth.focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#local-depth-value")).to_have_text("up to 2 links away")
    expect(depth).to_have_attribute("aria-valuetext", "up to 2 links away")
    wait_for_load(page, 2)
    assert drawn(page) == sorted([a, b, c])
    expect(page.locator("#local-count")).to_have_text("2 linked memories · 2 links")
    expect(legend).to_contain_text("Causal")
    assert page.evaluate(f"window.engramLocalGraph.graph.getNodeAttribute('{c}', 'depth')") == 2
    # The memory is the centre, drawn larger than the rest and labelled.
    nodes = page.evaluate("Object.fromEntries(window.engramLocalGraph.graph.mapNodes((id, n) => [id, n]))")
    assert nodes[a]["size"] > max(nodes[b]["size"], nodes[c]["size"]) and nodes[a]["forceLabel"]
    assert nodes[a]["label"].startswith("This memory") and nodes[a]["color"] != nodes[b]["color"]
    screenshots(page, shots, "memory-local-graph")

    page.keyboard.press("ArrowLeft")
    wait_for_load(page, 3)
    assert drawn(page) == sorted([a, b])

    click_node(page, b)
    page.wait_for_url(f"{live_server.url}/memories/{b}/")
    wait_for_load(page, 1)
    assert drawn(page) == sorted([a, b, c])  # b sits between a and c: both are one link away


def test_a_memory_with_no_links_says_why(live_server, user, chain, page, shots):
    lonely = chain[3]
    log_in(page, f"{live_server.url}/memories/{lonely}/")
    empty = page.locator(".local-graph-empty")
    expect(empty).to_contain_text("No links yet.")
    expect(empty).to_contain_text("most related memories in the same cube")
    expect(empty.get_by_role("link", name="graph page")).to_be_visible()
    assert page.locator("#local-canvas").count() == 0
    assert page.evaluate("window.engramLocalGraph") is None
    screenshots(page, shots, "memory-local-graph-empty")
