"""The graph page in a real browser applies Context Graph's curation live: a merge replaces its sources with the
merged node, a forgotten node leaves, and an undo brings the sources back and removes the merged node."""
import pytest

from apps.cognition.services.curation import node_forget, nodes_merge
from apps.cognition.services.undo import undo_apply
from tests.cognition.curation_support import link, nodes
from tests.graph.test_page_browser import (  # noqa: F401 (fixtures)
    WAIT_MS, browser_page, live_url, log_in, off_loop, wait_for_nodes,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

HAS = "id => window.engramGraph.graph.hasNode(id)"
GONE = "id => !window.engramGraph.graph.hasNode(id)"


def test_merge_forget_and_undo_redraw_the_graph(live_url, user, browser_page):  # noqa: F811
    page, errors = browser_page
    # Every service call goes through off_loop: with the Redis channel layer its after-commit publish is async_to_sync,
    # which cannot run in the thread of Playwright's event loop.
    a, b, x = off_loop(nodes, user, "The user prefers dark mode in every editor.",
                       "Dark mode is what the user wants in all their editors.", "Editors read the dotfiles repository.")
    off_loop(link, user, a, x, 0.6)
    log_in(page, live_url)
    wait_for_nodes(page, 3)

    merged = off_loop(nodes_merge, actor=user, source_node_ids=[str(a.pk), str(b.pk)], target_name="dark mode")
    merged_id = str(merged.merged.pk)
    page.wait_for_function(HAS, arg=merged_id, timeout=WAIT_MS)
    for source in (a, b):
        page.wait_for_function(GONE, arg=str(source.pk), timeout=WAIT_MS)
    assert page.evaluate("([s, t]) => window.engramGraph.graph.hasEdge(s, t)", [merged_id, str(x.pk)])

    off_loop(node_forget, actor=user, node_id=str(x.pk), reason="obsolete")
    page.wait_for_function(GONE, arg=str(x.pk), timeout=WAIT_MS)

    off_loop(undo_apply, actor=user, reversal_hash=merged.reversal_hash, preview=False)
    page.wait_for_function(GONE, arg=merged_id, timeout=WAIT_MS)
    for source in (a, b):
        page.wait_for_function(HAS, arg=str(source.pk), timeout=WAIT_MS)
    assert page.evaluate("window.engramGraph.graph.order") == 2
    assert errors == []
