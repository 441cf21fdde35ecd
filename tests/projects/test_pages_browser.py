"""The Mind pages in a real browser (Debian's chromium through Playwright) against a live server: create
a project with the form, open an issue, record a decision and a sharp edge, see them on the project page,
then paste matching code into the check-edges page. No page may scroll sideways on a phone. To refresh
the screenshots in the docs:
ENGRAM_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS=tests/projects/test_pages_browser.py"""
import pytest
from django.utils import timezone
from playwright.sync_api import expect, sync_playwright

from apps.projects.models import Issue, Project, Session, SharpEdge
from apps.projects.services import decision_add, edge_add, issue_add, project_create
from tests.browser import log_in, new_page

pytestmark = pytest.mark.slow


@pytest.fixture
def seeded(user):
    """Another project of alice's with a session behind it, and a global sharp edge, so the list and the
    project page have something beside what the test types in."""
    garden = project_create(actor=user, name="garden-planner", stack=["django", "htmx"], status="paused",
                            current_goal="Plan the spring beds")
    issue_add(actor=user, project_id=garden.pk, title="Frost dates are off by a week", severity="minor")
    decision_add(actor=user, project_id=garden.pk, title="Keep the beds in a JSON column",
                 alternatives=[{"option": "One table a bed", "rejected_because": "Too many joins"}])
    now = timezone.now()
    Session.objects.create(project=garden, owner=user, started_at=now, ended_at=now, summary="Sketched the beds")
    Project.objects.filter(pk=garden.pk).update(last_session_at=now, last_session_summary="Sketched the beds")
    edge_add(actor=user, title="Datetimes are stored in UTC", workaround="Convert at the edges, never in SQL",
             detection_patterns=[{"type": "code", "pattern": r"datetime\.now\(\)", "description": "Naive now()"}])


def test_create_a_project_add_an_issue_and_check_edges_in_a_browser(live_server, user, seeded, shoot):
    with sync_playwright() as playwright:
        page = new_page(playwright)
        log_in(page, live_server.url + "/projects/")
        expect(page.get_by_role("heading", name="Projects", exact=True)).to_be_visible()

        new_project = page.locator("#new-project")
        new_project.get_by_label("Name").fill("garden-planner")
        new_project.get_by_role("button", name="Create project").click()
        expect(page.locator("#id_name_error")).to_contain_text("already have a project named")
        new_project.get_by_label("Name").fill("edge-api")
        new_project.get_by_label("Stack").fill("nextjs, vercel")
        new_project.get_by_label("Current goal").fill("Move the webhooks to edge functions")
        new_project.get_by_role("button", name="Create project").click()
        expect(page.get_by_text("Project “edge-api” created.")).to_be_visible()

        page.get_by_role("link", name="Open an issue").click()
        page.get_by_label("Title").fill("Webhook handler times out after 10 s")
        page.get_by_label("Severity").select_option("blocking")
        page.get_by_label("Symptoms").fill("504 Gateway Timeout")
        page.get_by_role("button", name="Open issue").click()
        issues = page.locator("#issues")
        expect(issues.get_by_role("link", name="Webhook handler times out after 10 s")).to_be_visible()
        expect(issues.locator(".severity-head").first).to_contain_text("Blocking")
        issues.get_by_role("link", name="Webhook handler times out after 10 s").click()
        attempt = page.locator("#attempt-form")
        attempt.get_by_label("What was tried").fill("Raised maxDuration to 60 s")
        attempt.get_by_label("Result").fill("Ignored on the Hobby plan")
        attempt.get_by_role("button", name="Add attempt").click()
        expect(page.locator(".attempts-list")).to_contain_text("Raised maxDuration to 60 s")
        page.locator("#issue-form").get_by_label("Status").select_option("investigating")
        page.locator("#issue-form").get_by_label("Current theory").fill("The plan caps the function duration")
        page.get_by_role("button", name="Save issue").click()
        expect(page.locator(".issue-meta")).to_contain_text("Investigating")
        shoot(page, "projects-issue")
        page.get_by_role("link", name="edge-api").click()
        expect(page.locator("#issues")).to_contain_text("1 attempt")

        page.get_by_role("link", name="Record a decision").click()
        page.get_by_label("Title").fill("Run webhooks on Supabase functions")
        page.get_by_label("Reasoning").fill("Vercel Edge timeout is too short for webhooks")
        page.get_by_label("Alternatives").fill(
            "Cloudflare Workers: No native Postgres\nA queue on Fly.io: One more service to run")
        page.get_by_role("button", name="Record decision").click()
        expect(page.locator("#decisions")).to_contain_text("rejected because No native Postgres")

        page.get_by_role("link", name="Add a sharp edge").click()
        page.get_by_label("Title", exact=True).fill("Node crypto is not available in Edge functions")
        page.get_by_label("Workaround").fill("Use self.crypto.randomUUID() from the Web Crypto API")
        page.locator("#id_patterns-0-pattern").fill("crypto.randomUUID(")
        page.get_by_role("button", name="Add sharp edge").click()
        expect(page.locator("#id_patterns-0-pattern_error")).to_be_visible()
        shoot(page, "projects-edge-error")
        page.locator("#id_patterns-0-pattern").fill(r"crypto\.randomUUID|crypto\.createHash")
        page.locator("#id_patterns-0-description").fill("Node crypto usage")
        page.get_by_role("button", name="Add sharp edge").click()
        expect(page.locator("#edges")).to_contain_text("Node crypto is not available in Edge functions")
        expect(page.locator("#edges")).to_contain_text("Datetimes are stored in UTC")
        shoot(page, "projects-detail")

        page.get_by_role("link", name="Projects", exact=True).first.click()
        expect(page.get_by_role("link", name="edge-api")).to_be_visible()
        shoot(page, "projects-list")

        page.get_by_role("link", name="Check sharp edges").click()
        page.get_by_label("Code").fill("export default async function handler(req) {\n"
                                       "  const id = crypto.randomUUID();\n  return new Response(id);\n}")
        page.get_by_label("Runtime").fill("edge")
        page.get_by_role("button", name="Check").click()
        warning = page.locator(".warning").first
        expect(warning).to_contain_text("Node crypto is not available in Edge functions")
        expect(warning).to_contain_text("Web Crypto API")
        expect(page.locator(".warning")).to_have_count(1)
        shoot(page, "projects-check")

        page.get_by_label("Code").fill("print('hello')")
        page.get_by_role("button", name="Check").click()
        expect(page.get_by_text("No sharp edges match")).to_be_visible()
        page.context.browser.close()

    project = Project.objects.get(owner=user, name="edge-api")
    assert project.stack == ["nextjs", "vercel"]
    issue = Issue.objects.get(project=project)
    assert (issue.severity, issue.status) == ("blocking", "investigating")
    assert [attempt["what"] for attempt in issue.attempts] == ["Raised maxDuration to 60 s"]
    edge = SharpEdge.objects.get(project=project)
    assert edge.detection_patterns[0]["pattern"] == r"crypto\.randomUUID|crypto\.createHash"
