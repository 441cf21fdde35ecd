"""The graph page's causal path explorer in a real browser (Debian's chromium through Playwright) against the whole
ASGI stack: two concepts (one picked from the nodes on screen, one typed as words) go to find_causal_path over REST,
the best path and its alternative are drawn on the graph and told with their confidence and narrative; "Effects of"
draws expand_causal_path's chains; a concept nothing matches shows the nearest names in the panel; and another
user's graph gives them no path through alice's nodes. At 1440x900 and 390x844 without sideways scrolling."""
import pytest
from playwright.sync_api import expect

from tests.browser import PHONE, assert_no_sideways_scroll
from tests.cognition.curation_support import link, nodes
from tests.graph.test_page_browser import browser_page, live_url, log_in, off_loop, wait_for_nodes  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1440, "height": 900}


def drawn(page) -> dict:
    return page.evaluate("window.engramGraph.causal.state()")


def test_find_a_causal_path_and_the_effects_of_a_concept(browser_page, live_url, user, other_user, tmp_path):  # noqa: F811
    page, errors = browser_page
    rain, river, quay, cafe, pumps = off_loop(
        nodes, user, "Heavy rain raises the river.", "A high river floods the quay.",
        "The flooded quay closes the cafe.", "The cafe closes early on flood days.",
        "Storm pumps drain the quay within hours.")
    for source, target, weight in ((rain, river, 0.9), (river, quay, 0.8), (quay, cafe, 0.9), (rain, pumps, 0.5),
                                   (pumps, cafe, 0.6)):
        off_loop(link, user, source, target, weight, "causal")
    page.set_viewport_size(WIDE)
    log_in(page, live_url)
    wait_for_nodes(page, 5)
    page.locator("#causal-box summary").click()
    page.get_by_label("From", exact=True).fill("Heavy rain raises the river.")  # a node's label: sent by id
    page.get_by_label("To", exact=True).fill("cafe closes early on flood days")  # words: resolved by the server
    page.get_by_role("button", name="Find path").click()
    result = page.locator("#causal-result")
    expect(result).to_contain_text("Path confidence 0.65 over 3 links")
    expect(result).to_contain_text("Heavy rain raises the river")
    expect(result.locator(".causal-best li")).to_have_count(4)
    expect(result).to_contain_text("Alternative 1, confidence 0.30")
    state = drawn(page)
    assert set(state["best"]) == {str(rain.pk), str(river.pk), str(quay.pk), str(cafe.pk)}
    assert str(pumps.pk) in state["alternatives"]
    assert f"{rain.pk}>{river.pk}" in state["edges"]
    for viewport in (WIDE, PHONE):
        page.set_viewport_size(viewport)
        assert_no_sideways_scroll(page, f"causal explorer at {viewport['width']}px")
        page.screenshot(path=str(tmp_path / f"causal-path-{viewport['width']}.png"), full_page=True)
    page.set_viewport_size(WIDE)

    page.get_by_role("button", name="Effects of “From”").click()
    expect(result).to_contain_text("Effects of “Heavy rain raises the river”: 4")
    assert set(drawn(page)["alternatives"]) >= {str(river.pk), str(quay.pk), str(cafe.pk), str(pumps.pk)}

    page.get_by_label("To", exact=True).fill("quantum chromodynamics lattice gauge symmetry")
    page.get_by_role("button", name="Find path").click()
    error = page.locator("#causal-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("the nearest are:")
    assert drawn(page) is None
    page.get_by_label("To", exact=True).fill("")
    page.get_by_role("button", name="Find path").click()
    expect(error).to_contain_text("end_concept")
    page.screenshot(path=str(tmp_path / "causal-error.png"), full_page=True)
    assert not errors

    # Bob reaches none of alice's nodes: the same words resolve to nothing of his.
    page.context.clear_cookies()
    log_in(page, live_url, "bob")
    page.locator("#causal-box summary").click()
    page.get_by_label("From", exact=True).fill("Heavy rain raises the river")
    page.get_by_label("To", exact=True).fill("cafe closes early on flood days")
    page.get_by_role("button", name="Find path").click()
    expect(page.locator("#causal-error")).to_contain_text("your graph has no nodes yet")
    assert drawn(page) is None
