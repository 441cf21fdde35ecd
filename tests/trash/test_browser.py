"""The trash in a real browser (Debian's chromium through Playwright) against a live server: delete a project and undo
it from the message, find a deleted notebook in the trash with what happens to it and restore it, open a deleted
project's own page and restore it from its banner. No page may scroll sideways on a phone. To refresh the screenshots
in the docs: ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/trash/test_browser.py"""
import pytest
from playwright.sync_api import expect, sync_playwright

from apps.projects.models import Project
from apps.projects.services import decision_add, project_create, project_delete
from apps.reasoning.models import Notebook
from apps.reasoning.services.notebooks import notebook_create, notebook_delete
from tests.browser import log_in, new_page
from tests.trash.conftest import Deleted

pytestmark = pytest.mark.slow


def test_delete_a_project_then_undo_it_from_the_message(live_server, user, shoot):
    project = project_create(actor=user, name="beehive", current_goal="Count the frames")
    decision_add(actor=user, project_id=project.pk, title="Paint the hives white")
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, f"{live_server.url}/projects/{project.pk}/")
        page.get_by_role("link", name="Delete…").first.click()
        page.get_by_role("button", name="Delete").click()
        message = page.locator(".message-undo")
        expect(message).to_contain_text("Project “beehive” moved to the trash.")
        expect(message.get_by_role("link", name="trash")).to_have_attribute("href", "/trash/")
        shoot(page, "trash-undo")
        expect(page.get_by_role("link", name="beehive")).to_have_count(0)  # gone from the list
        message.get_by_role("button", name="Undo").click()
        expect(page.get_by_role("heading", name="beehive")).to_be_visible()
        expect(page.locator("#decisions")).to_contain_text("Paint the hives white")
        expect(page.locator(".message-success")).to_contain_text("Project “beehive” restored.")
        page.context.browser.close()
    assert Project.objects.get(pk=project.pk).deleted_at is None


def test_the_trash_lists_a_deleted_notebook_with_what_happens_to_it_and_restores_it(live_server, user, deleted: Deleted,
                                                                                      shoot):
    mine = notebook_create(actor=user, title="Hive weights")
    notebook_delete(actor=user, notebook_id=mine.pk)
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, f"{live_server.url}/trash/")
        expect(page.get_by_role("heading", name="Trash")).to_be_visible()
        shoot(page, "trash")
        item = page.locator(".trash-item", has_text="Hive weights")
        expect(item).to_contain_text("Notebook")
        expect(item).to_contain_text("Kept until you delete it forever")
        forgotten = page.locator(".trash-item", has_text="The old wifi password was hunter2.")
        expect(forgotten).to_contain_text("Forgotten node")
        expect(forgotten).to_contain_text("Deleted for good on")

        page.get_by_label("Show").select_option("notebook")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator(".trash-item")).to_have_count(2)
        item.get_by_role("button", name="Restore").click()
        expect(page.locator(".message-success")).to_contain_text("Restored the notebook “Hive weights”")
        expect(page.locator(".trash-item")).to_have_count(1)
        expect(page.get_by_label("Show")).to_have_value("notebook")

        page.locator(".trash-item", has_text="Rainfall sums").get_by_role("link", name="Delete forever…").click()
        expect(page.get_by_role("heading", name="Delete this notebook forever?")).to_be_visible()
        shoot(page, "trash-delete-forever")
        page.get_by_role("button", name="Delete forever").click()
        expect(page.get_by_role("heading", name="No notebook in the trash")).to_be_visible()
        page.context.browser.close()
    assert Notebook.objects.get(pk=mine.pk).deleted_at is None
    assert not Notebook.objects.filter(pk=deleted.notebook.pk).exists()


def test_a_deleted_projects_page_shows_the_restore_banner(live_server, user, shoot):
    project = project_create(actor=user, name="greenhouse", current_goal="Automate the watering")
    project_delete(actor=user, project_id=project.pk)
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, f"{live_server.url}/projects/{project.pk}/")
        banner = page.locator(".deleted-banner")
        expect(banner).to_contain_text("This project was deleted on")
        expect(banner).to_contain_text("until you restore it or delete it forever")
        expect(page.get_by_text("Automate the watering")).to_be_visible()
        shoot(page, "trash-deleted-project")
        banner.get_by_role("button", name="Restore").click()
        expect(page.locator(".message-success")).to_contain_text("Project “greenhouse” restored.")
        expect(page.get_by_role("link", name="Record a decision")).to_be_visible()
        page.context.browser.close()
    assert Project.objects.get(pk=project.pk).deleted_at is None
