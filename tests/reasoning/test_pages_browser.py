"""The reasoning pages in a real browser (Debian's chromium through Playwright) against a live server: start a
thought session with the form, add a thought, a branch and a revision and see the tree; run the workbench's
bias detection; create a notebook, add a cell, run it (on a real Celery worker) and see its output; browse the mental models. No page
may scroll sideways on a phone. To refresh the screenshots in the docs:
ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/reasoning/test_pages_browser.py"""
import re

import pytest
from playwright.sync_api import expect, sync_playwright

from apps.reasoning.models import Cell, Thought, ThoughtSession
from tests.browser import log_in, new_page
from tests.memories.test_faults_worker import _close_broker_connections, workers  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


def add_thought(page, text: str, **options) -> None:
    form = page.locator("#add-thought")
    form.get_by_label("Thought", exact=True).fill(text)
    if options:
        form.locator("summary").click()
        for label, value in options.items():
            form.get_by_label(label, exact=True).fill(value)
    form.get_by_role("button", name="Add thought").click()


def test_reason_in_a_session_run_the_workbench_and_a_notebook_in_a_browser(live_server, user, store, shoot,
                                                                           workers):  # noqa: F811
    store(user, "Our billing service rewrite has taken two years already; the team kept it going because of the "
                "money spent.")
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, live_server.url + "/reasoning/")
        expect(page.get_by_role("heading", name="Reasoning", exact=True)).to_be_visible()

        new_session = page.locator("#new-session")
        new_session.get_by_role("button", name="Start session").click()
        expect(page.locator("#id_thought_error")).to_contain_text("cannot be empty")
        new_session.get_by_label("Title").fill("Should we finish the billing rewrite?")
        new_session.get_by_label("Tags").fill("billing, planning")
        new_session.get_by_label("First thought").fill("The rewrite is two years in and not done.")
        new_session.get_by_role("button", name="Start session").click()
        expect(page.get_by_text("Session “Should we finish the billing rewrite?” started.")).to_be_visible()

        add_thought(page, "Most of the remaining work is the invoicing module.")
        add_thought(page, "Alternative: keep the old system and wrap it.", **{
            "Branch from thought": "1", "Branch id": "wrap-legacy"})
        add_thought(page, "Correction: the invoicing module is only a third of what is left.",
                    **{"Revises thought": "2"})
        add_thought(page, "Revises nothing that exists.", **{"Revises thought": "9"})
        expect(page.locator("#id_revises_thought_error")).to_contain_text("Thought 9 does not exist")

        chain = page.locator("#chain")
        branch = chain.locator(".branch[data-branch='wrap-legacy']")
        expect(branch).to_contain_text("Alternative: keep the old system and wrap it.")
        expect(branch.locator(".branch-head")).to_contain_text("from #1")
        # The branch hangs under thought 1, the fork point, not at the end of the main line.
        first = chain.locator(".thought-tree > .thought").first
        expect(first.locator(".thought-forks .branch")).to_have_count(1)
        revision = chain.locator(".thought-revision")
        expect(revision).to_contain_text("Correction: the invoicing module")
        revision.get_by_role("link", name="revises #2").click()
        expect(page).to_have_url(re.compile(r"#thought-[0-9a-f-]{36}$"))
        expect(page.locator(".integrity")).to_contain_text("chain valid · 4 checked")
        shoot(page, "reasoning-session")

        page.locator(".reasoning-tabs").get_by_role("link", name="Thought sessions").click()
        expect(page.locator(".session-table")).to_contain_text("Should we finish the billing rewrite?")
        expect(page.locator(".session-table")).to_contain_text("planning")
        shoot(page, "reasoning-overview")

        page.locator(".reasoning-tabs").get_by_role("link", name="Workbench").click()
        page.locator(".tool-list").get_by_role("link", name="Detect bias").click()
        page.get_by_label("Reasoning", exact=True).fill("We have already invested two years and a fortune in the billing rewrite, "
                                            "so we cannot stop now.")
        page.get_by_role("button", name="Run detect bias").click()
        result = page.locator("#result")
        expect(result.locator(".bias-type").first).to_be_visible()
        expect(result).to_contain_text("sunk_cost")
        expect(result).to_contain_text("Correction:")
        expect(result).to_contain_text("method: deterministic")
        expect(result.locator(".evidence-list a").first).to_be_visible()
        shoot(page, "reasoning-workbench")

        page.locator(".reasoning-tabs").get_by_role("link", name="Notebooks").click()
        form = page.locator("#new-notebook")
        form.get_by_label("Title").fill("Billing numbers")
        form.get_by_role("button", name="Create notebook").click()
        expect(page.get_by_text("Notebook “Billing numbers” created.")).to_be_visible()
        add = page.locator("#add-cell")
        add.get_by_label("Type").select_option("markdown")
        add.get_by_label("Content").fill("## Remaining work\nWhat is **left** to build, in weeks.")
        add.get_by_role("button", name="Add cell").click()
        add = page.locator("#add-cell")
        add.get_by_label("Type").select_option("code")
        add.get_by_label("Filename").fill("weeks.js")
        add.get_by_label("Content").fill("const left = {invoicing: 6, reports: 4, exports: 8};\n"
                                         "console.log('weeks left:', Object.values(left).reduce((a, b) => a + b));")
        add.get_by_role("button", name="Add cell").click()
        cell = page.locator("li.cell", has_text="weeks.js")
        expect(page.locator(".cell-markdown h2")).to_have_text("Remaining work")
        # A worker runs the cell; live_server has no websockets, so the page polls the run's status.
        workers("cells")
        cell.get_by_role("button", name="Run").click()
        expect(cell.locator(".run-outcome")).to_have_text("weeks.js: completed, exit code 0.", timeout=60_000)
        expect(page.locator(".output-stdout")).to_have_text("weeks left: 18")
        expect(cell).to_contain_text("exit code 0")
        expect(cell.locator(".cell-status")).to_have_text("Completed")
        shoot(page, "reasoning-notebook")

        page.locator(".reasoning-tabs").get_by_role("link", name="Notebooks").click()
        expect(page.locator(".notebook-table")).to_contain_text("Billing numbers")
        shoot(page, "reasoning-notebooks")

        page.locator(".reasoning-tabs").get_by_role("link", name="Mental models").click()
        page.locator(".chips").get_by_role("link", name="debugging").click()
        expect(page.locator(".tag-description")).to_be_visible()
        shoot(page, "reasoning-models")
        page.get_by_role("link", name="Five Whys").click()
        expect(page.locator("#steps li").first).to_be_visible()
        shoot(page, "reasoning-model")
        page.context.browser.close()

    session = ThoughtSession.objects.get(owner=user)
    assert session.tags == ["billing", "planning"]
    thoughts = list(Thought.objects.filter(session=session).order_by("created_at"))
    assert [(t.thought_number, t.branch_id, t.revises_thought) for t in thoughts] == [
        (1, "", None), (2, "", None), (3, "wrap-legacy", None), (4, "", 2)]
    ran = Cell.objects.get(notebook__owner=user, filename="weeks.js")
    assert ran.status == "completed" and ran.stdout.strip() == "weeks left: 18"


