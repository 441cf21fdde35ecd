import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from apps.core.exceptions import InvalidInput
from apps.mcp.profiles import PROFILES
from apps.memories.models import Memory
from apps.memories.services import memory_delete, memory_retrieve, memory_search
from apps.memories.services.retrieval.scoring import WITH_QUERY, WITHOUT_QUERY
from apps.memories.validation import MemoryFilters

CONTRACT = Path(__file__).resolve().parents[1] / "contracts" / "thoughtmcp.json"


@pytest.fixture
def corpus(user, store):
    return {
        "dark": store(user, "User prefers dark mode for all applications", primary_sector="semantic",
                      tags=["settings", "ui"], category="preferences", keywords=["dark mode"], importance=0.9),
        "deploy": store(user, "To deploy, run make release and then tag the commit", primary_sector="procedural",
                        tags=["ops"], category="howto"),
        "trip": store(user, "Yesterday we hiked up the mountain near Lake Tahoe", primary_sector="episodic",
                      tags=["travel"], category="life"),
        "joy": store(user, "I felt so happy when the tests finally passed", primary_sector="emotional", tags=["ui"]),
    }


def ids(result):
    return [item.memory.pk for item in result.items]


def test_query_ranks_the_relevant_memory_first(user, corpus):
    result = memory_retrieve(actor=user, text="which colour theme does the user like?")
    assert ids(result)[0] == corpus["dark"].pk
    assert result.total_count == 4


def test_score_is_the_composite_of_its_parts(user, corpus):
    item = memory_retrieve(actor=user, text="dark mode").items[0]
    expected = (WITH_QUERY.relevance * item.relevance + WITH_QUERY.salience * item.memory.salience
                + WITH_QUERY.recency * item.recency + WITH_QUERY.link_weight * item.link_weight)
    assert item.score == pytest.approx(expected, abs=1e-3)
    assert item.lexical == 1.0 and 0 < item.dense <= 1


def test_without_query_salience_recency_and_links_order(user, corpus):
    Memory.objects.filter(pk=corpus["trip"].pk).update(created_at=timezone.now() - timedelta(days=300))
    result = memory_retrieve(actor=user)
    assert ids(result)[0] == corpus["dark"].pk  # highest salience
    assert ids(result)[-1] == corpus["trip"].pk  # oldest
    item = result.items[0]
    expected = (WITHOUT_QUERY.salience * item.memory.salience + WITHOUT_QUERY.recency * item.recency
                + WITHOUT_QUERY.link_weight * item.link_weight)
    assert item.score == pytest.approx(expected, abs=1e-3)


def test_the_composite_weights_are_thoughtmcps_refitted_and_the_tool_says_so():
    description = json.loads(CONTRACT.read_text())["tools"]["retrieve_memories"]["description"]
    formula = re.search(r"([\d.]+)×similarity \+ ([\d.]+)×salience \+ ([\d.]+)×recency \+ ([\d.]+)×linkWeight",
                        description)
    seed = tuple(map(float, formula.groups()))
    assert seed == (0.6, 0.2, 0.1, 0.1)
    # Refitted on LoCoMo's tuning fold (docs/retrieval.md): the same four terms, summing to 1, relevance first.
    assert sum(vars(WITH_QUERY).values()) == pytest.approx(1.0) and WITH_QUERY.relevance > seed[0]
    [tool] = [spec for spec in PROFILES["thoughtmcp"].tools if spec.name == "retrieve_memories"]
    assert str(WITH_QUERY) in tool.description and "0.6×similarity" in tool.description
    assert WITHOUT_QUERY.relevance == 0 and sum(vars(WITHOUT_QUERY).values()) == pytest.approx(1.0)


