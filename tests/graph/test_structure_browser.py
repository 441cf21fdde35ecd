"""The graph page shows structure (issue 21, item 4), in a real browser: clusters coloured with a legend that names
them and isolates one, memories without a link set apart (and hidden on demand), labels that never overlap, the
live "New: ..." notice that brings the new memory into view, and filters (a tag among them) kept in the URL."""
import random

import httpx
import pytest
from playwright.sync_api import expect

from apps.cubes.services import cube_ensure_personal
from apps.memories.models import Memory, MemoryLink
from tests.browser import PHONE
from tests.graph.test_page_browser import (  # noqa: F401 (fixtures)
    WAIT_MS, assert_no_sideways_scroll, browser_page, live_url, log_in, node_count, off_loop, settle, wait_for_nodes,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GARDEN = [
    "The tomatoes went into the south bed on 12 April; water them every other evening.",
    "Water the tomatoes in the south bed in the evening, never at noon.",
    "Slugs ate the tomato seedlings in the south bed again: put copper tape around it.",
    "Compost from the left bin goes on the tomato bed in May.",
]
PAYMENTS = [
    "The payment service talks to Stripe over HTTPS with a restricted API key.",
    "The payment service retries failed Stripe charges three times with backoff.",
    "Stripe webhooks reach the payment service through the billing queue.",
    "Refunds in the payment service go through Stripe's refund API, never by hand.",
]

# Words of the synthetic topics (a graph of a few hundred memories seeded as rows, links mostly inside a topic).
TOPICS = {
    "garden": "tomatoes compost seedlings watering raised bed slugs lettuce greenhouse mulch pruning roses beans",
    "payments": "stripe invoice refund webhook charge billing ledger checkout currency payout dispute receipt",
    "deploy": "kubernetes release rollback pipeline staging canary helm cluster image registry migration outage",
    "travel": "flight hotel passport itinerary luggage train booking visa airport connection rental ferry",
    "cooking": "recipe sourdough oven braise spices stock dough knife pantry roast simmer basil",
    "health": "doctor appointment vitamins sleep running knee physio dentist allergy prescription blood pressure",
    "reading": "novel chapter library author poetry essay notes bookmark translation review series edition",
    "music": "guitar rehearsal chords concert setlist amplifier strings tuning drummer recording vinyl metronome",
}
SECTORS = ["episodic", "semantic", "procedural", "emotional", "reflective"]


def seed_topics(user, *, per_topic: int, unlinked: int, seed: int = 5) -> dict:
    """Memories of TOPICS in alice's personal cube, ``per_topic`` each, each linked to one to three earlier ones
    of its topic (and a few across topics), plus ``unlinked`` memories with no link: rows by bulk_create, so that a
    graph of hundreds is quick to make. Returns {"topics": {topic: [ids]}, "unlinked": [ids]}."""
    cube = cube_ensure_personal(actor=user)
    rng = random.Random(seed)
    rows, topic_of = [], []
    for topic, words in TOPICS.items():
        vocabulary = words.split()
        for index in range(per_topic):
            picked = rng.sample(vocabulary, 6)
            rows.append(Memory(
                cube=cube, owner=user, primary_sector=rng.choice(SECTORS), tags=[topic], keywords=picked[:5],
                content=f"{picked[0].capitalize()} and {picked[1]}: {' '.join(picked[2:])} ({topic} note {index}).",
                importance=round(rng.random(), 3), salience=0.5, strength=round(rng.uniform(0.3, 1.0), 3)))
            topic_of.append(topic)
    for index in range(unlinked):
        rows.append(Memory(cube=cube, owner=user, primary_sector=rng.choice(SECTORS), tags=["loose"],
                           keywords=[f"loose{index}"], content=f"A loose thought, number {index}, linked to nothing.",
                           importance=round(rng.random(), 3), salience=0.5, strength=0.8))
        topic_of.append(None)
    Memory.objects.bulk_create(rows)
    groups: dict[str, list] = {}
    for memory, topic in zip(rows, topic_of):
        if topic:
            groups.setdefault(topic, []).append(memory.pk)
    pairs = set()
    for ids in groups.values():
        for index in range(1, len(ids)):
            for other in rng.sample(ids[:index], min(index, rng.randint(1, 3))):
                pairs.add((ids[index], other))
    linked = [pk for ids in groups.values() for pk in ids]
    for _ in range(len(linked) // 25):
        pairs.add(tuple(rng.sample(linked, 2)))
    MemoryLink.objects.bulk_create([MemoryLink(source_id=a, target_id=b, weight=round(rng.uniform(0.5, 0.95), 3))
                                    for a, b in pairs])
    return {"topics": {topic: [str(pk) for pk in ids] for topic, ids in groups.items()},
            "unlinked": [str(memory.pk) for memory, topic in zip(rows, topic_of) if topic is None]}


def wait_for_layout(page) -> None:
    page.wait_for_function("!window.engramGraph.layout.running()", timeout=30000)


def viewport_point(page, memory_id: str) -> dict:
    """Where a node is drawn, relative to the canvas, with the canvas's size."""
    return page.evaluate("""id => { const r = window.engramGraph.renderer; r.flush();
        const p = r.framedGraphToViewport(r.getNodeDisplayData(id)); const { width, height } = r.getDimensions();
        return { x: p.x, y: p.y, width, height }; }""", memory_id)


def test_clusters_are_coloured_and_named_in_a_legend_that_isolates_one(live_url, user, store, browser_page, shots):
    page, errors = browser_page
    garden = [off_loop(store, user, text, tags=["garden"], category="home") for text in GARDEN]
    payments = [off_loop(store, user, text, tags=["payments"], category="work") for text in PAYMENTS]
    loose = off_loop(store, user, "Grandmother's birthday is on the ninth of November.", primary_sector="episodic")
    assert not MemoryLink.objects.filter(source=loose).exists() and not MemoryLink.objects.filter(target=loose).exists()
    cross = MemoryLink.objects.filter(source__in=garden, target__in=payments).count() + \
        MemoryLink.objects.filter(source__in=payments, target__in=garden).count()
    assert cross == 0, "the two topics are apart in the stored graph"

    log_in(page, live_url)
    wait_for_nodes(page, 9)
    legend = page.get_by_role("group", name="Legend")
    clusters = page.locator("#graph-clusters .legend-button")
    expect(legend).to_contain_text("Clusters")
    expect(clusters).to_have_count(2)
    names = page.locator("#graph-clusters .legend-name").all_inner_texts()
    assert any("garden" in name for name in names) and any("payments" in name for name in names), names
    assert page.locator("#graph-clusters .legend-count").all_inner_texts() == ["4", "4"]
    colour = "id => window.engramGraph.graph.getNodeAttribute(id, 'color')"
    garden_colours = {page.evaluate(colour, str(memory.pk)) for memory in garden}
    payment_colours = {page.evaluate(colour, str(memory.pk)) for memory in payments}
    assert len(garden_colours) == len(payment_colours) == 1 and garden_colours != payment_colours

    # The memory without a link stands apart: outside the box of the linked ones, and counted in the legend.
    wait_for_layout(page)
    expect(legend).to_contain_text("1 unlinked")
    apart = page.evaluate("""([loose, linked]) => { const g = window.engramGraph.graph;
        const xs = linked.map((id) => g.getNodeAttribute(id, 'x')), ys = linked.map((id) => g.getNodeAttribute(id, 'y'));
        const { x, y } = g.getNodeAttributes(loose);
        return x > Math.max(...xs) || x < Math.min(...xs) || y > Math.max(...ys) || y < Math.min(...ys); }""",
                          [str(loose.pk), [str(memory.pk) for memory in garden + payments]])
    assert apart
    page.screenshot(path=str(shots / "graph-clusters.png"), full_page=True)

    # Pressing a cluster shows only it: the other cluster's nodes fade and lose their labels.
    garden_button = clusters.filter(has_text="garden")
    garden_button.click()
    expect(garden_button).to_have_attribute("aria-pressed", "true")
    drawn = "id => { const d = window.engramGraph.renderer.getNodeDisplayData(id); return [d.color, d.label]; }"
    assert page.evaluate(drawn, str(payments[0].pk)) == ["#e3e6ec", ""]
    assert page.evaluate(drawn, str(garden[0].pk))[0] in garden_colours
    garden_button.click()
    expect(garden_button).to_have_attribute("aria-pressed", "false")
    assert page.evaluate(drawn, str(payments[0].pk))[0] in payment_colours

    # Hiding the unlinked ones is part of the URL: a reload (or a shared link) keeps them hidden.
    legend.get_by_role("button", name="Hide unlinked").click()
    assert page.evaluate("id => window.engramGraph.renderer.getNodeDisplayData(id).hidden", str(loose.pk))
    expect(page.locator("#graph-count")).to_contain_text("1 unlinked hidden")
    assert "unlinked=hide" in page.url
    page.reload()
    wait_for_nodes(page, 9)
    expect(page.get_by_role("button", name="Show unlinked")).to_be_visible()
    assert page.evaluate("id => window.engramGraph.renderer.getNodeDisplayData(id).hidden", str(loose.pk))
    # Colouring by sector is kept in the URL too, and its legend is the sectors'.
    page.get_by_label("Colour by").select_option("sector")
    expect(legend).to_contain_text("Sector")
    assert "color=sector" in page.url and "unlinked=hide" in page.url
    assert errors == []


# Wraps fillText on the label and hover layers and records the box of every text drawn from now on.
RECORD_TEXT = """() => { const r = window.engramGraph.renderer; window.__texts = [];
  for (const layer of ["labels", "hovers"]) {
    const context = r.getCanvases()[layer].getContext("2d");
    if (context.__recording) continue;
    const fillText = context.fillText;
    context.fillText = function (text, x, y, ...rest) {
      const m = this.measureText(text);
      window.__texts.push({ text, x0: x - m.actualBoundingBoxLeft, x1: x + m.actualBoundingBoxRight,
                            y0: y - m.fontBoundingBoxAscent, y1: y + m.fontBoundingBoxDescent });
      return fillText.call(this, text, x, y, ...rest);
    };
    context.__recording = true;
  } }"""

# Draws a whole frame now and returns the texts drawn and every pair of them that overlaps.
DRAWN_TEXTS = """() => { window.__texts = []; window.engramGraph.renderer.render();
  const texts = window.__texts, overlaps = [];
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const [a, b] = [texts[i], texts[j]];
    if (a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) overlaps.push([a.text, b.text]);
  }
  return { count: texts.length, overlaps }; }"""


def test_labels_never_overlap_search_hits_included(live_url, user, browser_page, shots):
    page, errors = browser_page
    seeded = off_loop(seed_topics, user, per_topic=30, unlinked=110)
    total = 8 * 30 + 110
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, live_url)
    wait_for_nodes(page, total)
    wait_for_layout(page)
    page.evaluate(RECORD_TEXT)
    for ratio in (1, 0.5, 0.25):
        page.evaluate("ratio => window.engramGraph.renderer.getCamera().setState({ x: 0.5, y: 0.5, ratio, angle: 0 })",
                      ratio)
        drawn = page.evaluate(DRAWN_TEXTS)
        assert drawn["count"] >= 8, drawn
        assert drawn["overlaps"] == [], f"at ratio {ratio}: {drawn['overlaps'][:5]}"
    page.evaluate("window.engramGraph.renderer.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 })")
    # A word of one topic: its thirty memories all get a label if there is room, and none overlaps another.
    page.get_by_role("searchbox", name="Find in the graph").fill("garden")
    expect(page.locator("#graph-search-count")).to_have_text("30 matches")
    page.wait_for_timeout(600)  # the camera's move to the matches
    drawn = page.evaluate(DRAWN_TEXTS)
    assert drawn["count"] >= 8 and drawn["overlaps"] == [], drawn
    # Only the hits are labelled (the rest fade), the hits' labels first.
    hit_labels = set(page.evaluate("""[...window.engramGraph.matches].map((id) =>
        window.engramGraph.graph.getNodeAttribute(id, 'label'))"""))
    assert set(page.evaluate("window.__texts.map((t) => t.text)")) <= hit_labels
    page.screenshot(path=str(shots / "graph-search-labels.png"), full_page=True)
    assert len(seeded["unlinked"]) == 110
    assert errors == []


def test_the_live_notice_centres_the_new_memory_and_opens_it(live_url, user, store, make_token, browser_page):
    page, errors = browser_page
    for text in GARDEN:
        off_loop(store, user, text, tags=["garden"], category="home")
    for text in PAYMENTS:
        off_loop(store, user, text, tags=["payments"], category="work")
    log_in(page, live_url)
    wait_for_nodes(page, 8)
    wait_for_layout(page)
    # Look at a far corner, away from the drawing.
    page.evaluate("window.engramGraph.renderer.getCamera().setState({ x: -2, y: -2, ratio: 0.2, angle: 0 })")
    headers = {"Authorization": f"Bearer {off_loop(make_token, user)}"}
    stored = httpx.post(f"{live_url}/api/v1/memories/", headers=headers, timeout=60,
                        json={"content": "Water the tomato seedlings in the south bed before the first frost.",
                              "tags": ["garden"], "category": "home"})
    assert stored.status_code == 201, stored.text
    new_id = stored.json()["id"]
    assert MemoryLink.objects.filter(source_id=new_id).exists(), "the new memory joins the garden cluster"
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=new_id, timeout=WAIT_MS)
    before = viewport_point(page, new_id)
    assert not (0 <= before["x"] <= before["width"] and 0 <= before["y"] <= before["height"]), "off-screen first"

    notice = page.locator("#graph-toast").get_by_role("button")
    expect(notice).to_contain_text("New: Water the tomato seedlings")
    notice.click()
    expect(page.get_by_role("complementary", name="Selected memory")).to_contain_text("Water the tomato seedlings")
    assert page.evaluate("window.engramGraph.selected") == new_id
    page.wait_for_function("!window.engramGraph.renderer.getCamera().isAnimated()", timeout=WAIT_MS)
    after = viewport_point(page, new_id)
    assert abs(after["x"] - after["width"] / 2) < after["width"] * 0.05, after
    assert abs(after["y"] - after["height"] / 2) < after["height"] * 0.05, after
    expect(page.locator("#graph-toast")).to_be_hidden()
    assert errors == []


