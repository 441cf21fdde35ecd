"""The Cognition pulse page's neuromodulation panel in a real browser (Debian's chromium through Playwright) against a
live server: the levels, mode and effects of the latest session, laid out without sideways scrolling at 1440x900 and
390x844."""
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser import PHONE, assert_no_sideways_scroll, log_in, new_page
from tests.cognition.support import new_session, set_state

pytestmark = pytest.mark.slow

WIDE = {"width": 1440, "height": 900}


def test_the_neuromodulation_panel_at_desktop_and_phone_width(live_server, user, shoot):
    set_state(new_session(user), entropy=0.1, coherence=0.6, interactions=5)
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, live_server.url + "/cognition/")
        panel = page.get_by_role("region", name="Neuromodulation")
        for viewport in (WIDE, PHONE):
            page.set_viewport_size(viewport)
            expect(panel).to_be_visible()
            expect(panel.get_by_label("Levels")).to_contain_text("Dopamine3.88")
            expect(panel.get_by_label("Effects")).to_contain_text("Breadth+5")
            expect(panel.locator(".badge")).to_have_text("exploit")
            assert_no_sideways_scroll(page, f"cognition pulse at {viewport['width']}px")
            # Every figure stays inside the card.
            card = panel.bounding_box()
            for box in panel.locator("dd").all():
                figure = box.bounding_box()
                assert card["x"] <= figure["x"] and figure["x"] + figure["width"] <= card["x"] + card["width"]
        shoot(page, "cognition-neuromodulation")
