"""The benchmark pages: start a test_recall_accuracy run and watch it (the detail page polls REST's
GET /api/v1/cognition/benchmarks/<id>/ through static/js/benchmark.js), the past runs with their figures, and
debug_compare_retrieval for one query. Another user's run is the 404 page."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.cognition.forms import BenchmarkStartForm, CompareForm
from apps.cognition.models import BenchmarkRun
from apps.cognition.planning_answers import benchmark_answer
from apps.cognition.selectors.benchmarks import benchmark_run_get, benchmark_runs
from apps.cognition.selectors.listings import PAGE_SIZE
from apps.cognition.services.benchmark import METHOD_NAMES, progress_of, recall_test_start, retrieval_compare
from apps.core.exceptions import InvalidInput
from apps.core.forms import add_service_error
from apps.core.pages import not_found_is_404, submit

# A run's test in a few words, for its title.
TEST_NAMES = {"needle_haystack": "Needle in a haystack", "semantic_similarity": "Semantic similarity",
              "causal_inference": "Causal inference", "full_suite": "Full suite"}


def _benchmarks(request, *, start_form, compare_form, comparison=None):
    page = Paginator(benchmark_runs(actor=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "cognition/benchmarks.html", {
        "start_form": start_form, "compare_form": compare_form, "comparison": comparison, "page": page,
        "runs": [(run, progress_of(run), TEST_NAMES.get(run.test_type, run.test_type)) for run in page], "method_names": METHOD_NAMES})


@login_required
def benchmarks(request):
    compare_form = CompareForm(request.GET if "query" in request.GET else None)
    comparison = None
    if compare_form.is_bound and compare_form.is_valid():
        data = compare_form.cleaned_data
        try:
            comparison = retrieval_compare(actor=request.user, query=data["query"], top_k=data["top_k"],
                                           methods=data["methods"] or None)
        except InvalidInput as error:
            add_service_error(compare_form, error)
    return _benchmarks(request, start_form=BenchmarkStartForm(), compare_form=compare_form, comparison=comparison)


@login_required
@require_POST
def benchmark_start(request):
    form = BenchmarkStartForm(request.POST)
    # One run at a time: a second start is said above the form, and the running one is first in the list.
    run = submit(request, form, lambda: recall_test_start(actor=request.user, inline_seconds=0, **form.cleaned_data))
    if run is None:
        return _benchmarks(request, start_form=form, compare_form=CompareForm())
    return redirect("dashboard:cognition-benchmark", run_id=run.pk)


@login_required
@not_found_is_404
def benchmark(request, run_id):
    run = benchmark_run_get(actor=request.user, run_id=run_id)
    answer = benchmark_answer(run)
    return render(request, "cognition/benchmark.html", {
        "run": run, "answer": answer, "test_name": TEST_NAMES.get(run.test_type, run.test_type), "progress": answer["progress"],
        "active": run.status in (BenchmarkRun.Status.QUEUED, BenchmarkRun.Status.RUNNING),
        "poll_url": reverse("cognition_api:benchmark-detail", args=[run.pk])})
