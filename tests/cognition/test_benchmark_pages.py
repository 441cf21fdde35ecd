"""The benchmark pages: start a recall run (it hands itself to the background after its first batch, and its page
shows the progress), bad sizes named next to their field, one run at a time, the past runs listed with their
figures, debug_compare_retrieval for a query, and another user's runs and nodes out of sight."""
import uuid

import pytest
from django.urls import reverse

from apps.cognition.models import BenchmarkRun
from tests.cognition.curation_support import nodes
from tests.query_counts import flat

pytestmark = pytest.mark.django_db

SMALL = {"test_type": "needle_haystack", "needle_count": 5, "haystack_size": 100, "baseline_model": "none"}


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_the_pages_need_a_login(client):
    assert client.get(reverse("dashboard:cognition-benchmarks")).status_code == 302
    assert client.post(reverse("dashboard:cognition-benchmark-start"), SMALL).status_code == 302
    assert client.get(reverse("dashboard:cognition-benchmark", args=[uuid.uuid4()])).status_code == 302
    assert not BenchmarkRun.objects.exists()


def test_starting_a_run_leads_to_its_progress_and_only_its_owner_sees_it(alice, bob, user):
    assert "No runs yet" in text(alice.get(reverse("dashboard:cognition-benchmarks")))
    response = alice.post(reverse("dashboard:cognition-benchmark-start"), SMALL)
    run = BenchmarkRun.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == reverse("dashboard:cognition-benchmark",
                                                                           args=[run.pk])
    # The request did one batch (all 105 items) and handed the rest to the background.
    assert (run.status, run.background, run.stored, run.total_items) == ("running", True, 105, 105)
    page = text(alice.get(response["Location"]))
    assert 'data-active="true"' in page and "stored 105 of 105 items" in page and "no baseline" in page
    assert f'data-poll-url="/api/v1/cognition/benchmarks/{run.pk}/"' in page
    assert f'id="run-{run.pk}"' in text(alice.get(reverse("dashboard:cognition-benchmarks")))
    assert bob.get(response["Location"]).status_code == 404
    assert f'id="run-{run.pk}"' not in text(bob.get(reverse("dashboard:cognition-benchmarks")))
    again = text(alice.post(reverse("dashboard:cognition-benchmark-start"), SMALL))
    assert "is still running" in again and BenchmarkRun.objects.count() == 1


def test_bad_sizes_are_named_next_to_their_field(alice):
    for field, value, label in (("needle_count", 3, "Needles"), ("haystack_size", 20_000, "Haystack"),
                                ("needle_count", "many", "Needles")):
        body = text(alice.post(reverse("dashboard:cognition-benchmark-start"), {**SMALL, field: value}))
        assert f'id="id_{field}_error"' in body and "Use a whole number" in body and label in body
    body = text(alice.post(reverse("dashboard:cognition-benchmark-start"), {**SMALL, "test_type": "quiz"}))
    assert 'id="id_test_type_error"' in body
    assert not BenchmarkRun.objects.exists()


def test_a_completed_run_shows_its_figures(alice, user):
    run = BenchmarkRun.objects.create(
        owner=user, test_type="needle_haystack", needle_count=5, haystack_size=100, baseline_model="none", seed=20,
        status="completed", phase="done", stored=105, queried=5, total_items=105, total_queries=5,
        report={"fuse_moe_accuracy": 0.8, "p95_latency_ms": 41, "baseline_used": None,
                "recommendation": "Fused retrieval ranked the needle first for 4 of 5 paraphrased queries (80%).",
                "test_details": {"needles_found": 4, "queries": 5, "false_positives": 1, "semantic_drift": 0.1,
                                 "by_type": {"needle_haystack": {"queries": 5, "fuse_moe_accuracy": 0.8}}}})
    body = text(alice.get(reverse("dashboard:cognition-benchmark", args=[run.pk])))
    assert 'data-active="false"' in body and "4 of 5 paraphrased queries" in body and "80%" in body
    assert "found <strong>4 of 5</strong>" in text(alice.get(reverse("dashboard:cognition-benchmarks")))


def test_the_run_list_queries_are_flat(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        BenchmarkRun.objects.bulk_create([BenchmarkRun(
            owner=user, test_type="needle_haystack", needle_count=5, haystack_size=100, baseline_model="none",
            seed=n, status="failed", error="Abandoned.") for n in range(start, start + count)])
    grow(0, 1)
    flat(lambda: alice.get(reverse("dashboard:cognition-benchmarks")), grow,
         lambda response: response.content.decode().count('id="run-'), django_assert_max_num_queries,
         shown_at_fifty=25)


def test_compare_runs_each_method_on_the_readers_graph_only(alice, bob, user):
    nodes(user, "The lighthouse lamp is serviced every spring.", "Keepers log the lamp's hours nightly.")
    url = reverse("dashboard:cognition-benchmarks")
    body = text(alice.get(url, {"query": "when is the lighthouse lamp serviced"}))
    for method in ("cosine_baseline", "fuse_moe", "causal_pathfinding"):
        assert f'id="method-{method}"' in body
    assert "The lighthouse lamp is serviced every spring." in body and 'aria-label="Comparison"' in body
    chosen = text(alice.get(url, {"query": "lighthouse lamp", "methods": ["hyperbolic_entailment"], "top_k": 3}))
    assert 'id="method-hyperbolic_entailment"' in chosen and 'id="method-fuse_moe"' not in chosen
    theirs = text(bob.get(url, {"query": "when is the lighthouse lamp serviced"}))
    assert "The lighthouse lamp is serviced" not in theirs
    for params, field in (({"query": "   "}, "query"), ({"query": "lamp", "top_k": 500}, "top_k"),
                          ({"query": "lamp", "methods": ["psychic"]}, "methods")):
        body = text(alice.get(url, params))
        assert f'id="id_{field}_error"' in body and 'aria-label="Comparison"' not in body
