"""decompose_problem: the tree from the problem's own clauses and lifecycle, dependencies, a topological execution
order, maxDepth, and the model's tree repaired (pure functions, no database)."""
import json

import pytest

from apps.core.exceptions import InvalidInput
from apps.reasoning.analysis.common import EvidenceItem, ProblemContext
from apps.reasoning.analysis.decompose import DependencyCycle, decompose, execution_order
from tests.reasoning.test_think import ScriptedModel

WEB_APP = "Build a scalable web application"
COMPOUND = "Build a web app with authentication, payments and search, then deploy it to Kubernetes"
INGRESS_EDGE = EvidenceItem(id="44444444-aaaa-4bbb-8ccc-000000000001", kind="sharp_edge",
                            content="Kubernetes ingress drops websocket connections on deploy", score=0.5)


def run(problem=WEB_APP, max_depth=3, context=ProblemContext(), evidence=(), backend=None):
    return decompose(problem=problem, max_depth=max_depth, context=context, evidence=list(evidence), backend=backend)


def assert_consistent(data, max_depth):
    """Every structural promise of the shape: ids, parents, depths, edges, and a real topological order."""
    nodes = {node["id"]: node for node in data["subProblems"]}
    assert data["totalSubProblems"] == len(nodes) == len(data["subProblems"])
    assert data["maxDepth"] == max_depth
    root = data["subProblems"][0]
    assert root == {"id": "problem-1-0", "description": data["problem"], "depth": 1}
    for node in data["subProblems"][1:]:
        parent = nodes[node["parent"]]
        assert node["id"].startswith(parent["id"] + "-")
        assert node["depth"] == parent["depth"] + 1 <= max_depth
        assert {"from": parent["id"], "to": node["id"], "type": "hierarchical"} in data["dependencies"]
    order = data["executionOrder"]
    assert sorted(order) == sorted(nodes)
    position = {node_id: index for index, node_id in enumerate(order)}
    for edge in data["dependencies"]:
        assert edge["from"] in nodes and edge["to"] in nodes
        assert position[edge["from"]] < position[edge["to"]], edge


def descriptions(data, depth=None):
    return [node["description"] for node in data["subProblems"] if depth is None or node["depth"] == depth]


def test_the_seed_example_decomposes_into_the_phases_of_building_the_thing_named():
    data = run()

    assert data["problem"] == WEB_APP and data["method"] == "deterministic"
    assert_consistent(data, 3)
    phases = descriptions(data, depth=2)
    assert phases == ["Design the architecture of scalable web application",
                      "Implement the core of scalable web application", "Test scalable web application",
                      "Set up the infrastructure to scale scalable web application", "Deploy scalable web application"]
    sequential = [(edge["from"], edge["to"]) for edge in data["dependencies"] if edge["type"] == "sequential"]
    assert sequential == [("problem-1-0-0", "problem-1-0-1"), ("problem-1-0-1", "problem-1-0-2"),
                          ("problem-1-0-2", "problem-1-0-3"), ("problem-1-0-3", "problem-1-0-4")]
    assert data["executionOrder"] == ["problem-1-0", "problem-1-0-0", "problem-1-0-1", "problem-1-0-2",
                                      "problem-1-0-3", "problem-1-0-4"]


def test_a_compound_problem_splits_into_its_own_tasks_in_sequence():
    data = run(problem=COMPOUND, max_depth=4)

    assert_consistent(data, 4)
    tasks = descriptions(data, depth=2)
    assert tasks == ["Build a web app with authentication and payments and search", "Deploy web app to Kubernetes"]
    assert {"from": "problem-1-0-0", "to": "problem-1-0-1", "type": "sequential"} in data["dependencies"]
    # The components the problem names are implemented under the implementation phase.
    implement = next(node for node in data["subProblems"] if node["description"] == "Implement the core of web app")
    parts = [node["description"] for node in data["subProblems"] if node.get("parent") == implement["id"]]
    assert parts == ["Implement authentication", "Implement payments", "Implement search"]
    assert "Release web app" in descriptions(data, depth=3)