@pytest.mark.parametrize(("filters", "expected"), [
    ({"primary_sector": "procedural"}, {"deploy"}),
    ({"sectors": ["episodic", "emotional"]}, {"trip", "joy"}),
    ({"tags": ["ui"]}, {"dark", "joy"}),
    ({"tags": ["ui", "settings"]}, {"dark"}),
    ({"keywords": ["dark mode", "nothing"]}, {"dark"}),
    ({"category": "HOWTO"}, {"deploy"}),
    ({"min_salience": 0.6}, {"dark"}),
])
def test_every_filter_without_query(user, corpus, filters, expected):
    result = memory_retrieve(actor=user, filters=MemoryFilters.build(**filters))
    assert set(ids(result)) == {corpus[name].pk for name in expected}
    assert result.total_count == len(expected)


def test_filters_apply_with_a_query_too(user, corpus):
    result = memory_retrieve(actor=user, text="dark mode", filters=MemoryFilters.build(primary_sector="episodic"))
    assert ids(result) == [corpus["trip"].pk]


def test_min_strength_and_date_range(user, corpus):
    Memory.objects.filter(pk=corpus["trip"].pk).update(strength=0.2, created_at=timezone.now() - timedelta(days=30))
    strong = memory_retrieve(actor=user, filters=MemoryFilters.build(min_strength=0.5))
    assert corpus["trip"].pk not in ids(strong) and strong.total_count == 3
    start = (timezone.now() - timedelta(days=40)).isoformat()
    end = (timezone.now() - timedelta(days=20)).isoformat()
    dated = memory_retrieve(actor=user, filters=MemoryFilters.build(date_start=start, date_end=end))
    assert ids(dated) == [corpus["trip"].pk]


def test_limit_offset_and_total_count(user, corpus):
    first = memory_retrieve(actor=user, text="the", limit=2)
    second = memory_retrieve(actor=user, text="the", limit=2, offset=2)
    assert first.total_count == second.total_count == 4
    assert len(first.items) == len(second.items) == 2
    assert not set(ids(first)) & set(ids(second))


def test_retrieval_reinforces_what_it_returns(user, corpus):
    Memory.objects.update(strength=0.5)
    memory_retrieve(actor=user, text="dark mode", limit=1)
    dark = Memory.objects.get(pk=corpus["dark"].pk)
    assert dark.access_count == 1 and dark.strength == pytest.approx(0.8) and dark.last_accessed_at
    memory_retrieve(actor=user, text="dark mode", limit=1)
    dark.refresh_from_db()
    assert dark.access_count == 2 and dark.strength == pytest.approx(0.95)  # halved within the hour
    assert Memory.objects.get(pk=corpus["trip"].pk).access_count == 0
    memory_retrieve(actor=user, text="dark mode", limit=1, reinforce=False)
    dark.refresh_from_db()
    assert dark.access_count == 2


@pytest.mark.parametrize(("operation", "statements"), [(memory_retrieve, 7), (memory_search, 6)])
def test_a_query_is_answered_in_a_few_statements(user, corpus, operation, statements, django_assert_num_queries):
    """The scope's cubes, the words' document frequencies, the lexical statement, the scoring statement (with its
    HNSW settings in the same round trip), a retrieval's follow-up (feedback words and session neighbours,
    tests/memories/test_retrieve_boosts.py), the page and the reinforcement: nothing per memory, no transaction of
    its own. The words were stemmed by the first call (each process keeps them). (A search with a word no memory
    holds pays one more, for its correction: tests/memories/test_search_fuzzy.py.)"""
    operation(actor=user, text="which mode does the user prefer?")
    with django_assert_num_queries(statements):
        operation(actor=user, text="which mode does the user prefer?")


@pytest.mark.django_db(transaction=True)
def test_reinforcement_as_its_own_transaction_counts_and_leaves_a_callers_commit_setting_alone(user, store):
    from django.db import connection, transaction

    from apps.memories.services.lifecycle import memory_reinforce

    memory = store(user, "The lighthouse lamp is serviced every spring")
    assert memory_reinforce(memory_ids=[memory.pk]) == 1  # autocommit: its own, relaxed, transaction
    with transaction.atomic(), connection.cursor() as cursor:
        assert memory_reinforce(memory_ids=[memory.pk]) == 1
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"  # the caller's writes still wait for the flush
    memory.refresh_from_db()
    assert memory.access_count == 2


