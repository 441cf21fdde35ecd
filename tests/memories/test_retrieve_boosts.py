"""Retrieval's boosts (docs/retrieval.md, "Boosts"): a memory labelled with a name the query holds, one created on a
date the query names, the best hits' words (feedback) and the session neighbours of the best hits; then diversity,
which takes a near-copy of a better hit after a memory that adds something."""
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from apps.memories.services import memory_retrieve, memory_search
from apps.memories.services.retrieval import scoring
from apps.memories.services.retrieval.dates import date_windows
from apps.memories.services.retrieval.scoring import (
    DATE_WEIGHT, DENSE_WEIGHT, DIVERSITY_WEIGHT, FEEDBACK_WEIGHT, LABEL_WEIGHT, LEXICAL_WEIGHT, NEIGHBOUR_WEIGHT,
    PoolScore, diversify,
)


def by_content(result):
    return {item.memory.content: item for item in result.items}


def fused(item):
    return DENSE_WEIGHT * item.dense + LEXICAL_WEIGHT * item.lexical


def own(question):
    """The relevance of "Alice: <a question>", asked about Alice, before any session gain."""
    return fused(question) + LABEL_WEIGHT


@pytest.mark.parametrize("operation", [memory_retrieve, memory_search])
def test_a_line_labelled_with_a_name_the_query_holds_is_boosted(user, store, operation):
    store(user, "Caroline: I painted a sunrise over the lake last week")
    store(user, "Melanie: I painted a sunrise over the lake last week")
    store(user, "Melanie: Caroline: I painted a sunrise over the lake last week")  # the label is Melanie's
    items = by_content(operation(actor=user, text="What did Caroline paint?", limit=10))
    caroline = items["Caroline: I painted a sunrise over the lake last week"]
    melanie = items["Melanie: I painted a sunrise over the lake last week"]
    quoted = items["Melanie: Caroline: I painted a sunrise over the lake last week"]
    assert caroline.relevance > fused(caroline) + 0.01
    assert caroline.relevance == pytest.approx(fused(caroline) + LABEL_WEIGHT, abs=2e-4)
    assert melanie.relevance == pytest.approx(fused(melanie), abs=2e-4)
    assert quoted.relevance == pytest.approx(fused(quoted), abs=2e-4)  # a label counts only at the start
    assert max(items.values(), key=lambda item: item.score) is caroline


def test_the_best_hits_session_neighbours_gain_from_it(user, store):
    start = timezone.now() - timedelta(days=1)
    store(user, "Alice: Where did you go on holiday this summer?", session_id="chat-1", created_at=start)
    store(user, "Bob: Small talk about the weather first", session_id="chat-1", created_at=start + timedelta(seconds=1))
    store(user, "Bob: We drove to Lisbon and ate custard tarts every day", session_id="chat-1",
          created_at=start + timedelta(seconds=2))
    store(user, "Bob: We drove to Lisbon and ate custard tarts every day", session_id="chat-2",
          created_at=start + timedelta(hours=1))
    store(user, "Bob: We drove to Lisbon and ate custard tarts every day", created_at=start + timedelta(hours=2))
    result = memory_retrieve(actor=user, text="Where did Alice go on holiday this summer?", limit=10)
    question = result.items[0]
    assert question.memory.content.startswith("Alice: Where did you go on holiday")
    answers = [item for item in result.items if "Lisbon" in item.memory.content]
    neighbour = next(item for item in answers if item.memory.session_id == "chat-1")
    others = [item for item in answers if item is not neighbour]
    assert len(others) == 2 and all(other.relevance == pytest.approx(fused(other), abs=2e-4) for other in others)
    # Two memories after the question in its session, it gains from the question's own relevance (before any gain;
    # the question's label is a query word), the best of its seeds; the same text elsewhere gains nothing.
    assert neighbour.relevance == pytest.approx(fused(neighbour) + NEIGHBOUR_WEIGHT * own(question), abs=3e-4)
    assert result.items.index(neighbour) < min(result.items.index(other) for other in others)


def test_search_has_no_session_boost(user, store):
    start = timezone.now() - timedelta(days=1)
    store(user, "Alice: Where did you go on holiday this summer?", session_id="chat-1", created_at=start)
    store(user, "Bob: We drove to Lisbon and ate custard tarts", session_id="chat-1",
          created_at=start + timedelta(seconds=1))
    result = memory_search(actor=user, text="holiday summer Lisbon", limit=10)
    assert all(item.relevance == pytest.approx(fused(item), abs=2e-4) for item in result.items)