def test_filters_by_tag_and_more_stay_in_the_url_and_fold_on_a_phone(live_url, user, store, browser_page, shots):
    page, errors = browser_page
    seeded = off_loop(seed_topics, user, per_topic=5, unlinked=2)
    log_in(page, live_url)
    wait_for_nodes(page, 42)
    page.get_by_label("Tag").fill("music")
    page.get_by_role("button", name="Apply").click()
    wait_for_nodes(page, 5)
    assert set(page.evaluate("window.engramGraph.graph.nodes()")) == set(seeded["topics"]["music"])
    expect(page.locator("#graph-count")).to_contain_text("5 memories")
    expect(page.locator("#graph-filter-active")).to_have_text("1 on")
    assert "tag=music" in page.url
    # A live memory of another tag stays off this view; one of the tag joins it.
    off_loop(store, user, "Book the ferry to the island for the August trip.", tags=["travel"])
    joined = off_loop(store, user, "Restring the guitar before the concert on Friday.", tags=["music"])
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=str(joined.pk), timeout=WAIT_MS)
    assert node_count(page) == 6

    # The URL is the view: a reload shows the same, with the field filled in.
    page.reload()
    wait_for_nodes(page, 6)
    expect(page.get_by_label("Tag")).to_have_value("music")
    page.get_by_label("Kind").select_option("decision")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#graph-empty")).to_be_visible()
    expect(page.locator("#graph-filter-active")).to_have_text("2 on")
    assert "kind=decision" in page.url and "tag=music" in page.url

    # On a phone the filters fold away under a summary that says how many apply; opened, they fit the screen.
    page.set_viewport_size(PHONE)
    page.goto(f"{live_url}/graph/?tag=garden")
    wait_for_nodes(page, 5)
    expect(page.get_by_role("button", name="Apply")).to_be_hidden()
    summary = page.locator("#graph-filter-box > summary")
    expect(summary).to_contain_text("1 on")
    summary.click()
    expect(page.get_by_label("Tag")).to_have_value("garden")
    expect(page.get_by_role("button", name="Apply")).to_be_visible()
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(shots / "graph-filters-phone.png"), full_page=True)
    page.get_by_role("link", name="Reset").click()
    wait_for_nodes(page, 44)
    assert page.url.endswith("/graph/")
    assert errors == []
