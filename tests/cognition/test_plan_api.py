"""Context Graph's planning and benchmarks over REST: /api/v1/cognition/plans/, reflect/, retrieval/compare/,
benchmarks/ and benchmarks/<run_id>/ answer the MCP tools' data, in the OpenAPI schema; errors in the envelope naming
the field; a read token may plan, reflect and compare but not start a benchmark; another user's session and run are
not found."""
import pytest
from django.test import override_settings

from tests.cognition.causal_graphs import draw
from tests.cognition.support import new_session, set_state
from tests.cognition.test_api import _error
from tests.cognition.test_benchmark_run_compare import GRAPH, LINKS, QUERY
from tests.cognition.test_plan import AUTH, AUTH_LINKS, GOAL

pytestmark = pytest.mark.django_db

BASE = "/api/v1/cognition"
OPERATIONS = {(f"{BASE}/plans/", "post"): "cognition_search_plan", (f"{BASE}/reflect/", "post"): "cognition_reflect",
              (f"{BASE}/retrieval/compare/", "post"): "cognition_retrieval_compare",
              (f"{BASE}/benchmarks/", "post"): "cognition_benchmarks_start",
              (f"{BASE}/benchmarks/{{run_id}}/", "get"): "cognition_benchmarks_detail"}


def test_the_operations_are_in_the_schema(api):
    paths = api.get("/api/schema/?format=json").json()["paths"]
    for (path, method), operation_id in OPERATIONS.items():
        assert paths[path][method]["operationId"] == operation_id, path
        assert set(paths[path]) == {method}


@override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=600)
def test_each_endpoint_answers_the_tools_data(api, user):
    draw(user, AUTH, AUTH_LINKS)
    compared = draw(user, GRAPH, LINKS)
    session = set_state(new_session(user), entropy=0.2, coherence=0.2, interactions=4)

    plan = api.post(f"{BASE}/plans/", {"goal": GOAL, "query_types": ["code"], "max_queries": 1}, format="json")
    assert plan.status_code == 200, plan.content
    [query] = plan.json()["queries"]
    assert query["type"] == "code" and "vault_rotate()" in query["query"] and 0 < query["expected_recall"] <= 1

    reflection = api.post(f"{BASE}/reflect/", {"goal": GOAL, "session_id": str(session.pk), "max_steps": 1},
                          format="json")
    assert reflection.status_code == 200, reflection.content
    assert [step["tool"] for step in reflection.json()["steps"]] == ["trigger_dream"]

    comparison = api.post(f"{BASE}/retrieval/compare/", {
        "query": QUERY, "top_k": 5, "ground_truth_node_ids": [str(compared["A"].pk), str(compared["B"].pk)]},
        format="json")
    assert comparison.status_code == 200, comparison.content
    body = comparison.json()
    assert body["metrics"]["recall"] == {"cosine_baseline": 0.5, "fuse_moe": 0.5, "causal_pathfinding": 1.0}
    assert set(body["results"]) == {"cosine_baseline", "fuse_moe", "causal_pathfinding"}

    started = api.post(f"{BASE}/benchmarks/", {"needle_count": 5, "haystack_size": 100, "seed": 7,
                                               "test_type": "semantic_similarity"}, format="json")
    assert started.status_code == 200, started.content
    run = started.json()
    assert run["status"] == "completed" and run["test_details"]["seed"] == 7
    assert run["test_details"]["by_type"].keys() == {"semantic_similarity"}
    polled = api.get(f"{BASE}/benchmarks/{run['run_id']}/")
    assert polled.status_code == 200 and polled.json()["fuse_moe_accuracy"] == run["fuse_moe_accuracy"]


@override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=0)
def test_a_running_benchmark_is_polled_and_a_second_is_a_409(api, user):
    started = api.post(f"{BASE}/benchmarks/", {"needle_count": 5, "haystack_size": 300}, format="json").json()
    assert started["status"] == "running" and started["progress"]["phase"] == "storing"
    again = _error(api.post(f"{BASE}/benchmarks/", {}, format="json"), 409)
    assert again["code"] == "benchmark_running" and again["details"]["run_id"] == started["run_id"]
    assert api.get(f"{BASE}/benchmarks/{started['run_id']}/").json()["progress"]["stored"] == 200


@pytest.mark.parametrize(("path", "body", "field"), [
    ("plans/", {"goal": "short"}, "goal"),
    ("plans/", {"goal": GOAL, "query_types": ["visual"]}, "query_types"),
    ("plans/", {"goal": GOAL, "max_queries": 8}, "max_queries"),
    ("plans/", {"goal": GOAL, "extra": 1}, "extra"),
    ("reflect/", {"goal": GOAL, "max_steps": 0}, "max_steps"),
    ("reflect/", {"goal": GOAL, "session_id": "nope"}, "session_id"),
    ("retrieval/compare/", {"query": ""}, "query"),
    ("retrieval/compare/", {"query": QUERY, "methods": ["x"]}, "methods"),
    ("retrieval/compare/", {"query": QUERY, "ground_truth_node_ids": ["nope"]}, "ground_truth_node_ids"),
    ("benchmarks/", {"needle_count": 4}, "needle_count"),
    ("benchmarks/", {"haystack_size": 10_001}, "haystack_size"),
    ("benchmarks/", {"baseline_model": "gpt-5"}, "baseline_model"),
])
def test_bad_input_is_a_400_naming_the_field(api, path, body, field):
    _error(api.post(f"{BASE}/{path}", body, format="json"), 400, field)


def test_a_read_token_may_plan_but_not_start_a_benchmark(user, api_client_for):
    reader = api_client_for(user, scopes=("read",))
    assert reader.post(f"{BASE}/plans/", {"goal": GOAL}, format="json").status_code == 200
    assert reader.post(f"{BASE}/retrieval/compare/", {"query": QUERY}, format="json").status_code == 200
    assert reader.post(f"{BASE}/reflect/", {"goal": GOAL}, format="json").status_code == 200
    _error(reader.post(f"{BASE}/benchmarks/", {}, format="json"), 403)


@override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=600)
def test_bob_reaches_none_of_alices(api, bob_api, user):
    compared = draw(user, GRAPH, LINKS)
    session = set_state(new_session(user), entropy=0.9, coherence=0.1, interactions=3)
    run = api.post(f"{BASE}/benchmarks/", {"needle_count": 5, "haystack_size": 100}, format="json").json()
    _error(bob_api.get(f"{BASE}/benchmarks/{run['run_id']}/"), 404, "run_id")
    _error(bob_api.get(f"{BASE}/benchmarks/not-a-uuid/"), 404, "run_id")
    _error(bob_api.post(f"{BASE}/reflect/", {"goal": GOAL, "session_id": str(session.pk)}, format="json"), 404,
           "session_id")
    _error(bob_api.post(f"{BASE}/retrieval/compare/", {"query": QUERY, "ground_truth_node_ids": [
        str(compared["A"].pk)]}, format="json"), 404, "ground_truth_node_ids[0]")
    theirs = bob_api.post(f"{BASE}/retrieval/compare/", {"query": QUERY}, format="json").json()
    assert all(nodes == [] for nodes in theirs["results"].values())
    assert bob_api.post(f"{BASE}/plans/", {"goal": GOAL}, format="json").json()["goal_pool_size"] == 0