@pytest.mark.parametrize("max_depth", [1, 2, 3, 4, 5])
def test_max_depth_is_respected(max_depth):
    data = run(problem=COMPOUND, max_depth=max_depth)
    assert_consistent(data, max_depth)
    assert max(node["depth"] for node in data["subProblems"]) == min(max_depth, 4)
    if max_depth == 1:
        assert data["subProblems"] == [{"id": "problem-1-0", "description": COMPOUND, "depth": 1}]
        assert data["executionOrder"] == ["problem-1-0"]


@pytest.mark.parametrize("problem, phases", [
    ("Why does the nightly import fail?", ["Reproduce the failure", "Isolate the cause", "Fix the cause",
                                           "Verify the fix"]),
    ("Should we adopt GraphQL for the public API?", ["List the options", "Define the criteria", "Evaluate the options",
                                                     "Choose and plan"]),
    ("Reduce the cost of our cloud storage", ["Measure the current state", "Identify the bottlenecks",
                                              "Implement the improvements", "Verify the gains"]),
])
def test_each_kind_of_problem_gets_its_own_lifecycle(problem, phases):
    data = run(problem=problem, max_depth=2)
    assert_consistent(data, 2)
    found = descriptions(data, depth=2)
    assert [phase for phase in phases if any(description.startswith(phase) for description in found)] == phases


def test_different_problems_give_different_sub_problems():
    first, second = run(problem="Build a mobile banking app"), run(problem="Build an internal reporting dashboard")
    assert set(descriptions(first)).isdisjoint(descriptions(second))
    assert all("mobile banking app" in description for description in descriptions(first, depth=2))
    assert all("internal reporting dashboard" in description for description in descriptions(second, depth=2))


def test_constraints_goals_and_sharp_edges_become_sub_problems():
    context = ProblemContext.parse({"constraints": ["Two developers"], "goals": ["Launch by March"]})
    data = run(problem=COMPOUND, max_depth=4, context=context, evidence=[INGRESS_EDGE])

    assert_consistent(data, 4)
    nodes = {node["description"]: node for node in data["subProblems"]}
    constraint, goal = nodes["Respect the constraint: Two developers"], nodes["Check the goal: Launch by March"]
    order = data["executionOrder"]
    # The constraint shapes the work before it starts; the goal is checked after the last task.
    assert order.index(constraint["id"]) < order.index("problem-1-0-0")
    assert order.index(goal["id"]) > order.index("problem-1-0-1")
    edge = next(node for node in data["subProblems"] if node.get("evidence") == INGRESS_EDGE.id)
    assert edge["description"].startswith("Account for it: Known sharp edge: Kubernetes ingress drops")
    # It attaches to the part of the tree about Kubernetes, not to the build.
    assert edge["parent"].startswith("problem-1-0-1")


def test_execution_order_is_kahns_algorithm_stable_and_refuses_cycles():
    ids = ["a", "b", "c", "d"]
    assert execution_order(ids, []) == ids
    assert execution_order(ids, [{"from": "d", "to": "a", "type": "sequential"},
                                 {"from": "c", "to": "b", "type": "sequential"}]) == ["c", "b", "d", "a"]
    with pytest.raises(DependencyCycle) as caught:
        execution_order(ids, [{"from": "a", "to": "b", "type": "sequential"},
                              {"from": "b", "to": "c", "type": "sequential"},
                              {"from": "c", "to": "a", "type": "sequential"}])
    assert caught.value.code == "dependency_cycle"
    assert caught.value.extra["subProblems"] == ["a", "b", "c"]


@pytest.mark.parametrize("max_depth", [0, 6, -1, 2.5, "3", None, True])
def test_max_depth_outside_one_to_five_names_the_field(max_depth):
    with pytest.raises(InvalidInput) as caught:
        run(max_depth=max_depth)
    assert caught.value.field == "max_depth"
    assert "1 to 5" in caught.value.message


