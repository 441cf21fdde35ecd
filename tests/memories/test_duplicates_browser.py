"""The store page's duplicate warning in a real browser (Debian's chromium through Playwright): storing a memory the
user has already shows it with a link and the two choices; merging leaves one memory. Desktop and phone widths."""
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from apps.memories.models import Memory
from tests.browser import PHONE, assert_no_sideways_scroll, log_in, new_page

pytestmark = pytest.mark.slow


def test_store_a_duplicate_see_the_warning_and_merge(live_server, user, store, tmp_path):
    store(user, "Water the tomatoes every other evening in summer.", tags=["garden"])
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size({"width": 1440, "height": 900})
        log_in(page, live_server.url + "/memories/new/")
        page.get_by_label("Content").fill("Water the tomatoes every second evening during summer.")
        page.get_by_role("button", name="Store").click()
        expect(page.get_by_role("alert")).to_contain_text("This looks like a memory you already have")
        warning = page.locator(".duplicates")
        expect(warning.get_by_role("link")).to_have_text("Water the tomatoes every other evening in summer.")
        expect(warning).to_contain_text("% similar")
        expect(page.get_by_role("button", name="Store anyway")).to_be_visible()
        for viewport in ({"width": 1440, "height": 900}, PHONE):
            page.set_viewport_size(viewport)
            assert_no_sideways_scroll(page, "duplicate warning")
            page.screenshot(path=str(Path(os.environ.get("ENGRAM_SCREENSHOTS_DIR") or tmp_path)
                                     / f"memory-duplicate-{viewport['width']}.png"), full_page=True)
        warning.get_by_role("button", name="Merge with this one").click()
        expect(page.locator(".messages")).to_contain_text("Stored and merged with the memory it repeats")
        expect(page.locator(".content")).to_have_text("Water the tomatoes every second evening during summer.")
    assert Memory.objects.filter(deleted_at__isnull=True).count() == 1
