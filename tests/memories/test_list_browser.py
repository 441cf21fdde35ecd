"""The memories list in a real browser (Debian's chromium through Playwright) against a live server: filter by text,
sort, click a tag, select all on the page, move them to a cube and undo it, at 1440x900; and at 390x844 the list and
its bulk bar fit the phone (no sideways scroll). To refresh the screenshots: ENGRAM_SCREENSHOTS_DIR=docs/screenshots
make test PYTEST_ARGS=tests/memories/test_list_browser.py"""
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from apps.cubes.models import Cube
from apps.memories.models import Memory
from apps.memories.services import memory_store_many
from tests.browser import PHONE, assert_no_sideways_scroll, log_in, new_page

pytestmark = pytest.mark.slow

WIDE = {"width": 1440, "height": 900}
LONG_CUBE = "Harbour operations and lighthouse maintenance records, northern district"


@pytest.fixture
def harbour(user):
    """60 lighthouse logs (two tagged #storm) and 12 other memories in alice's personal cube; a cube with a long name."""
    Cube.objects.create(id="harbour", name=LONG_CUBE, owner=user)
    memory_store_many(actor=user, items=[
        {"content": f"Lighthouse log {n:02d}: the lamp at station {n} was checked and the lens cleaned.",
         "tags": ["lighthouse", "storm"] if n in (57, 58) else ["lighthouse"], "importance": n / 100,
         "primary_sector": "episodic"}
        for n in range(60)])
    memory_store_many(actor=user, items=[
        {"content": f"Shopping note {n}: buy bread, milk and {n} apples.", "tags": ["shopping"]} for n in range(12)])


def test_filter_sort_click_a_tag_and_move_in_bulk(live_server, user, harbour, shoot, tmp_path):
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(WIDE)
        log_in(page, live_server.url + "/memories/")
        expect(page.locator(".memory-row")).to_have_count(50)

        page.get_by_label("Text").fill("lamp lens")
        page.get_by_label("Sort").select_option("importance")
        page.get_by_role("button", name="Filter").click()
        expect(page).to_have_url(f"{live_server.url}/memories/?q=lamp+lens&sort=importance")
        expect(page.locator(".memory-row").first).to_contain_text("Lighthouse log 59")
        expect(page.locator(".pager")).to_contain_text("60 memories")

        page.locator(".memory-row", has_text="Lighthouse log 58").get_by_role("link", name="#storm").click()
        expect(page.locator(".memory-row")).to_have_count(2)
        expect(page.locator(".chips")).to_contain_text("Tags: #storm")
        expect(page.locator(".chips")).to_contain_text("Text: lamp lens")
        assert "sort=importance" in page.url and "tag=storm" in page.url

        page.get_by_role("link", name="Text: lamp lens").click()  # a chip drops its filter
        expect(page.locator(".chips")).not_to_contain_text("Text:")
        expect(page.locator(".memory-row")).to_have_count(2)

        apply = page.get_by_role("button", name="Apply")
        expect(apply).to_be_disabled()
        page.get_by_label("Select all on this page").check()
        expect(page.locator("#bulk-count")).to_have_text("2 selected")
        expect(page.locator("#bulk-cube")).to_be_hidden()
        page.get_by_label("Action").select_option("move")
        page.get_by_label("Cube to move to").select_option("harbour")
        expect(page.get_by_label("Tag", exact=True)).to_be_hidden()
        shoot(page, "memories-bulk")  # desktop and phone widths, no sideways scroll
        page.set_viewport_size(WIDE)
        apply.click()

        done = page.locator(".bulk-done")
        expect(done).to_contain_text(f"Moved 2 memories to {LONG_CUBE}.")
        expect(page.locator(".memory-row .cube-name")).to_have_text([LONG_CUBE, LONG_CUBE])
        expect(page.locator(".memory-row .cube-name").first).to_have_attribute("title", LONG_CUBE)
        assert page.locator(".memory-row .cube-name").first.evaluate("e => e.scrollWidth > e.clientWidth")  # cut
        assert_no_sideways_scroll(page, "memories after a move")
        page.screenshot(path=str(Path(os.environ.get("ENGRAM_SCREENSHOTS_DIR") or tmp_path) / "memories-moved.png"),
                        full_page=True)

        done.get_by_role("button", name="Undo").click()
        expect(page.locator(".bulk-done")).to_contain_text("Undone: moved 2 memories back to their cube.")
        page.goto(live_server.url + "/memories/?cube=harbour")
        expect(page.get_by_text("No memories match these filters.")).to_be_visible()
    assert not Memory.objects.filter(cube_id="harbour").exists()
    assert Memory.objects.filter(tags__contains=["storm"], cube__is_personal=True).count() == 2


def test_the_list_fits_a_phone(live_server, user, harbour, tmp_path):
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(PHONE)
        log_in(page, live_server.url + "/memories/?tag=storm")
        expect(page.locator(".memory-row")).to_have_count(2)
        expect(page.get_by_label("Sector")).to_be_hidden()  # a tag filter shows as a chip: the list comes first
        page.locator("summary", has_text="Filters").click()
        expect(page.get_by_label("Sector")).to_be_visible()
        page.get_by_label("Select all on this page").check()
        page.get_by_label("Action").select_option("tag")
        expect(page.get_by_label("Tag", exact=True)).to_be_visible()
        for control in ("#bulk-action", "#bulk-tag", "#bulk-apply", "#id_q", "#id_sort"):
            box = page.locator(control).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (control, box)
        assert_no_sideways_scroll(page, "memories on a phone")
        page.get_by_label("Tag", exact=True).fill("checked")
        page.get_by_role("button", name="Apply").click()
        expect(page.locator(".bulk-done")).to_contain_text("Tagged 2 memories #checked.")
        assert_no_sideways_scroll(page, "memories on a phone after an action")
        page.screenshot(path=str(Path(os.environ.get("ENGRAM_SCREENSHOTS_DIR") or tmp_path) / "memories-tagged-phone.png"),
                        full_page=True)
