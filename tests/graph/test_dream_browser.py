"""The graph page in a real browser applies a dream live: dream.changed draws the summary a batch made with its
members' edges to it, and dream.progress shows the run's step and batch, then how it ended, beside the count."""
import pytest

from apps.cognition.services.dream import dream_execute, dream_trigger
from apps.memories.models import Memory
from tests.cognition.curation_support import nodes
from tests.graph.test_page_browser import (  # noqa: F401 (fixtures)
    WAIT_MS, browser_page, live_url, log_in, off_loop, wait_for_nodes,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STAGING = ("The staging cluster runs Kubernetes 1.30 on three nodes.",
           "Staging uses Kubernetes version 1.30 with three worker nodes.",
           "Our staging Kubernetes cluster has three nodes running 1.30.")


def test_a_dream_draws_its_summary_and_tells_its_progress(live_url, user, browser_page):  # noqa: F811
    page, errors = browser_page
    members = off_loop(nodes, user, *STAGING)
    log_in(page, live_url)
    wait_for_nodes(page, 3)
    run = off_loop(lambda: dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk))
    assert run.status == "completed"
    summary = off_loop(lambda: Memory.objects.get(owner=user, kind="summary"))
    page.wait_for_function("id => window.engramGraph.graph.hasNode(id)", arg=str(summary.pk), timeout=WAIT_MS)
    for member in members:
        assert page.evaluate("([s, t]) => window.engramGraph.graph.hasEdge(s, t)", [str(member.pk), str(summary.pk)])
    page.wait_for_function("document.getElementById('graph-dream').textContent.includes('Dream completed')",
                           timeout=WAIT_MS)
    assert page.is_visible("#graph-dream")
    assert errors == []


def test_a_gardener_cycle_removes_the_edge_it_pruned_live(live_url, user, browser_page):  # noqa: F811
    from datetime import timedelta

    from django.utils import timezone

    from apps.cognition.services.gardener.cycle import gardener_run
    from apps.memories.models import MemoryLink
    from tests.cognition.curation_support import link

    page, errors = browser_page
    first, second = off_loop(nodes, user, "The otter keeps mangoes.", "The falcon keeps granite.")
    off_loop(link, user, first, second, 0.05)
    off_loop(lambda: MemoryLink.objects.update(created_at=timezone.now() - timedelta(days=2)))
    log_in(page, live_url)
    wait_for_nodes(page, 2)
    assert page.evaluate("([s, t]) => window.engramGraph.graph.hasEdge(s, t)", [str(first.pk), str(second.pk)])
    report = off_loop(lambda: gardener_run(actor=user))
    assert off_loop(lambda: MemoryLink.objects.count()) == 0, report
    page.wait_for_function("([s, t]) => !window.engramGraph.graph.hasEdge(s, t)", arg=[str(first.pk), str(second.pk)],
                           timeout=WAIT_MS)
    assert errors == []