def test_neighbours_are_counted_in_the_memorys_own_cube(user, other_user, store):
    """Another user's memories with the same session id, stored in between, neither take a neighbour's place nor
    gain (they are not in scope)."""
    start = timezone.now() - timedelta(days=1)
    store(user, "Alice: Where did you go on holiday this summer?", session_id="chat-1", created_at=start)
    for second in (1, 2):
        store(other_user, "Eve: Where did you go on holiday?", session_id="chat-1",
              created_at=start + timedelta(seconds=second))
    store(user, "Bob: We drove to Lisbon and ate custard tarts", session_id="chat-1",
          created_at=start + timedelta(seconds=3))
    result = memory_retrieve(actor=user, text="Where did Alice go on holiday?", limit=10)
    assert {item.memory.owner_id for item in result.items} == {user.pk}
    answer = next(item for item in result.items if "Lisbon" in item.memory.content)
    assert answer.relevance > fused(answer) + 0.01
    assert answer.relevance == pytest.approx(fused(answer) + NEIGHBOUR_WEIGHT * own(result.items[0]), abs=3e-4)


def test_memories_stored_at_one_instant_keep_their_order_by_id(user, store):
    at = timezone.now() - timedelta(days=1)
    store(user, "Alice: Where did you go on holiday this summer?", session_id="chat-1", created_at=at)
    store(user, "Bob: We drove to Lisbon and ate custard tarts", session_id="chat-1", created_at=at)
    result = memory_retrieve(actor=user, text="Where did Alice go on holiday?", limit=10)
    seed, answer = result.items[0], next(item for item in result.items if "Lisbon" in item.memory.content)
    assert answer.relevance > fused(answer) + 0.01
    assert answer.relevance == pytest.approx(fused(answer) + NEIGHBOUR_WEIGHT * own(seed), abs=3e-4)


@pytest.mark.parametrize("sessions", [True, False])
def test_feedback_and_neighbours_cost_one_statement(user, store, sessions, django_assert_num_queries):
    """The best hits' feedback words and neighbours are read in one statement, however many hits have a session
    (tests/memories/test_retrieve.py counts the others)."""
    start = timezone.now() - timedelta(days=1)
    for index in range(12):
        store(user, f"Alice: holiday plan number {index} is a trip to the coast",
              session_id=f"chat-{index % 3}" if sessions else "", created_at=start + timedelta(seconds=index))
    memory_retrieve(actor=user, text="holiday trip to the coast")
    with django_assert_num_queries(7):
        memory_retrieve(actor=user, text="holiday trip to the coast")


def pool_score(pk, score):
    return PoolScore(pk=pk, created=0.0, score=score, relevance=score, dense=0.0, lexical=0.0, recency=0.0,
                     link_weight=0.0)


def test_diversity_takes_a_near_copy_after_a_memory_that_adds_something(monkeypatch):
    ranked = [pool_score("hit", 1.0), pool_score("copy", 0.99), pool_score("other", 0.95), pool_score("new", 0.9),
              pool_score("below", 0.93)]
    vectors = {"hit": [1.0, 0.0, 0.0], "copy": [0.99, 0.14, 0.0], "other": [0.0, 1.0, 0.0], "below": [0.0, 0.0, 1.0]}
    monkeypatch.setattr(scoring, "DIVERSITY_DEPTH", 4)
    taken = diversify(ranked, vectors)
    assert [item.pk for item in taken] == ["hit", "other", "new", "copy", "below"]
    copy_penalty = DIVERSITY_WEIGHT * (0.99 / (0.99 ** 2 + 0.14 ** 2) ** 0.5)  # its cosine to the hit
    # "new" has no vector (deleted since it was scored): taken as unlike the rest, it keeps its score.
    assert [item.score for item in taken[:4]] == pytest.approx([1.0, 0.95, 0.9, 0.99 - copy_penalty], abs=1e-4)
    assert taken[4].score == taken[3].score  # below the depth: in its place, its score capped at the last taken one's