def test_an_empty_problem_is_refused():
    with pytest.raises(InvalidInput) as caught:
        run(problem="\n")
    assert caught.value.field == "problem"


def test_the_models_tree_is_repaired_and_ordered_here():
    answer = {
        "subProblems": [
            {"id": "root", "description": "Build a scalable web application", "parent": None},
            {"id": "db", "description": "Design the data model", "parent": "root"},
            {"id": "api", "description": "Build the API", "parent": "root"},
            {"id": "cache", "description": "Add a cache in front of the API", "parent": "api"},
            {"id": "too-deep", "description": "Pick a cache eviction policy", "parent": "cache"},
            {"id": "orphan", "description": "Load-test the whole thing", "parent": "nowhere"},
            {"id": "blank", "description": "   "},
            {"id": 7, "description": "Write the runbook", "parent": {"not": "an id"}},
            {"id": "api", "description": "Document the API", "parent": "root"},  # a duplicate id
        ],
        "dependencies": [
            {"from": "api", "to": "db", "type": "sequential"},  # the model says: API before data model
            {"from": "db", "to": "orphan", "type": "whatever"},
            {"from": "db", "to": "db", "type": "sequential"},
            {"from": "db", "to": "missing", "type": "sequential"},
        ],
    }
    model = ScriptedModel({"decompose-problem": json.dumps(answer)})

    data = run(max_depth=3, backend=model)

    assert data["method"] == "sampling"
    assert_consistent(data, 3)
    by_description = {node["description"]: node for node in data["subProblems"]}
    assert "Pick a cache eviction policy" not in by_description  # deeper than maxDepth
    assert by_description["Load-test the whole thing"]["parent"] == "problem-1-0"  # unknown parent -> root
    assert by_description["Write the runbook"]["parent"] == "problem-1-0"
    assert by_description["Document the API"]["parent"] == "problem-1-0"  # kept, under its own position
    assert by_description["Add a cache in front of the API"]["parent"] == by_description["Build the API"]["id"]
    order = data["executionOrder"]
    api, data_model = by_description["Build the API"]["id"], by_description["Design the data model"]["id"]
    assert order.index(api) < order.index(data_model)
    kinds = {(edge["from"], edge["to"]): edge["type"] for edge in data["dependencies"]}
    assert kinds[(by_description["Design the data model"]["id"], by_description["Load-test the whole thing"]["id"])] \
        == "sequential"  # an unknown type is read as sequential
    assert "at most 3 levels deep" in model.calls[0]["system"]


@pytest.mark.parametrize("answer, reason", [
    ({"subProblems": [{"id": "a", "description": "Design it", "parent": None},
                      {"id": "b", "description": "Build it", "parent": None}],
      "dependencies": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}]}, "cycle"),
    ({"subProblems": "design, build, ship"}, "no subProblems list"),
    ({"subProblems": [{"id": "a"}]}, "no sub-problems with a description"),
])
def test_an_unusable_model_tree_falls_back_with_the_reason(answer, reason):
    data = run(backend=ScriptedModel({"decompose-problem": json.dumps(answer)}))
    assert data["method"] == "deterministic"
    assert reason in data["modelError"]
    assert descriptions(data, depth=2)[0] == "Design the architecture of scalable web application"


def test_a_backlog_of_tasks_keeps_ten_and_names_the_rest():
    tasks = [f"build the {name} module" for name in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
                                                       "theta", "iota", "kappa", "lambda", "omicron")]
    data = run(problem=", ".join(tasks), max_depth=2)

    assert_consistent(data, 2)
    top = descriptions(data, depth=2)
    assert len(top) == 11
    assert top[0] == "Build the alpha module"
    assert top[-1] == "Decompose the 2 remaining tasks separately: build the lambda module; build the omicron module"
