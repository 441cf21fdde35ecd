"""Schemathesis over every operation of /api/schema/, in process: no input answers a 5xx, and every answer is
documented (status code, content type, body schema).

Each operation is one test with its own transaction, a fresh token of a normal user and one of each resource
(a memory, a cube, a notebook, ...) whose ids the fuzzer's path parameters draw from half the time, so that
detail, update and delete operations answer more than 404. Generation is deterministic (the same cases every
run) and bounded (MAX_EXAMPLES per operation, plus schemathesis's coverage cases: boundaries, missing and
wrong-typed fields, undocumented methods).
"""
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance, response_schema_conformance, status_code_conformance,
)

from apps.cognition.models import BlindSpot
from apps.projects.models import Project
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)
from tests.projects.test_api import make_episode

MAX_EXAMPLES = 10
# The operations of the schema: a new endpoint changes this count, and so cannot skip the fuzzer unnoticed.
OPERATION_COUNT = 148

CONFIG = schemathesis.Config.from_dict({
    "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "mode": "all", "database": "none"},
    "phases": {"examples": {"enabled": True}, "coverage": {"enabled": True}, "fuzzing": {"enabled": True},
               "stateful": {"enabled": False}},
    "suppress-health-check": ["all"],
})
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application(), config=CONFIG)

# Path parameter name -> the id of the resource the current test made (filled by the `world` fixture).
WORLD: dict[str, str] = {}
TOKEN_REVOKE = ("DELETE", "/api/v1/tokens/{token_id}/")


def world_key(path: str, parameter: str) -> str:
    """The WORLD entry a path parameter takes: its name, except where two kinds of resource share one."""
    if path.startswith("/api/v1/chat/") and parameter == "session_id":
        return "chat_session_id"
    if path.startswith("/api/v1/cognition/") and parameter == "session_id":
        return "cg_session_id"
    if path.startswith("/api/v1/exports/") and parameter == "name":
        return "export_name"
    return parameter


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    """Half the cases keep the generated ids (mostly not found), half address the resources the test made."""
    real = {name: WORLD[world_key(context.operation.path, name)] for name in path_parameters or {}
            if world_key(context.operation.path, name) in WORLD}
    if not real:
        return st.just(path_parameters)
    return st.sampled_from([path_parameters, {**path_parameters, **real}])


