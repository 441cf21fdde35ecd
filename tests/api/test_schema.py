"""The OpenAPI schema is complete and valid, and the Swagger UI works offline (no CDN)."""
import re

import pytest
import yaml
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command

from tests.chat.test_api import CHAT_OPERATIONS
from tests.cognition.test_api import COGNITION_OPERATIONS
from tests.projects.test_api import MIND_OPERATIONS
from tests.reasoning.test_api import REASONING_OPERATIONS

pytestmark = pytest.mark.django_db

OPERATIONS = {
    "/api/v1/memories/": {"get", "post"},
    "/api/v1/memories/{memory_id}/": {"get", "patch", "delete"},
    "/api/v1/memories/{memory_id}/restore/": {"post"},
    "/api/v1/memories/{memory_id}/links/": {"get"},
    "/api/v1/memories/retrieve/": {"post"},
    "/api/v1/memories/search/": {"post"},
    "/api/v1/memories/batch/": {"post"},
    "/api/v1/tokens/": {"get", "post"},
    "/api/v1/tokens/{token_id}/": {"delete"},
    "/api/v1/cubes/": {"get", "post"},
    "/api/v1/cubes/{cube_id}/": {"get", "patch", "delete"},
    "/api/v1/cubes/{cube_id}/restore/": {"post"},
    "/api/v1/cubes/{cube_id}/members/": {"get", "post"},
    "/api/v1/cubes/{cube_id}/members/{user}/": {"delete"},
    "/api/v1/access/check/": {"post"},
    "/api/v1/graph/snapshot/": {"get"},
    "/api/v1/graph/memories/{memory_id}/boost/": {"post"},
    "/api/v1/graph/memories/{memory_id}/neighbourhood/": {"get"},
    "/api/v1/graph/links/": {"post"},
    "/api/v1/graph/links/{source}/{target}/": {"delete"},
    **MIND_OPERATIONS,
    **CHAT_OPERATIONS,
    **REASONING_OPERATIONS,
    **COGNITION_OPERATIONS,
}


def test_spectacular_validates_without_warnings(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    assert yaml.safe_load(target.read_text())["openapi"].startswith("3.")


def test_schema_lists_every_operation_with_bearer_security_and_error_envelope(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    paths = {path: set(operations) for path, operations in schema["paths"].items() if path.startswith("/api/v1/")}
    assert paths == OPERATIONS
    bearer = schema["components"]["securitySchemes"]["bearerAuth"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")
    for path, operations in OPERATIONS.items():
        for method in operations:
            operation = schema["paths"][path][method]
            assert {"bearerAuth": []} in operation["security"], (path, method)
            assert operation["responses"]["401"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorEnvelope"
            }, (path, method)
    store = schema["components"]["schemas"]["MemoryStoreRequest"]
    assert store["required"] == ["content"]
    assert store["properties"]["importance"]["maximum"] == 1
    # What StrictSerializer refuses is not valid by the schema (apps/core/api/schema.py).
    assert store["additionalProperties"] is False
    assert store["properties"]["content"]["pattern"] == "^[^\\x00]*$"  # DRF's CharField refuses NUL
    assert store["properties"]["content"]["maxLength"] == settings.ENGRAM_MAX_CONTENT_CHARS
    assert schema["components"]["schemas"]["PatchedMemoryUpdateRequest"]["minProperties"] == 1
    assert schema["components"]["schemas"]["MemoryQueryRequest"]["properties"]["sectors"]["minItems"] == 1
    assert schema["paths"]["/api/v1/memories/{memory_id}/"]["patch"]["requestBody"]["required"] is True


def test_swagger_ui_is_served_without_a_cdn(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert not re.search(r"cdn|jsdelivr|unpkg", page, re.IGNORECASE)
    assets = re.findall(r'(?:src|href)="/static/([^"]+)"', page)
    assert any("swagger-ui-bundle" in asset for asset in assets)
    for asset in assets:
        assert finders.find(asset), asset
    assert '<a href="/"><span aria-hidden="true">&larr;</span> Back to Engram</a>' in page  # a way back


def test_options_answers_on_every_endpoint(api):
    """OPTIONS describes any endpoint; DRF's default metadata asked views for a serializer_class and was a 500."""
    for path, operations in OPERATIONS.items():
        url = re.sub(r"\{[^}]+\}", "00000000-0000-0000-0000-000000000000", path)
        response = api.options(url)
        assert response.status_code == 200, (path, response.content)
        allowed = {method.strip().lower() for method in response["Allow"].split(",")}
        assert operations <= allowed, (path, allowed)
