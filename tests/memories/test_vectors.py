"""nearest_in_scope: a small scope is compared exactly, a large one through HNSW; both rank alike. The HNSW
settings sent with a statement hold for that statement."""
import pytest
from django.db import connection

from apps.memories import vectors
from apps.memories.models import Memory, MemoryVector
from apps.memories.vectors import nearest_in_scope, vector_scan_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def garden(user, store):
    return [store(user, text) for text in (
        "Water the tomatoes every other evening",
        "Tomato plants need watering every second night",
        "The quarterly tax return is due in April",
    )]


def test_exact_and_index_scans_rank_the_scope_alike(user, other_user, store, garden, monkeypatch):
    store(other_user, "Water the tomatoes every evening")  # nearest of all, but outside the scope
    query = MemoryVector.objects.get(memory=garden[0]).embedding
    scope = Memory.objects.filter(cube_id=garden[0].cube_id).exclude(pk=garden[0].pk)
    exact = nearest_in_scope(scope, query, limit=5)
    monkeypatch.setattr(vectors, "EXACT_SCOPE_MEMORIES", 1)  # two memories in scope: the index path
    indexed = nearest_in_scope(scope, query, limit=5)
    assert [memory_id for memory_id, _ in exact] == [memory_id for memory_id, _ in indexed] == [
        garden[1].pk, garden[2].pk]
    assert exact[0][1] == pytest.approx(indexed[0][1]) and exact[0][1] < exact[1][1]


@pytest.mark.django_db(transaction=True)
def test_vector_scan_settings_hold_for_the_statement_sent_with_them_only():
    settings, params = vector_scan_settings(37)
    with connection.cursor() as cursor:
        cursor.execute(f"{settings}SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')",
                       params)
        cursor.nextset()
        assert cursor.fetchone() == ("37", "relaxed_order")
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        assert cursor.fetchone()[0] != "37"  # autocommit: one implicit transaction, then back to the default
