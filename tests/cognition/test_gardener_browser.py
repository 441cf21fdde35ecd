"""The gardener page in a real browser (Debian's chromium through Playwright) against a live server, at desktop and
phone widths: it says why the gardener waits, runs a cycle on the button, shows what the cycle changed and links to
its undo, which puts the link back. To refresh the screenshots: ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test
PYTEST_ARGS=tests/cognition/test_gardener_browser.py"""
import pytest
from playwright.sync_api import expect, sync_playwright

from apps.memories.models import MemoryLink
from tests.browser import assert_no_sideways_scroll, log_in, new_page
from tests.cognition.curation_support import link, nodes
from tests.cognition.gardener_support import age_link

pytestmark = pytest.mark.slow

WIDE = {"width": 1440, "height": 900}


def test_run_a_cycle_from_the_gardener_page_and_undo_it(live_server, user, shoot):
    bees, harbour = nodes(user, "Alice keeps bees on the roof.", "The harbour opens at six every morning.")
    weak = age_link(link(user, bees, harbour, 0.05), hours=48)
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(WIDE)
        log_in(page, live_server.url + "/cognition/gardener/")
        expect(page.get_by_role("heading", name="Gardener", exact=True)).to_be_visible()
        expect(page.get_by_text("Your activity has not been measured yet")).to_be_visible()
        assert_no_sideways_scroll(page, "gardener")
        page.get_by_role("button", name="Run a cycle now").click()
        expect(page.locator(".messages")).to_contain_text("The cycle completed: 1 change.")
        expect(page.locator("#cycle-title + p")).to_contain_text("started by you")
        expect(page.get_by_text("1 weak idle link pruned")).to_be_visible()
        assert_no_sideways_scroll(page, "gardener")
        shoot(page, "cognition-gardener")  # desktop and phone widths

        page.get_by_role("link", name="Undo this cycle").click()
        cycle = page.locator(".cg-item", has_text="Gardener cycle")
        expect(cycle).to_contain_text("of 2 nodes")
        cycle.get_by_role("button", name="Undo", exact=True).click()
        expect(page.locator(".messages")).to_contain_text("Undone: the gardener cycle is reversed.")
        page.goto(live_server.url + "/cognition/gardener/")
        expect(page.get_by_text("Its undo was used or has expired.")).to_be_visible()
    assert MemoryLink.objects.filter(pk=weak.pk).exists()
