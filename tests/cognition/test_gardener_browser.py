"""The gardener page in a real browser (Debian's chromium through Playwright), at desktop and phone widths: it says
why the gardener waits; "Run a cycle now" queues a cycle for the worker and is disabled until it ends; the page
follows the cycle without a reload, over the live graph's websocket (gardener.changed in the owner's cubes) on the
whole ASGI stack, or by reading itself again where there is no socket (Django's WSGI live server); then it shows
what the cycle changed and links to its undo, which puts the link back. The worker is a thread of the test running
the task, held on a link's row lock so that the page is seen while the cycle runs, never by timing. To refresh the
screenshots: ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/cognition/test_gardener_browser.py"""
import threading

import psycopg
import pytest
from django.db import connection, connections
from playwright.sync_api import expect, sync_playwright

from apps.cognition.models import ActivityState
from apps.cognition.tasks import gardener_cycle
from apps.memories.models import MemoryLink
from tests.browser import assert_no_sideways_scroll, log_in, new_page
from tests.cognition.curation_support import link, nodes
from tests.cognition.gardener_support import age_link
from tests.graph.test_page_browser import browser_page, live_url, off_loop  # noqa: F401 (fixtures)
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("_close_broker_connections")]

WIDE = {"width": 1440, "height": 900}


def _weak_link(user) -> MemoryLink:
    bees, harbour = nodes(user, "Alice keeps bees on the roof.", "The harbour opens at six every morning.")
    return age_link(link(user, bees, harbour, 0.05), hours=48)


class Worker:
    """The worker, as a thread running the queued cycle's task; it waits on the held link's row lock (prune locks the
    links it removes) until ``release``."""

    def __init__(self, user, held: MemoryLink) -> None:
        params = connection.settings_dict
        self.holder = psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"])
        self.holder.execute(f'SELECT 1 FROM "{MemoryLink._meta.db_table}" WHERE id = %s FOR UPDATE', [held.pk])
        self.user = user
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        try:
            token = ActivityState.objects.get(owner=self.user).cycle_token
            self.outcome = gardener_cycle.apply(args=[self.user.pk], kwargs={"token": token}).get()
        finally:
            connections.close_all()

    def start(self) -> None:
        self.thread.start()

    def release(self) -> dict:
        self.holder.rollback()
        self.holder.close()
        self.thread.join(timeout=120)
        return self.outcome


def follow_to_the_end(page, worker: Worker, running: str) -> None:
    """Start the worker and see the page show the cycle running (the held link keeps it there) with its button
    disabled; release it and see the page show the outcome, the button back, all without a reload."""
    button = page.get_by_role("button", name="Run a cycle now")
    page.evaluate("window.sameDocument = true")  # gone if the page reloads
    try:
        worker.start()
        expect(page.locator("#gardener-progress")).to_contain_text(running)
        expect(button).to_be_disabled()
    finally:
        outcome = worker.release()
    assert outcome["status"] == "completed", outcome
    expect(page.locator("#gardener-outcome")).to_have_text("The cycle completed: 1 change.")
    expect(button).to_be_enabled()
    assert page.evaluate("window.sameDocument") is True


def test_run_a_cycle_from_the_gardener_page_and_undo_it(live_server, user, shoot):
    weak = _weak_link(user)
    worker = Worker(user, weak)
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(WIDE)
        log_in(page, live_server.url + "/cognition/gardener/")
        expect(page.get_by_role("heading", name="Gardener", exact=True)).to_be_visible()
        expect(page.get_by_text("Your activity has not been measured yet")).to_be_visible()
        assert_no_sideways_scroll(page, "gardener")
        page.get_by_role("button", name="Run a cycle now").click()
        expect(page.locator(".messages")).to_contain_text("A cycle is queued")
        expect(page.locator("#gardener-progress")).to_contain_text("A cycle is queued")
        expect(page.get_by_role("button", name="Run a cycle now")).to_be_disabled()
        # No websocket on the WSGI live server: the page reads itself again and sees the cycle running.
        follow_to_the_end(page, worker, "A cycle is under way (step prune")
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


@pytest.mark.django_db(transaction=True)
def test_the_page_follows_the_cycle_over_the_websocket(live_url, user, browser_page):  # noqa: F811
    page, errors = browser_page
    weak = off_loop(_weak_link, user)
    frames: list[str] = []
    page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: frames.append(frame)))
    log_in(page, f"{live_url}/login/?next=/cognition/gardener/")
    page.get_by_role("button", name="Run a cycle now").click()
    expect(page.locator("#gardener-progress")).to_contain_text("A cycle is queued")
    expect(page.locator("#gardener-live")).to_have_attribute("data-following", "socket")
    # The cycle's first event (it started; its prune waits on the held link) arrives over the socket.
    follow_to_the_end(page, off_loop(Worker, user, weak), "A cycle is under way: starting.")
    statuses = [frame for frame in frames if '"gardener.changed"' in frame]
    assert any('"status": "running"' in frame for frame in statuses)
    assert any('"status": "completed"' in frame for frame in statuses)
    assert not MemoryLink.objects.filter(pk=weak.pk).exists()
    assert errors == []