def test_the_workbench_draws_decompositions_syntheses_and_quality_in_a_browser(live_server, user, shoot):
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, live_server.url + "/reasoning/workbench/?tool=decompose")
        page.get_by_label("Problem").fill("Build a scalable web application")
        page.get_by_label("Maximum depth").fill("3")
        page.get_by_role("button", name="Run decompose a problem").click()
        result = page.locator("#result")
        expect(result.locator(".subproblem-tree li li").first).to_be_visible()
        expect(result.locator(".execution-order li").first).to_be_visible()
        shoot(page, "reasoning-workbench-decompose")

        page.locator(".tool-list").get_by_role("link", name="Think in parallel").click()
        page.get_by_label("Problem").fill("Should we migrate to microservices architecture?")
        page.get_by_label("Constraints").fill("Limited team size\n6-month timeline")
        page.get_by_role("button", name="Run think in parallel").click()
        expect(page.locator("#result")).to_contain_text("Conclusion:")
        shoot(page, "reasoning-workbench-parallel")

        page.locator(".tool-list").get_by_role("link", name="Analyze reasoning").click()
        page.get_by_label("Reasoning", exact=True).fill(
            "Everyone I asked loved the idea, so it will obviously succeed. We already spent a year on it, and I am "
            "thrilled and proud of the team.")
        page.get_by_label("Include emotion").check()
        page.get_by_role("button", name="Run analyze reasoning").click()
        result = page.locator("#result")
        expect(result).to_contain_text("Circumplex")
        expect(result.locator(".bias").first).to_be_visible()
        shoot(page, "reasoning-workbench-analysis")
        page.context.browser.close()
