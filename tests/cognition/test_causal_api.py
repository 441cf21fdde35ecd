"""Context Graph's reasoning over REST: /api/v1/cognition/causal/{query,path,expand}/ and nodes/<id>/entailment/
answer the MCP tools' data, in the OpenAPI schema; errors in the envelope naming the field; a concept that matches
nothing is a 404 naming the nearest nodes; another user's nodes are never named nor reached."""
import pytest

from tests.cognition.causal_graphs import (
    CONFOUNDED, CONFOUNDED_LINKS, ROUTE_LINKS, ROUTES, SUPPORT, SUPPORT_LINKS, TAXONOMY, TAXONOMY_LINKS, draw,
)
from tests.cognition.test_api import _error

pytestmark = pytest.mark.django_db

BASE = "/api/v1/cognition"
OPERATIONS = {f"{BASE}/causal/query/": "cognition_causal_query", f"{BASE}/causal/path/": "cognition_causal_path",
              f"{BASE}/causal/expand/": "cognition_causal_expand",
              f"{BASE}/nodes/{{node_id}}/entailment/": "cognition_nodes_entailment"}


def test_the_operations_are_in_the_schema(api):
    paths = api.get("/api/schema/?format=json").json()["paths"]
    for path, operation_id in OPERATIONS.items():
        assert paths[path]["get"]["operationId"] == operation_id, path
        assert set(paths[path]) == {"get"}


def test_each_endpoint_answers_the_tools_data(api, user):
    routes = draw(user, ROUTES, ROUTE_LINKS)
    confounded = draw(user, CONFOUNDED, CONFOUNDED_LINKS)
    support = draw(user, SUPPORT, SUPPORT_LINKS)
    taxonomy = draw(user, TAXONOMY, TAXONOMY_LINKS)
    s, a, t = (str(routes[name].pk) for name in ("S", "A", "T"))

    path = api.get(f"{BASE}/causal/path/", {"start_concept": s, "end_concept": t, "include_alternatives": "true"})
    assert path.status_code == 200, path.content
    body = path.json()
    assert [item["node_id"] for item in body["path"]] == [s, a, t] and body["path_confidence"] == 0.81
    assert body["alternative_confidences"] == [0.648, 0.57, 0.5]

    observed = api.get(f"{BASE}/causal/query/", {"action": "ice cream sales at the seaside",
                                                 "intervention_type": "observe"}).json()
    assert {entry["relation"] for entry in observed["results"]} == {"cause", "common_cause", "effect"}
    counterfactual = api.get(f"{BASE}/causal/query/", {"action": str(support["X"].pk),
                                                       "intervention_type": "counterfactual"}).json()
    assert {entry["node_id"] for entry in counterfactual["results"]} == {str(support[n].pk) for n in ("A", "B")}
    assert {entry["supported_by"] for entry in counterfactual["still_supported"]} == {str(support["W"].pk)}
    done = api.get(f"{BASE}/causal/query/", {"action": str(confounded["X"].pk)}).json()
    assert [entry["node_id"] for entry in done["results"]] == [str(confounded["Z"].pk)]

    expanded = api.get(f"{BASE}/causal/expand/", {"concept": t, "direction": "causes", "max_hops": 1}).json()
    assert {tuple(chain["nodes"]) for chain in expanded["paths"]} == {
        (s, t), (a, t), (str(routes["C"].pk), t), (str(routes["D"].pk), t)}
    assert expanded["paths"][0]["strength"] == 0.9

    cone = api.get(f"{BASE}/nodes/{taxonomy['cat'].pk}/entailment/", {"max_depth": 1}).json()
    assert cone["ancestors"] == [str(taxonomy["mammal"].pk)] and cone["entailment_confidence"] == 0.8


@pytest.mark.parametrize("url, query, field", [
    ("causal/query/", {}, "action"),
    ("causal/query/", {"action": "heat", "intervention_type": "maybe"}, "intervention_type"),
    ("causal/query/", {"action": "heat", "surprise": "1"}, "surprise"),
    ("causal/path/", {"start_concept": "heat"}, "end_concept"),
    ("causal/path/", {"start_concept": "heat", "end_concept": "sales", "max_hops": 7}, "max_hops"),
    ("causal/path/", {"start_concept": "heat", "end_concept": "sales", "path_type": "magic"}, "path_type"),
    ("causal/expand/", {"concept": "heat", "min_weight": 2}, "min_weight"),
    ("causal/expand/", {"concept": "heat", "direction": "up"}, "direction"),
    ("nodes/0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a/entailment/", {"max_depth": 11}, "max_depth"),
    ("nodes/not-a-node/entailment/", {}, "node_id"),
])
def test_bad_input_is_400_naming_the_field(api, user, url, query, field):
    _error(api.get(f"{BASE}/{url}", query), 400, field)


def test_a_concept_that_matches_nothing_is_404_with_the_nearest(api, user):
    draw(user, CONFOUNDED, CONFOUNDED_LINKS)
    error = _error(api.get(f"{BASE}/causal/expand/", {"concept": "lattice gauge quantum chromodynamics"}), 404,
                   "concept")
    assert error["code"] == "concept_unresolved" and len(error["details"]["nearest"]) == 3


def test_another_users_nodes_are_not_found(api, bob_api, user, other_user):
    hers = draw(user, TAXONOMY, TAXONOMY_LINKS)
    draw(other_user, {"X": "Bob keeps notes on his tax filings."}, [])
    cat = str(hers["cat"].pk)
    _error(bob_api.get(f"{BASE}/nodes/{cat}/entailment/"), 404, "node_id")
    _error(bob_api.get(f"{BASE}/causal/query/", {"action": cat}), 404, "action")
    _error(bob_api.get(f"{BASE}/causal/path/", {"start_concept": "tax filings", "end_concept": cat}), 404,
           "end_concept")
    error = _error(bob_api.get(f"{BASE}/causal/expand/", {"concept": TAXONOMY["cat"]}), 404, "concept")
    assert not {near["node_id"] for near in error["details"]["nearest"]} & {str(m.pk) for m in hers.values()}