def test_a_retrieval_lists_a_copy_of_its_best_hit_after_a_different_one(user, store, monkeypatch):
    store(user, "We ate custard tarts in Lisbon every day", session_id="trip-1")
    store(user, "We ate custard tarts in Lisbon every day", session_id="trip-2")
    store(user, "The bakery by the Lisbon tram stop sells warm custard tarts")
    store(user, "My sister planted tomatoes in the garden")

    def order(weight):
        monkeypatch.setattr(scoring, "DIVERSITY_WEIGHT", weight)
        items = memory_retrieve(actor=user, text="custard tarts in Lisbon", limit=4, reinforce=False).items
        assert [item.score for item in items] == sorted((item.score for item in items), reverse=True)
        return [item.memory.content for item in items]

    copies = ["We ate custard tarts in Lisbon every day"] * 2
    assert order(0.0)[:2] == copies  # without diversity the two copies come first
    diverse = order(1.0)  # a cosine of 1 to the first costs the second copy its place
    assert diverse[0] == copies[0] and diverse[1].startswith("The bakery") and diverse[2:].count(copies[0]) == 1


def test_the_best_hits_rare_words_join_the_lexical_score(user, store):
    hit = store(user, "Melanie: I loved reading the book Charlotte's Web as a kid")
    echo = store(user, "Charlotte's Web still makes me cry every time")  # no word of the question
    common = store(user, "The web server crashed again this morning")  # one of the hit's words, a commoner one
    store(user, "The spider web in the garden was covered in dew")
    store(user, "Pasta with tomatoes for dinner tonight")
    retrieved = {item.memory.pk: item for item in memory_retrieve(actor=user, text="What books has Melanie read?",
                                                                  limit=10).items}
    searched = {item.memory.pk: item for item in memory_search(actor=user, text="What books has Melanie read?",
                                                               limit=10).items}
    assert retrieved[hit.pk].lexical == 1.0
    assert echo.pk not in searched or searched[echo.pk].lexical == 0  # search keeps to the question's own words
    # "charlott" (two memories) and "web" (four) are among the hit's rarer words: the echo holds both, the other one.
    assert retrieved[echo.pk].lexical > retrieved[common.pk].lexical > 0
    assert retrieved[echo.pk].lexical < FEEDBACK_WEIGHT * 2  # a low weight: below the question's own words
    assert retrieved[echo.pk].relevance == pytest.approx(fused(retrieved[echo.pk]), abs=2e-4)


@pytest.mark.parametrize(("text", "windows", "months"), [
    ("What did Tim say on 16 November, 2023?", [("2023-11-15", "2023-11-18")], []),
    ("Which team did John join on May 21st, 2023?", [("2023-05-20", "2023-05-23")], []),
    ("What was shared on December 1,2023?", [("2023-11-30", "2023-12-03")], []),
    ("What did Maria do in December 2023?", [("2023-12-01", "2024-01-01")], []),
    ("How often did she go to the beach in 2023?", [("2023-01-01", "2024-01-01")], []),
    ("When did Melanie go camping in June?", [], [6]),
    ("May I ask what you may have done?", [], []),  # neither "May" is a month
    ("What did Joanna write yesterday, or last week?", [], []),  # relative: to when it was said, unknown here
    ("What happened on 31 February, 2023?", [("2023-02-01", "2023-03-01")], []),  # no such day: still the month
])
def test_the_dates_a_question_names(text, windows, months):
    found = date_windows(text)
    dates = [(start.date().isoformat(), end.date().isoformat()) for start, end in zip(found.starts, found.ends)]
    assert dates == windows
    assert found.months == months


@pytest.mark.parametrize("operation", [memory_retrieve, memory_search])
def test_a_memory_created_on_the_date_the_query_names_is_boosted(user, store, operation):
    on_the_day = store(user, "The pottery class made a blue vase", created_at=datetime(2023, 11, 16, 15, tzinfo=UTC))
    other_day = store(user, "The pottery class made a blue vase", created_at=datetime(2023, 10, 2, 15, tzinfo=UTC))
    items = {item.memory.pk: item for item in operation(actor=user, text="What did the pottery class make on "
                                                                          "16 November, 2023?", limit=10).items}
    assert items[on_the_day.pk].relevance == pytest.approx(fused(items[on_the_day.pk]) + DATE_WEIGHT, abs=2e-4)
    assert items[other_day.pk].relevance == pytest.approx(fused(items[other_day.pk]), abs=2e-4)
    assert items[on_the_day.pk].relevance > items[other_day.pk].relevance + DATE_WEIGHT / 2
    month = {item.memory.pk: item for item in operation(actor=user, text="What did the pottery class make in "
                                                                         "October?", limit=10).items}
    assert month[other_day.pk].relevance > month[on_the_day.pk].relevance + DATE_WEIGHT / 2
