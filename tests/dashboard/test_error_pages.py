"""Error pages in the app's layout (issue 21): a wrong URL, a bad or foreign id, a refused or broken request each
get a page that says what happened and offers a way on, with the navigation; the API keeps its JSON envelope; the
500 page renders without the database."""
import pytest
from django.test import Client, RequestFactory
from django.urls import reverse
from playwright.sync_api import expect, sync_playwright

from apps.core.api.errors import server_error_view
from tests.browser import CHROMIUM, CHROMIUM_ARGS, PHONE, assert_no_sideways_scroll, log_in

FAILING = pytest.mark.urls("tests.dashboard.error_urls")


def _page(response) -> str:
    return response.content.decode()


@pytest.mark.django_db
def test_a_wrong_url_gets_the_app_page_with_the_navigation_and_ways_on(client, user):
    client.force_login(user)
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert "404.html" in [template.name for template in response.templates]
    page = _page(response)
    assert "There is nothing here" in page and 'aria-label="Main"' in page
    assert "<code>/no/such/page/</code>" in page
    assert reverse("dashboard:cognition-trash") in page and reverse("dashboard:search") in page


@pytest.mark.django_db
def test_another_users_memory_is_the_same_404_as_a_missing_one(client, user, other_user, store):
    theirs = store(other_user, "Bob's private note about the garden shed key.")
    client.force_login(user)
    response = client.get(reverse("dashboard:memory-detail", args=[theirs.pk]))
    assert response.status_code == 404
    assert "There is nothing here" in _page(response) and "garden shed" not in _page(response)


@pytest.mark.django_db
def test_a_visitor_who_is_not_logged_in_is_offered_the_login(client):
    page = _page(client.get("/no/such/page/"))
    assert reverse("dashboard:login") in page and reverse("dashboard:cognition-trash") not in page


@pytest.mark.django_db
@FAILING
def test_a_bad_request_and_a_refusal_get_their_pages(client, user):
    client.force_login(user)
    bad, refused = client.get("/fails/400/"), client.get("/fails/403/")
    assert (bad.status_code, refused.status_code) == (400, 403)
    assert "could not be understood" in _page(bad) and 'aria-label="Main"' in _page(bad)
    assert "You may not open this" in _page(refused) and user.username in _page(refused)


@pytest.mark.django_db
@FAILING
def test_the_api_keeps_its_envelope_for_every_error():
    client = Client(raise_request_exception=False)
    for status, code in ((400, "bad_request"), (403, "permission_denied"), (500, "server_error")):
        response = client.get(f"/api/v1/fails/{status}/")
        assert response.status_code == status and response.json()["error"]["code"] == code


@pytest.mark.django_db
@FAILING
def test_a_server_error_gets_the_app_page():
    response = Client(raise_request_exception=False).get("/fails/500/")
    assert response.status_code == 500
    assert "Something went wrong on our side" in _page(response) and reverse("healthz") in _page(response)


def test_the_500_page_renders_without_the_database():
    # No django_db mark: any query in the handler or the template fails the test.
    response = server_error_view(RequestFactory().get("/somewhere/"))
    assert response.status_code == 500
    assert "Something went wrong on our side" in _page(response) and "Engram" in _page(response)


def test_the_500_page_renders_even_when_the_urls_cannot_be_reversed(settings):
    settings.ROOT_URLCONF = "tests.dashboard.empty_urls"  # what failed may be the URLconf itself
    response = server_error_view(RequestFactory().get("/somewhere/"))
    assert response.status_code == 500 and 'href="/healthz"' in _page(response)


def test_a_csrf_failure_says_the_form_expired():
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("dashboard:login"), {"username": "alice", "password": "x"})
    assert response.status_code == 403
    assert "The form could not be sent" in _page(response)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_404_page_in_a_browser_has_the_navigation_and_fits_a_phone(live_server, user, shoot):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=PHONE).new_page()
        log_in(page, live_server.url + "/")
        page.goto(live_server.url + "/memories/00000000-0000-0000-0000-000000000000/")
        expect(page.get_by_role("heading", name="There is nothing here")).to_be_visible()
        nav = page.get_by_role("navigation", name="Main")
        nav.get_by_role("button", name="Menu").click()  # a phone folds the links behind it
        expect(nav.get_by_role("link", name="Memories")).to_be_visible()
        nav.get_by_role("button", name="Menu").click()
        assert page.title() == "Page not found · Engram"
        assert_no_sideways_scroll(page, "404")
        shoot(page, "error-404")
        page.get_by_role("link", name="Go to the home page").click()
        expect(page.get_by_role("heading", name="Hello, alice")).to_be_visible()
        browser.close()
