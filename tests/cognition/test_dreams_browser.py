"""The dream runs page in a real browser (Debian's chromium through Playwright) against a live server: start a dream,
watch it run and finish without a reload (the page polls the run's REST detail), preview its undo and undo it; the
page is checked for sideways scrolling at 1440x900 and 390x844. The run is worked by a thread of the test, as the
worker would; it is held on a link's row lock so that the page is seen while the dream runs, never by timing."""
import threading

import psycopg
import pytest
from django.db import connection, connections
from playwright.sync_api import expect, sync_playwright

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream import dream_execute
from apps.memories.models import Memory, MemoryLink
from tests.browser import PHONE, assert_no_sideways_scroll, log_in, new_page
from tests.cognition.curation_support import everything, link, nodes
from tests.cognition.dream_support import item, session
from tests.graph.test_page_browser import off_loop
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)

pytestmark = pytest.mark.slow

WIDE = {"width": 1440, "height": 900}
STAGING = ("The staging cluster runs Kubernetes 1.30 on three nodes.",
           "Staging uses Kubernetes version 1.30 with three worker nodes.",
           "Our staging Kubernetes cluster has three nodes running 1.30.")


def _work(run_id) -> None:
    try:
        dream_execute(run_id=run_id)
    finally:
        connections.close_all()


def test_start_a_dream_follow_it_to_done_and_undo_it(live_server, user, shoot):
    a, b = nodes(user, "Alpha service owns billing.", "Beta service sends invoices.")
    held = link(user, a, b, 0.5)
    item(session(user), (a, 0.9), (b, 0.6))
    nodes(user, *STAGING)
    before = everything()
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(WIDE)
        log_in(page, live_server.url + "/cognition/dreams/")
        expect(page.get_by_role("heading", name="Dreams", exact=True)).to_be_visible()
        shoot(page, "cognition-dreams-empty")
        page.set_viewport_size(WIDE)
        page.get_by_label("Minutes").fill("0")
        page.get_by_role("button", name="Start").click()
        expect(page.locator(".field-error")).to_contain_text("Use a whole number from 1 to 10")
        page.get_by_label("Phase").select_option("nrem")
        page.get_by_label("Minutes").fill("2")
        page.get_by_role("button", name="Start").click()
        expect(page.locator(".messages")).to_contain_text("started")
        run = off_loop(ConsolidationRun.objects.get, owner=user)
        card = page.locator(f"#dream-{run.pk}")
        expect(card.locator('[data-field="status"]')).to_have_text("queued")
        page.evaluate("window.sameDocument = true")  # gone if the page reloads

        params = connection.settings_dict
        holder = psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"])
        holder.execute(f'SELECT 1 FROM "{MemoryLink._meta.db_table}" WHERE id = %s FOR UPDATE', [held.pk])
        worker = threading.Thread(target=_work, args=[run.pk])
        worker.start()
        try:
            expect(card.locator('[data-field="status"]')).to_have_text("running")
            replay = card.locator('tr[data-step="nrem_replay"]')
            expect(replay.locator('[data-field="state"]')).to_have_text("running")
            expect(card.get_by_role("button", name="Interrupt")).to_be_visible()
            assert_no_sideways_scroll(page, "cognition-dreams running")
        finally:
            holder.rollback()
            holder.close()
        worker.join(timeout=120)
        expect(card.locator('[data-field="status"]')).to_have_text("completed")
        for step in ("nrem_replay", "nrem_link", "nrem_dedupe", "nrem_summarise", "nrem_commit"):
            expect(card.locator(f'tr[data-step="{step}"] [data-field="state"]')).to_have_text("done")
        expect(card.locator('tr[data-step="nrem_replay"] [data-field="batches"]')).to_have_text("1")
        expect(card.locator('[data-field="changes"]')).to_contain_text("edges strengthened: 1")
        expect(card.locator('[data-field="changes"]')).to_contain_text("summaries created: 1")
        expect(card.get_by_role("button", name="Interrupt")).to_be_hidden()
        assert page.evaluate("window.sameDocument") is True
        shoot(page, "cognition-dreams")
        page.set_viewport_size(WIDE)
        assert_no_sideways_scroll(page, "cognition-dreams at 1440")

        page.set_viewport_size(PHONE)
        card.get_by_role("button", name="Preview undo").click()
        preview = page.get_by_role("region", name="What undoing this dream would do")
        expect(preview).to_contain_text("remove 1 node and 3 links it made")
        assert_no_sideways_scroll(page, "cognition-dreams preview")
        page.get_by_role("button", name="Undo this dream").click()
        expect(page.locator(".messages")).to_contain_text("Undone: the dream is reversed")
        expect(page.locator(f"#dream-{run.pk} [data-field='status']")).to_have_text("rolled back")
        expect(page.locator(f"#dream-{run.pk}").get_by_role("button", name="Preview undo")).to_be_hidden()
    assert everything() == before
    assert not Memory.objects.filter(owner=user, kind="summary").exists()