@pytest.fixture
def world(user, other_user, make_token, monkeypatch, settings):
    """One of each resource of `user`, made through the API; WORLD maps path parameters to their ids."""
    # npm install of fuzzed names must fail at once instead of reaching (or waiting for) the registry.
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    settings.ENGRAM_NOTEBOOK_INSTALL_TIMEOUT_SECONDS = 20
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(user, name='seed')}")

    def post(url, body, status=201):
        response = api.post(url, body, format="json")
        assert response.status_code == status, (url, response.content)
        return response.json()

    first = post("/api/v1/memories/", {"content": "The nightly import batches rows with COPY", "tags": ["import"]})
    second = post("/api/v1/memories/", {"content": "Indexes are rebuilt after the import, not per row"})
    post("/api/v1/graph/links/", {"source": first["id"], "target": second["id"]})
    cube = post("/api/v1/cubes/", {"id": "fuzz-cube", "name": "Fuzz cube"})
    post(f"/api/v1/cubes/{cube['id']}/members/", {"user": other_user.username, "role": "reader"}, status=200)
    project = post("/api/v1/projects/", {"name": "Fuzzed project"})
    decision = post("/api/v1/decisions/", {"project": project["id"], "title": "Use COPY", "reasoning": "Faster"})
    issue = post("/api/v1/issues/", {"project": project["id"], "title": "Import is slow"})
    edge = post("/api/v1/sharp-edges/", {"project": project["id"], "title": "COPY needs superuser",
                                         "workaround": "Use COPY FROM STDIN"})
    thought = post("/api/v1/reasoning/thoughts/", {"thought": "Why is the import slow?", "thought_number": 1,
                                                   "total_thoughts": 2, "next_thought_needed": True})
    notebook = post("/api/v1/reasoning/notebooks/", {"title": "Fuzz notebook", "language": "javascript"})["notebook"]
    cell = post(f"/api/v1/reasoning/notebooks/{notebook['id']}/cells/",
                {"cell_type": "code", "content": "console.log(1 + 1)", "filename": "main.js"})
    # Episodes come from an ended Mind session, which REST does not start: made through the services.
    episode = make_episode(user, Project.objects.get(pk=project["id"]))
    chat = post("/api/v1/chat/", {"query": "How does the import work?"}, status=200)
    export = post("/api/v1/exports/", {"project": project["id"], "format": "json"})
    spare = post("/api/v1/tokens/", {"name": "spare", "scopes": ["read"]})
    rationale = "The import's known slow step, found while profiling it"
    node = post("/api/v1/cognition/nodes/", {"content": "The import spends most of its time on index builds",
                                             "rationale": rationale})
    # The same content again is a near-duplicate: it opens a potential_merge task.
    twin = post("/api/v1/cognition/nodes/", {"content": "The import spends most of its time on index builds",
                                             "rationale": rationale})
    trashed = post("/api/v1/cognition/nodes/", {"content": "The old import ran row by row", "rationale": rationale})
    assert twin["curation_task_id"], twin
    forgotten = post(f"/api/v1/cognition/nodes/{trashed['node_id']}/forget/", {"reason": "obsolete"}, status=200)
    post(f"/api/v1/cognition/scratchpad/{node['session_id']}/fuzz-agent/", {"content": "Try COPY FREEZE"})
    # A recall benchmark handed to the background (no worker runs here): it stays running, so the fuzzer's own starts
    # meet 409 at once instead of storing thousands of memories each.
    settings.ENGRAM_BENCHMARK_INLINE_SECONDS = 0
    benchmark = post("/api/v1/cognition/benchmarks/", {"needle_count": 5, "haystack_size": 100}, status=200)
    # A dream queued for a worker that never comes: the fuzzer's triggers meet 409 (or resume it once interrupted).
    dream = post("/api/v1/cognition/dreams/", {"phase": "nrem"}, status=202)
    # Blind spots come from a dream's REM, which REST does not run: one made as REM records it.
    blind_spot = BlindSpot.objects.create(owner=user, kind=BlindSpot.Kind.THIN, query="index builds",
                                          node_ids=[node["node_id"]], best_score=0.2)
    WORLD.clear()
    WORLD.update({
        "memory_id": first["id"], "source": first["id"], "target": second["id"], "cube_id": cube["id"],
        "user": other_user.username, "project_id": project["id"], "decision_id": decision["decision"]["id"],
        "issue_id": issue["id"], "edge_id": edge["id"], "episode_id": str(episode.pk),
        "session_id": thought["session"]["id"],
        "notebook_id": notebook["id"], "cell_id": cell["id"], "name": "first-principles", "token_id": spare["id"],
        "chat_session_id": chat["session_id"], "export_name": export["name"],
        "node_id": node["node_id"], "task_id": twin["curation_task_id"], "reversal_hash": forgotten["reversal_hash"],
        "cg_session_id": node["session_id"], "agent_id": "fuzz-agent", "run_id": benchmark["run_id"],
        "dream_run_id": dream["dream_run_id"],
        "blind_spot_id": str(blind_spot.pk),
    })
    yield WORLD
    WORLD.clear()


@pytest.fixture
def keep_connection(world):
    """Requests go through Django's real WSGI handler, whose signals close the connection around each request;
    that would end the test's transaction. Django's test client (which `world` used, and which reconnects them
    after each of its requests) disconnects them the same way."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def bearer(user, make_token):
    return make_token(user, name="fuzzer")


@schema.parametrize()
@pytest.mark.django_db
@pytest.mark.timeout(240)
def test_operation_conforms(case, world, keep_connection, bearer, user, make_token):
    token = bearer
    if (case.method, case.path) == TOKEN_REVOKE:
        token = make_token(user, name="revocable")  # this case may revoke it, never the fuzzer's own
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)


def test_every_operation_is_fuzzed():
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == OPERATION_COUNT, sorted(op.label for op in operations)


@pytest.mark.django_db
def test_every_path_parameter_can_address_a_resource(world):
    """A new path parameter needs its resource in `world`, or its operation would only ever be fuzzed to 404."""
    missing = {
        (path, parameter["name"])
        for path, operations in schema.raw_schema["paths"].items()
        for operation in operations.values() if isinstance(operation, dict)
        for parameter in operation.get("parameters", []) if parameter["in"] == "path"
        if world_key(path, parameter["name"]) not in world
    }
    assert not missing
