"""What the query-count tests share (tests/api/test_query_counts_scale.py, tests/mcp/test_query_counts_mcp.py):
a batch of matching memories, and the check that a call runs no more queries at 50 items than at 1."""
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memories.services import memory_store_many


def store_batch(user, start: int, count: int) -> None:
    # One model call for the batch; every memory shares "lighthouse" so search and retrieve match them all.
    memory_store_many(actor=user, items=[
        {"content": f"Lighthouse keeper log entry {n}: the lamp at station {n} was checked", "primary_sector": "episodic",
         "tags": ["lighthouse"]}
        for n in range(start, start + count)
    ])


def flat(request, grow, rows, django_assert_max_num_queries, shown_at_fifty: int = 50) -> None:
    """Queries of ``request()`` at 1 item, then at 50 after ``grow(1, 49)``: the second may not exceed the first.
    ``rows(answer)`` is how many items the answer shows, checked at each size so it really grew (to
    ``shown_at_fifty`` on a page that shows fewer at once). A call runs before each measurement, so once-only
    writes (a token's last_used_at, a session) are out of the way."""
    request()
    with CaptureQueriesContext(connection) as at_one:
        answer = request()
    at_one = len(at_one)  # now: the next request resets the connection's query log
    assert rows(answer) == 1
    grow(1, 49)
    request()
    with django_assert_max_num_queries(at_one):
        answer = request()
    assert rows(answer) == shown_at_fifty
