"""generate_search_plan (apps/cognition/services/plan.py): the queries come from the goal and the caller's own words,
expected_recall equals a recount with real retrieval, nothing is written, bad input names the field, and alice's
plan never carries bob's words."""
from __future__ import annotations

import pytest

from apps.cognition.limits import PLAN_POOL
from apps.cognition.models import CgSession, SessionItem
from apps.cognition.services.plan import search_plan_generate
from apps.core.exceptions import InvalidInput
from apps.memories.models import Memory
from apps.memories.services import memory_retrieve
from tests.cognition.causal_graphs import CAUSAL, HIERARCHICAL, draw

GOAL = "Find the security constraints for API authentication"
AUTH = {
    "jwt": "API authentication uses JWT bearer tokens that expire after fifteen minutes.",
    "rotate": "The vault_rotate() job rotates the OAuth client secrets for API authentication every Monday.",
    "tls": "The payments API refuses authentication without mutual TLS certificates since 2024.",
    "breach": "A leaked signing key allowed forged sessions until revocation.",
    "policy": "Security policy overview for every customer facing service.",
    "soup": "Grandma's tomato soup needs a pinch of sugar.",
}
# Other things the user knows: the goal's pool (its best 10) is a part of the graph, not all of it.
OTHER = {f"other{index}": text for index, text in enumerate([
    "The hiking trail to the lake starts behind the old mill.",
    "Our team retro happens every second Thursday afternoon.",
    "The espresso machine descaling takes twenty minutes.",
    "Maria prefers window seats on long flights.",
    "The garden needs watering twice a week in July.",
    "The quarterly report is due before the board meeting.",
    "The bicycle chain was replaced at the shop downtown.",
    "Invoices from the printer vendor go to accounting.",
    "The office plants are watered by the facilities team.",
    "The conference badge pickup opens at eight.",
    "Sourdough starter must be fed every morning.",
    "The API rate limiter allows 600 requests per minute per token.",
])}
AUTH_LINKS = [("breach", "jwt", CAUSAL, 0.9), ("jwt", "policy", HIERARCHICAL, 0.8)]


def recount(user, plan) -> dict[str, float]:
    pool = {str(item.memory.pk) for item in memory_retrieve(actor=user, text=plan.goal, limit=PLAN_POOL,
                                                            reinforce=False).items}
    recalls = {}
    for query in plan.queries:
        hits = {str(item.memory.pk) for item in memory_retrieve(actor=user, text=query.query, limit=PLAN_POOL,
                                                                reinforce=False).items}
        recalls[query.query_type] = round(len(hits & pool) / len(pool), 4) if pool else 0.0
    return recalls


def test_queries_come_from_the_goal_and_the_users_words(user):
    nodes = draw(user, AUTH, AUTH_LINKS)
    plan = search_plan_generate(actor=user, goal=GOAL, query_types=["semantic", "causal", "code", "temporal",
                                                                     "hierarchical"], max_queries=5)
    by_type = {query.query_type: query for query in plan.queries}
    assert list(by_type) == ["semantic", "causal", "code", "temporal", "hierarchical"]
    own_words = {word for memory in nodes.values() for word in memory.keywords}
    for query in plan.queries:
        assert {"security", "constraints", "api", "authentication"} <= set(query.query.lower().split()), query
        assert "find" not in query.query.split()  # the goal's "find" says what to do, not what to look for
        assert query.rationale
    # Semantic: the graph's own distinctive words near the goal, none of them the goal's.
    added = set(by_type["semantic"].query.split()) - set(GOAL.lower().split())
    assert added and added <= own_words
    # Causal: the keywords of the node a causal link joins to the hits ("leaked signing key").
    breach = set(nodes["breach"].keywords)
    assert by_type["causal"].query.startswith("why ") and breach & set(by_type["causal"].query.split())
    # Code: the identifier in the hits' text.
    assert "vault_rotate()" in by_type["code"].query
    # Temporal: the year the hits name.
    assert by_type["temporal"].query.startswith("when ") and "2024" in by_type["temporal"].query
    # Hierarchical: the summary a hierarchical link joins to a hit.
    assert {"security", "policy", "overview"} & (set(by_type["hierarchical"].query.split()) - set(GOAL.lower().split()))
    assert "soup" not in " ".join(query.query for query in plan.queries)


def test_expected_recall_is_measured_and_equals_a_recount(user):
    draw(user, {**AUTH, **OTHER}, AUTH_LINKS)
    plan = search_plan_generate(actor=user, goal=GOAL, query_types=["semantic", "code", "temporal"], max_queries=3)
    assert {query.query_type: query.expected_recall for query in plan.queries} == recount(user, plan)
    assert len(plan.pool) == PLAN_POOL  # the goal's best 10 of 18 nodes
    assert all(0 < query.expected_recall <= 1 for query in plan.queries)
    assert any(query.expected_recall < 1 for query in plan.queries)  # measured, not a constant
    union = set().union(*(query.recovered for query in plan.queries))
    assert plan.union_recall == round(len(union) / len(plan.pool), 4)
    best = max(query.expected_recall for query in plan.queries)
    assert plan.execution_strategy == ("parallel" if plan.union_recall > best else "sequential")
    assert plan.token_estimate > 0


def test_max_queries_bounds_the_plan_and_nothing_is_written(user):
    nodes = draw(user, AUTH, AUTH_LINKS)
    before = dict(Memory.objects.filter(pk__in=[node.pk for node in nodes.values()]).values_list("pk", "access_count"))
    plan = search_plan_generate(actor=user, goal=GOAL, max_queries=2)
    assert [query.query_type for query in plan.queries] == ["semantic", "causal"]
    after = dict(Memory.objects.filter(pk__in=list(before)).values_list("pk", "access_count"))
    assert after == before and not CgSession.objects.exists() and not SessionItem.objects.exists()


def test_an_empty_graph_plans_from_the_goal_alone(user):
    plan = search_plan_generate(actor=user, goal=GOAL)
    assert plan.pool == [] and plan.union_recall == 0.0 and plan.execution_strategy == "sequential"
    assert [query.expected_recall for query in plan.queries] == [0.0, 0.0, 0.0]
    assert all("nothing near this goal" in query.rationale for query in plan.queries)


def test_alice_never_gets_bobs_words(user, other_user):
    draw(other_user, {"bob": "Bob's API authentication uses Kerberos tickets from the zanzibar realm."}, [])
    mine = draw(user, {"jwt": AUTH["jwt"]}, [])
    plan = search_plan_generate(actor=user, goal=GOAL, query_types=["semantic", "code"])
    text = " ".join(query.query for query in plan.queries).lower()
    assert "kerberos" not in text and "zanzibar" not in text
    assert plan.pool == [str(mine["jwt"].pk)]
    theirs = search_plan_generate(actor=other_user, goal=GOAL)
    assert str(mine["jwt"].pk) not in theirs.pool


@pytest.mark.parametrize(("arguments", "field"), [
    ({"goal": "too short"}, "goal"),
    ({"goal": "x" * 501}, "goal"),
    ({"goal": None}, "goal"),
    ({"goal": GOAL, "query_types": []}, "query_types"),
    ({"goal": GOAL, "query_types": "semantic"}, "query_types"),
    ({"goal": GOAL, "query_types": ["semantic", "visual"]}, "query_types[1]"),
    ({"goal": GOAL, "max_queries": 0}, "max_queries"),
    ({"goal": GOAL, "max_queries": 8}, "max_queries"),
])
def test_bad_input_names_the_field(user, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        search_plan_generate(actor=user, **arguments)
    assert caught.value.field == field
