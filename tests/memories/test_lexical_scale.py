"""What keeps search fast at 100k memories (docs/benchmarks.md), tested at a small scale by shrinking
the thresholds: IDF weights come from the per-cube lexeme counts, the lexical pool is ranked among the
rarest words' matches only, and totals above EXACT_DENSE_MATCHES are estimates, flagged as such."""
import math

import pytest

from apps.memories.query import any_words
from apps.memories.selectors import memory_filtered, memory_scope_cube_ids
from apps.memories.services import memory_delete, memory_search, memory_store_many
from apps.memories.services.retrieval import lexical
from apps.memories.validation import MemoryFilters

pytestmark = pytest.mark.django_db


def store_all(user, contents):
    return [result.memory for result in memory_store_many(actor=user, items=[{"content": c} for c in contents],
                                                          link=False)]


def lexical_model(user, text, filters=None, best=10):
    filters = filters or MemoryFilters()
    cube_ids = memory_scope_cube_ids(actor=user, filters=filters)
    base = memory_filtered(actor=user, filters=filters, cube_ids=cube_ids)
    return lexical.lexical_model(base, any_words(text), best, cube_ids=cube_ids, count_matches=True)


@pytest.fixture
def garden(user):
    common = store_all(user, [f"Garden diary, day {n}: watered the beds." for n in range(6)])
    rare = store_all(user, ["The garden pottery kiln fired the first bowls."])[0]
    return common, rare


def test_the_lexical_pool_reads_only_the_rarest_words_matches_when_they_suffice(user, garden, monkeypatch):
    common, rare = garden
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_BUDGET", 3)
    model = lexical_model(user, "garden pottery kiln")
    assert model.best_matches == [rare.pk]  # "garden" (7 matches) is over the budget: not read
    assert model.matches == 7 and model.matches_exact  # the count still covers every match
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_BUDGET", 100)
    model = lexical_model(user, "garden pottery kiln")
    assert model.best_matches[0] == rare.pk and set(model.best_matches[1:]) == {m.pk for m in common}


def test_idf_weights_come_from_the_cube_counts_of_live_memories(user, other_user, garden):
    common, _ = garden
    memory_delete(actor=user, memory_id=common[0].pk)  # soft-deleted: no longer counted
    store_all(other_user, ["Another tenant's garden"] * 3)  # never counted in alice's weights
    model = lexical_model(user, "garden kiln", filters=MemoryFilters(min_strength=0.0))
    weights = dict(zip(model.words, model.weights))
    documents = 6
    assert weights["garden"] == pytest.approx(math.log(1 + (documents - 6 + 0.5) / (6 + 0.5)))
    assert weights["kiln"] == pytest.approx(math.log(1 + (documents - 1 + 0.5) / (1 + 0.5)))


def test_totals_above_the_exact_limit_are_planner_estimates_and_say_so(user, garden, monkeypatch, api):
    monkeypatch.setattr(lexical, "EXACT_DENSE_MATCHES", 3)
    plain = memory_search(actor=user, text="garden")
    filtered = memory_search(actor=user, text="garden", filters=MemoryFilters(min_strength=0.0))  # counted
    boolean = memory_search(actor=user, text="garden OR kiln")
    for result in (plain, filtered, boolean):
        assert not result.total_exact and result.total_count >= 4
        assert len(result.items) == 7  # an estimated total never hides results
    assert all("garden" in item.memory.content.lower() for item in boolean.items)
    body = api.post("/api/v1/memories/search/", {"text": "garden OR kiln"}, format="json").json()
    assert body["total_count_exact"] is False and body["total_count"] >= 4
    monkeypatch.setattr(lexical, "EXACT_DENSE_MATCHES", 10)
    for text, filters in (("garden OR kiln", None), ("garden", MemoryFilters(min_strength=0.0))):
        exact = memory_search(actor=user, text=text, filters=filters)
        assert exact.total_exact and exact.total_count == 7


def test_a_boolean_search_with_few_matches_ranks_every_match_by_meaning(user, garden, monkeypatch):
    """Its matches are all compared exactly, even those outside the lexical pool's words."""
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_BUDGET", 1)
    result = memory_search(actor=user, text="kiln OR diary", limit=20)
    assert result.total_exact and result.total_count == 7 and len(result.items) == 7


def test_the_estimate_of_a_plain_word_total_treats_words_as_independent():
    assert lexical._estimated_union(100, [50, 50]) == 75
    assert lexical._estimated_union(1000, [1000, 3]) == 1000
    assert lexical._estimated_union(1000, [0]) == 0
