"""The Context Graph pages in a real browser (Debian's chromium through Playwright) against a live server, at phone
width: approve a merge in the curation inbox, follow the message's link to its undo, preview and undo it, and find
the nodes back; every Cognition page is checked for sideways scrolling at desktop and phone widths. To refresh the
screenshots: ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/cognition/test_pages_browser.py"""
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect, sync_playwright

from apps.cognition.models import CurationTask, ScratchpadItem
from apps.cognition.services.curation import node_forget
from apps.cognition.services.inbox import task_open
from apps.memories.models import Memory
from tests.browser import PHONE, log_in, new_page
from tests.cognition.curation_support import nodes
from tests.cognition.support import new_session, record

pytestmark = pytest.mark.slow


def test_approve_a_merge_and_undo_it_through_the_pages_on_a_phone(live_server, user, shoot):
    dark, editors = nodes(user, "The user prefers dark mode in every editor.",
                          "Dark mode in all editors, says the user.")
    task_open(owner=user, task_type=CurationTask.TaskType.POTENTIAL_MERGE, node_ids=[dark.pk, editors.pk],
              reason="These two say the same thing.", suggested_tool=CurationTask.SuggestedTool.MERGE_CONCEPTS,
              priority=CurationTask.Priority.HIGH)
    soup, = nodes(user, "Grandma's tomato soup needs a pinch of sugar.")
    node_forget(actor=user, node_id=soup.pk, reason="obsolete")
    record(new_session(user), "which editor theme does the user like", [(dark, 0.9), (editors, 0.8)])
    ScratchpadItem.objects.create(owner=user, session_id=uuid.uuid4(), agent_id="planner", privacy="team",
                                  content="Ask about the light theme for slides.", delta_s=0.4,
                                  expires_at=timezone.now() + timedelta(minutes=40))
    with sync_playwright() as playwright:
        page = new_page(playwright)
        page.set_viewport_size(PHONE)
        log_in(page, live_server.url + "/cognition/inbox/")
        expect(page.get_by_role("heading", name="Curation inbox")).to_be_visible()
        task = page.locator(".cg-item", has_text="These two say the same thing.")
        expect(task).to_contain_text("High priority")
        shoot(page, "cognition-inbox")

        page.set_viewport_size(PHONE)
        task.get_by_role("button", name="Approve: merge").click()
        expect(page.locator(".messages")).to_contain_text("Merged 2 nodes into")
        expect(page.locator("#open-tasks")).to_contain_text("Open (0)")
        page.locator(".messages").get_by_role("link", name="Undo").click()

        expect(page.get_by_role("heading", name="Undo history")).to_be_visible()
        merge = page.locator(".cg-item", has_text="Merge of 2 nodes")
        merge.get_by_role("button", name="Preview").click()
        preview = page.get_by_role("region", name="What this undo would do")
        expect(preview).to_contain_text("bring back 2 nodes")
        expect(preview).to_contain_text("remove the merged node it made")
        shoot(page, "cognition-undo")

        page.set_viewport_size(PHONE)
        page.locator(".cg-item", has_text="Merge of 2 nodes").get_by_role("button", name="Undo").click()
        expect(page.locator(".messages")).to_contain_text("Undone: the merge is reversed. 2 nodes back as they were")
        expect(page.locator(".cg-item", has_text="Merge of 2 nodes")).to_contain_text("undone")

        for path, heading, name in (("/cognition/", "Pulse", "cognition-pulse"),
                                    ("/cognition/trash/", "Forgotten nodes", "cognition-trash"),
                                    ("/cognition/scratchpad/", "Scratchpad", "cognition-scratchpad"),
                                    (f"/memories/{dark.pk}/", "Memory", "cognition-lineage")):
            page.goto(live_server.url + path)
            expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
            shoot(page, name)
        page.goto(live_server.url + "/cognition/")
        page.locator(".cg-title").first.click()
        expect(page.locator(".cg-items")).to_contain_text("which editor theme does the user like")
        shoot(page, "cognition-session")
    assert Memory.objects.filter(pk__in=[dark.pk, editors.pk], deleted_at__isnull=True).count() == 2
