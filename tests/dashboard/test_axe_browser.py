"""Every page passes axe-core (issue 21): the dashboard's pages, found by walking the URLconf rather than from a list,
each with its object from a demo account (scripts/demo.py), plus the error pages, the login page, the admin and the
API docs, in Debian's chromium through Playwright. A page with any violation fails, naming the page, the rule and the
elements; a route that answers GET with 405, a redirect or data is not a page, and is checked only for saying so.

One server, one browser and one seeded account serve the whole module: the pages only read, so the data is made once
(outside any test's transaction) and flushed at the end.

axe-core is an npm devDependency of frontend/ (exact pin; `make test` installs it with `npm ci`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.management import call_command
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from playwright.sync_api import sync_playwright

from apps.cognition.models import UndoEntry
from apps.cognition.services.gardener.activity import activity_flush
from config.asgi import application
from scripts.demo import seed
from tests.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE, log_in
from tests.factories import UserFactory
from tests.mcp.support import serving

# django_db: the test database is made only for a run that has a test marked so. Each test only reads, inside a
# transaction of its own that is rolled back; the module's data is committed before (the site fixture).
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

AXE = Path(__file__).resolve().parents[2] / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
# Checked against WCAG 2.2 A and AA and axe's best practices (landmarks, headings, region). None is switched off.
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa",
                                                     "best-practice"]},
               "resultTypes": ["violations"]}
# Routes under these prefixes are not pages of the dashboard: the REST API answers JSON (its docs page is added
# below); the admin's pages are found from its registry (ADMIN_MODELS).
NOT_DASHBOARD = ("api/", "admin/", "healthz")


def _routes(patterns=None, prefix: str = "", namespace: str = "") -> list[tuple[str, str, tuple[str, ...]]]:
    """(route, qualified name, keyword arguments) of every named route of config.urls outside NOT_DASHBOARD."""
    found = []
    for entry in get_resolver("config.urls").url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if route.startswith(NOT_DASHBOARD):
            continue
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            found += _routes(entry.url_patterns, route, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            converters = getattr(entry.pattern, "converters", {})  # a path(); a re_path() names none
            kwargs = tuple(name for name in converters if name not in (entry.default_args or {}))
            found.append((route, namespace + entry.name, kwargs))
    return found


ROUTES = _routes()
# Pages that are not a route of the dashboard, or that a route reaches only in a state: (id, path, who, what to wait
# for when the page draws itself after loading).
EXTRA = [
    ("login", "/login/", "visitor", None),
    ("admin-login", "/admin/login/", "visitor", None),
    ("error-404", "/no/such/page/", "user", None),
    ("error-404-visitor", "/no/such/page/", "visitor", None),
    ("error-400", "/fails/400/", "user", None),
    ("error-403", "/fails/403/", "user", None),
    ("error-500", "/fails/500/", "user", None),
    ("api-docs", "/api/docs/", "user", ".swagger-ui .opblock-tag"),  # Swagger UI draws once the schema is read
    ("admin-index", "/admin/", "staff", None),
    ("admin-token-add", "/admin/accounts/apitoken/add/", "staff", None),  # Engram's own add view
    ("admin-undo-entry", "/admin/cognition/undoentry/{undo}/change/", "staff", None),  # Engram's own change form
]
ADMIN_MODELS = sorted(admin.site._registry, key=lambda model: model._meta.label)


def test_the_walk_finds_the_pages_and_their_objects():
    # A walk that found nothing would make every test below vanish, not fail.
    names = {name for _, name, _ in ROUTES}
    assert {"dashboard:home", "dashboard:memory-detail", "projects:project-detail", "reasoning:notebook-detail",
            "chat:session", "cubes:cube-detail", "dashboard:cognition-pulse"} <= names
    assert ("memories/<uuid:memory_id>/", "dashboard:memory-detail", ("memory_id",)) in ROUTES
    assert not any(name.startswith(("admin:", "accounts_api:")) for name in names)


@dataclass
class Site:
    url: str
    demo: object
    pages: dict  # who -> a Playwright page signed in as them (the visitor: not signed in)
    extra: dict  # ids of objects EXTRA's paths name


@pytest.fixture(scope="module")
def site(django_db_setup, django_db_blocker):
    assert AXE.is_file(), f"{AXE} is missing: run `make frontend` (npm ci in frontend/) to install axe-core"
    with django_db_blocker.unblock(), override_settings(ROOT_URLCONF="tests.dashboard.error_urls"), \
            pytest.MonkeyPatch.context() as patch:
        # Playwright's sync API runs an event loop in this thread: Django would refuse each test's transaction.
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
        try:
            owner = UserFactory(username="alice")
            UserFactory(username="carol", is_staff=True, is_superuser=True)
            demo = seed(owner, UserFactory(username="bob"), memories=24)
            extra = {"undo": UndoEntry.objects.filter(owner=owner).first().pk}
            with serving(ASGIStaticFilesHandler(application), lifespan="on") as url, sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                pages = {}
                for who, username in (("visitor", None), ("user", "alice"), ("staff", "carol")):
                    page = browser.new_context(viewport=DESKTOP).new_page()
                    if username:
                        log_in(page, url + "/", username)
                        page.wait_for_url(url + "/")
                    pages[who] = page
                yield Site(url, demo, pages, extra)
                browser.close()
        finally:
            # The pages' queries were counted in this process for the gardener: written now, before the flush resets
            # the ids, so that no later test's user inherits them.
            activity_flush()
            call_command("flush", interactive=False, verbosity=0)


def _argument(name: str, kwarg: str, demo):
    """The id of the seeded object a route's keyword argument names; None when the demo has none (the test then
    fails, asking for one)."""
    namespace, _, short = name.partition(":")
    if kwarg == "name":  # the two routes named by a string, not an object
        return {"projects": demo.export_name, "reasoning": demo.model}.get(namespace)
    if namespace == "trash":  # the trash's actions take a kind and an id: the demo's deleted memory
        return {"kind": "memory", "item_id": demo.deleted.pk}.get(kwarg)
    if kwarg == "session_id":
        found = {"chat": demo.chat_session, "reasoning": demo.thought_session,
                 "dashboard": demo.cg_session}.get(namespace)
    elif kwarg == "run_id":
        found = (demo.cell_run if namespace == "reasoning" else demo.benchmark if "benchmark" in short
                 else demo.dream if "dream" in short else None)
    elif kwarg == "node_id":
        found = demo.quarantined if "quarantine" in short else demo.forgotten if short == "cognition-restore" else None
    elif kwarg == "entity_id":
        found = {"decision": demo.decision, "issue": demo.issue, "edge": demo.edge,
                 "episode": demo.episode}.get(short.split("-")[0])
    else:
        found = {"memory_id": demo.memories[0], "cube_id": demo.cubes["work"], "project_id": demo.project,
                 "token_id": demo.token, "task_id": demo.task, "blind_spot_id": demo.blind_spot,
                 "notebook_id": demo.notebook, "cell_id": demo.cell}.get(kwarg)
    return None if found is None else found.pk


def _axe(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate("options => axe.run(document, options).then(result => result.violations)", AXE_OPTIONS)


def _report(where: str, violations: list[dict]) -> str:
    lines = [f"{where}: {len(violations)} accessibility rule(s) broken"]
    for violation in violations:
        lines.append(f"  {violation['id']} [{violation['impact']}] {violation['help']} ({violation['helpUrl']})")
        for node in violation["nodes"][:6]:
            lines.append(f"    {' '.join(map(str, node['target']))}: {node['failureSummary'].splitlines()[-1].strip()}")
        if len(violation["nodes"]) > 6:
            lines.append(f"    ... and {len(violation['nodes']) - 6} more")
    return "\n".join(lines)


def _check(page, url: str, where: str, ready: str | None = None) -> None:
    """Open ``url`` (already known to be an HTML page) and run axe at desktop and phone width."""
    broken = []
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        page.goto(url)
        page.wait_for_load_state("load")
        if ready:
            page.locator(ready).first.wait_for()
        violations = _axe(page)
        if violations:
            broken.append(_report(f"{where} at {viewport['width']}px", violations))
    page.set_viewport_size(DESKTOP)
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("route,name,kwargs", ROUTES, ids=[name for _, name, _ in ROUTES])
def test_every_dashboard_page_passes_axe(site, route, name, kwargs):
    missing = [kwarg for kwarg in kwargs if _argument(name, kwarg, site.demo) is None]
    assert not missing, (f"{name} ({route}) takes {', '.join(missing)}, which the demo account has no object for: "
                         "seed one in scripts/demo.py and name it in _argument")
    path = reverse(name, kwargs={kwarg: _argument(name, kwarg, site.demo) for kwarg in kwargs})
    page = site.pages["user"]
    answer = page.request.get(site.url + path, max_redirects=0)
    # A route that is not a page is an action, a redirect or data: each says so properly, and has nothing to check.
    if answer.status == 405:
        assert "POST" in answer.headers.get("allow", ""), f"{name} ({path}) refuses GET but names no POST"
        return
    assert answer.status != 404, f"{name} ({path}) answers 404 for the demo's object: seed the right one"
    if 300 <= answer.status < 400:
        assert answer.headers.get("location"), f"{name} ({path}) redirects nowhere"
        return
    assert answer.status == 200, f"{name} ({path}) answers {answer.status}"
    kind = answer.headers.get("content-type", "")
    if not kind.startswith("text/html"):
        assert kind, f"{name} ({path}) answers without a content type"
        return
    _check(page, site.url + path, f"{name} ({path})")


@pytest.mark.parametrize("path,who,ready", [entry[1:] for entry in EXTRA], ids=[entry[0] for entry in EXTRA])
def test_the_error_login_admin_and_api_docs_pages_pass_axe(site, path, who, ready):
    url = site.url + path.format(**site.extra)
    answer = site.pages[who].request.get(url, max_redirects=0)
    assert answer.headers.get("content-type", "").startswith("text/html"), f"{path}: {answer.status} {answer.headers}"
    _check(site.pages[who], url, path, ready)


@pytest.mark.parametrize("model", ADMIN_MODELS, ids=[model._meta.label_lower for model in ADMIN_MODELS])
def test_every_admin_list_and_form_passes_axe(site, model):
    # At desktop width only: Django's admin is not laid out for phones, and its pages differ by little but data.
    page, opts = site.pages["staff"], model._meta
    pages = [reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")]
    if (first := model._default_manager.order_by("pk").first()) is not None:
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[first.pk]))
    broken = []
    for path in pages:
        page.goto(site.url + path)
        if violations := _axe(page):
            broken.append(_report(path, violations))
    assert not broken, "\n".join(broken)


def test_the_expired_form_page_passes_axe(site):
    # A form sent without its CSRF token (a page left open past its session) gets templates/403_csrf.html.
    page = site.pages["visitor"]
    page.goto(site.url + "/login/")
    page.evaluate("document.querySelector('input[name=csrfmiddlewaretoken]').remove()")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")
    assert "The form could not be sent" in page.content()
    violations = _axe(page)
    assert not violations, _report("the CSRF failure page", violations)
    page.context.clear_cookies()


def test_axe_finds_what_it_should(site):
    # The check itself: a page with an unlabelled field, an image without alt and grey-on-white text fails.
    page = site.pages["visitor"]
    page.goto(site.url + "/login/")
    page.evaluate("""() => { document.querySelector('main').insertAdjacentHTML('beforeend',
        '<input type="text"><img src="/static/img/logo.svg"><p style="color:#bbb;background:#fff">faint</p>'); }""")
    found = {violation["id"] for violation in _axe(page)}
    assert {"label", "image-alt", "color-contrast"} <= found, found
    report = _report("/login/", _axe(page))
    assert "label [critical]" in report and "/login/" in report





def test_the_api_docs_in_use_pass_axe(site):
    # Swagger UI draws more as it is used: an operation opened, tried and executed, then the Authorize window.
    page = site.pages["user"]
    page.goto(site.url + "/api/docs/")
    operation = page.locator(".swagger-ui .opblock-get").first
    operation.locator(".opblock-summary-control").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()
    operation.locator(".live-responses-table").wait_for()
    operation.locator(".opblock-summary").first.hover()  # what a pointer over the operation shows: its copy button
    operation.locator(".opblock-summary .copy-to-clipboard").first.wait_for()
    broken = _axe(page)
    assert not broken, _report("/api/docs/ with an operation executed", broken)
    page.locator(".swagger-ui .auth-wrapper .btn.authorize").click()
    page.get_by_role("dialog", name="Available authorizations").wait_for()
    broken = _axe(page)
    assert not broken, _report("/api/docs/ with the Authorize window open", broken)


def test_the_menu_palette_and_shortcuts_pass_axe_once_open(site):
    # What every page hides until asked: the phone's menu, the command palette with suggestions, the shortcuts.
    page = site.pages["user"]
    page.set_viewport_size(PHONE)
    page.goto(site.url + "/")
    page.get_by_role("navigation", name="Main").get_by_role("button", name="Menu").click()
    page.locator("#nav-menu").get_by_role("link", name="Memories").wait_for()
    broken = _axe(page)
    assert not broken, _report("the phone's menu, open", broken)
    page.set_viewport_size(DESKTOP)
    page.goto(site.url + "/")
    page.locator("[data-palette-open]").click()
    page.get_by_role("combobox").fill("tomato")
    page.get_by_role("listbox", name="Suggestions").get_by_role("option").first.wait_for()
    broken = _axe(page)
    assert not broken, _report("the command palette with suggestions", broken)
    page.keyboard.press("Escape")
    page.get_by_role("link", name="Keyboard shortcuts").click()
    page.get_by_role("dialog", name="Keyboard shortcuts").wait_for()
    broken = _axe(page)
    assert not broken, _report("the keyboard shortcuts", broken)