def test_soft_deleted_memories_are_hidden(user, corpus):
    memory_delete(actor=user, memory_id=corpus["dark"].pk)
    result = memory_retrieve(actor=user, text="dark mode")
    assert corpus["dark"].pk not in ids(result) and result.total_count == 3


def test_a_memory_deleted_between_the_scoring_and_the_page_leaves_the_page(user, corpus, monkeypatch):
    from apps.memories.services import memory_restore
    from apps.memories.services.retrieval import planner

    scored = planner.page

    def delete_then_page(ranked, **kwargs):  # another request's delete commits between the two statements
        memory_delete(actor=user, memory_id=corpus["dark"].pk)
        return scored(ranked, **kwargs)

    monkeypatch.setattr(planner, "page", delete_then_page)
    for operation in (memory_retrieve, memory_search):
        assert corpus["dark"].pk not in ids(operation(actor=user, text="dark mode", reinforce=False))
        memory_restore(actor=user, memory_id=corpus["dark"].pk)


def test_isolation_other_users_memories_never_appear(user, other_user, corpus, store):
    theirs = store(other_user, "User prefers dark mode for all applications")
    assert theirs.pk not in ids(memory_retrieve(actor=user, text="dark mode", limit=100))
    result = memory_retrieve(actor=other_user, text="dark mode", limit=100)
    assert ids(result) == [theirs.pk] and result.total_count == 1


def test_a_cube_filter_cannot_widen_access(user, other_user, store):
    theirs = store(other_user, "secret plans")
    result = memory_retrieve(actor=user, filters=MemoryFilters.build(cube_id=theirs.cube_id))
    assert result.items == [] and result.total_count == 0


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"limit": 101}, "limit"), ({"limit": 0}, "limit"), ({"limit": 2.5}, "limit"), ({"offset": -1}, "offset"),
    ({"text": "a\x00b"}, "text"), ({"text": "x" * 2001}, "text"),
])
def test_bad_paging_and_query(user, kwargs, field):
    with pytest.raises(InvalidInput) as caught:
        memory_retrieve(actor=user, **kwargs)
    assert caught.value.field == field


@pytest.mark.parametrize(("filters", "field"), [
    ({"sectors": ["nope"]}, "sectors"), ({"sectors": []}, "sectors"), ({"primary_sector": "x"}, "primary_sector"),
    ({"min_strength": 2}, "min_strength"), ({"min_salience": -0.1}, "min_salience"),
    ({"date_start": "yesterday"}, "date_start"), ({"date_end": "2025-13-45"}, "date_end"),
    ({"date_start": "2025-02-01T00:00:00Z", "date_end": "2025-01-01T00:00:00Z"}, "date_range"),
])
def test_bad_filters_name_their_field(filters, field):
    with pytest.raises(InvalidInput) as caught:
        MemoryFilters.build(**filters)
    assert caught.value.field == field




def test_words_never_stemmed_before_cost_no_statement_of_their_own(user, corpus, monkeypatch):
    """A word this process has not stemmed yet is stemmed in the statement that reads the words' counts: a query
    of new words sends as many statements as the same query again, and finds the same memories."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.memories.services.retrieval import lexical

    monkeypatch.setattr(lexical, "_lexeme_cache", {})
    text = "mountains hiking near the lake"
    with CaptureQueriesContext(connection) as fresh:
        first = memory_retrieve(actor=user, text=text)
    assert "hiking" in lexical._lexeme_cache and lexical._lexeme_cache["hiking"] == frozenset({"hike"})
    with CaptureQueriesContext(connection) as cached:
        again = memory_retrieve(actor=user, text=text)
    assert len(fresh) == len(cached)
    assert ids(first) == ids(again) and ids(first)[0] == corpus["trip"].pk
    assert first.items[0].lexical > 0
