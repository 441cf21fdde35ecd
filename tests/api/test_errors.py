"""Every failure of the REST API, including Django's own 404 and 500, comes in the one envelope."""
import json
from io import BytesIO
from urllib.parse import unquote

import pytest
from django.core.handlers.asgi import ASGIRequest
from django.test import RequestFactory

from apps.core.api.errors import server_error_view
from apps.core.middleware import EncodedSlashIsNotFoundMiddleware
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db


def test_no_credentials_is_401_with_a_bearer_challenge(anonymous):
    response = anonymous.get("/api/v1/memories/")
    assert_error(response, 401, code="not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("header", ["Bearer eng_not-a-real-token", "Bearer", "Bearer two parts"])
def test_a_bad_token_is_401(anonymous, header):
    anonymous.credentials(HTTP_AUTHORIZATION=header)
    assert_error(anonymous.post("/api/v1/memories/retrieve/", {}, format="json"), 401, code="authentication_failed")


def test_an_unsupported_method_is_405(api):
    assert_error(api.put("/api/v1/memories/", {}, format="json"), 405, code="method_not_allowed")


def test_an_unknown_api_path_is_a_json_404(api):
    error = assert_error(api.get("/api/v1/no-such-thing/"), 404, code="not_found")
    assert "/api/docs/" in error["message"]


def test_a_server_error_under_api_is_a_json_500():
    response = server_error_view(RequestFactory().get("/api/v1/memories/"))
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert b'"code": "server_error"' in response.content


def test_a_server_error_elsewhere_keeps_the_html_page():
    response = server_error_view(RequestFactory().get("/memories/"))
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_a_post_without_the_trailing_slash_is_not_redirected_and_stores_nothing(api):
    from apps.memories.models import Memory

    response = api.post("/api/v1/memories", {"content": "lost?"}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["message"].endswith("API paths end with a slash (/api/v1/memories/).")
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_pages_still_get_the_slash_redirect(client):
    assert client.get("/admin").status_code == 301


def test_a_database_that_does_not_answer_is_a_503_with_retry_after(anonymous, make_token, user, monkeypatch):
    """What a caller sees when every pooled connection stays busy past the pool's timeout (psycopg_pool's
    PoolTimeout, an OperationalError) or the database is restarting: retry later, not a 500."""
    from django.db import OperationalError

    from apps.accounts import authentication

    raw = make_token(user)
    anonymous.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    def busy(**kwargs):
        raise OperationalError("couldn't get a connection after 10.00 sec")

    monkeypatch.setattr(authentication, "token_authenticate", busy)
    response = anonymous.post("/api/v1/memories/retrieve/", {"text": "coffee"}, format="json")
    error = assert_error(response, 503, code="database_unavailable")
    assert "Retry in 5 seconds" in error["message"]
    assert response["Retry-After"] == "5"


def encoded_slash_middleware_answer(request):
    return EncodedSlashIsNotFoundMiddleware(lambda request: "routed")(request)


@pytest.mark.parametrize("raw", ["/api/v1/reasoning/sessions/a%2Frestore/", "/api/v1/cubes/x%2frestore/"])
def test_an_encoded_slash_in_an_api_path_is_a_404_not_another_endpoint(raw):
    """Servers decode %2F before Django routes: DELETE .../sessions/a%2Frestore/ reached restore/ and was a 405."""
    wsgi = RequestFactory().delete(unquote(raw), REQUEST_URI=raw + "?q=a%2Fb")
    scope = {"type": "http", "method": "DELETE", "path": unquote(raw), "raw_path": raw.encode(), "query_string": b"",
             "headers": [], "root_path": ""}
    for request in (wsgi, ASGIRequest(scope, BytesIO())):
        response = encoded_slash_middleware_answer(request)
        assert response.status_code == 404
        assert json.loads(response.content)["error"]["code"] == "not_found"


def test_an_encoded_slash_in_the_query_or_outside_the_api_is_routed():
    assert encoded_slash_middleware_answer(
        RequestFactory().get("/api/v1/memories/", REQUEST_URI="/api/v1/memories/?cube=a%2Fb")) == "routed"
    assert encoded_slash_middleware_answer(RequestFactory().get("/a/b/", REQUEST_URI="/a%2Fb/")) == "routed"
