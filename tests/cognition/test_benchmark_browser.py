"""A recall run started from its page in a real browser (Debian's chromium through Playwright) against a live server,
finished by a real Celery worker (the SQL broker of the embedded default): the run's page polls REST and shows the
progress live, then the figures, at 1440x900 and 390x844 without sideways scrolling."""
import pytest
from django.conf import settings
from playwright.sync_api import expect, sync_playwright

from apps.cognition.models import BenchmarkRun
from tests.browser import PHONE, assert_no_sideways_scroll, log_in, new_page
from tests.memories.test_faults_worker import _close_broker_connections, workers  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="runs a worker on the SQL broker; REDIS_URL is set"),
]

WIDE = {"width": 1440, "height": 900}


def test_start_a_run_and_watch_it_finish(live_server, user, workers, tmp_path):  # noqa: F811
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(WIDE)
        log_in(page, live_server.url + "/cognition/benchmarks/")
        expect(page.get_by_role("heading", name="No runs yet")).to_be_visible()
        page.get_by_label("Needles").fill("5")
        page.get_by_label("Haystack").fill("300")
        page.get_by_label("Compare with").select_option("text-embedding-3-large")
        page.get_by_role("button", name="Start").click()

        expect(page.get_by_role("heading", name="Recall run")).to_be_visible()
        run_id = page.url.rstrip("/").rsplit("/", 1)[-1]
        # The first batch ran in the request; the rest waits for a worker.
        expect(page.locator("#benchmark-status")).to_have_text("running")
        expect(page.locator("#benchmark-phase")).to_contain_text("stored 200 of 305 items")
        for viewport in (WIDE, PHONE):
            page.set_viewport_size(viewport)
            assert_no_sideways_scroll(page, f"running benchmark at {viewport['width']}px")
        page.screenshot(path=str(tmp_path / "benchmark-running.png"), full_page=True)

        page.set_viewport_size(WIDE)
        workers("bench")
        # The page polls REST and reloads itself when the run completes: no reload from the test.
        expect(page.locator("#benchmark-figures")).to_be_visible(timeout=180_000)
        expect(page.locator("#benchmark-status")).to_have_text("completed")
        expect(page.locator("#benchmark-bar")).to_have_attribute("value", "100.0")
        expect(page.get_by_label("Figures").first).to_contain_text("Fused accuracy")
        for viewport in (WIDE, PHONE):
            page.set_viewport_size(viewport)
            assert_no_sideways_scroll(page, f"completed benchmark at {viewport['width']}px")
        page.screenshot(path=str(tmp_path / "benchmark-done.png"), full_page=True)

        page.goto(live_server.url + "/cognition/benchmarks/")
        expect(page.locator(f"#run-{run_id}")).to_contain_text("Completed")
    done = BenchmarkRun.objects.get(pk=run_id, owner=user)
    assert done.status == "completed" and done.report["test_details"]["queries"] == 5
