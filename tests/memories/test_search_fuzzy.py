"""Search forgives typos (issue 21): a word no memory in scope holds is matched as the nearest word of the user's own
memories (pg_trgm over the cubes' lexemes) and offered as "did you mean", in the service, REST, MCP and the page;
another user's vocabulary is never suggested; keywords keep non-ASCII words whole."""
import pytest
from django.urls import reverse

from apps.memories.services import memory_search
from apps.memories.services.retrieval import lexical
from apps.memories.text import extract_keywords

pytestmark = pytest.mark.django_db


@pytest.fixture
def notes(user, store):
    return {
        "plan": store(user, "The postgres migration runs on Sunday night after the backup finishes."),
        "check": store(user, "Check every migration against a copy of production postgres first."),
        "garden": store(user, "The tomatoes in the south bed need water every other evening."),
    }


def ids(result):
    return {item.memory.pk for item in result.items}


def test_a_misspelt_search_finds_what_the_right_words_find_and_suggests_them(user, notes):
    right = memory_search(actor=user, text="postgres migration")
    wrong = memory_search(actor=user, text="postgress migratoin")
    assert right.suggestion is None
    assert wrong.suggestion == "postgres migration"
    assert ids(wrong) >= {notes["plan"].pk, notes["check"].pk}
    hit = next(item for item in wrong.items if item.memory.pk == notes["plan"].pk)
    assert set(hit.matched_terms) >= {"postgres", "migration"} and "<b>migration</b>" in hit.highlight


def test_the_suggestion_keeps_the_query_as_typed_around_the_corrected_words(user, notes):
    assert memory_search(actor=user, text="When does the Migratoin run?").suggestion == "When does the migration run?"


def test_a_boolean_search_is_only_told_of_the_correction(user, notes):
    result = memory_search(actor=user, text="migratoin AND sunday")
    assert result.suggestion == "migration AND sunday"
    assert result.search_type == "full-text" and result.items == []  # the user's logic, not a guess, filters


def test_words_far_from_any_of_the_users_words_are_not_corrected(user, notes):
    result = memory_search(actor=user, text="zzzz qqqq xylophone")
    assert result.suggestion is None and result.items == []


def test_short_words_are_left_alone(user, notes):
    assert lexical.FUZZY_MIN_CHARS == 4
    assert memory_search(actor=user, text="bd").suggestion is None


def test_another_users_words_are_never_suggested(user, other_user, notes, store):
    store(other_user, "Bob's kubernetes cluster upgrade is scheduled for the spring.")
    assert memory_search(actor=user, text="clustr").suggestion is None
    assert memory_search(actor=other_user, text="clustr").suggestion == "cluster"
    assert memory_search(actor=other_user, text="migratoin").suggestion is None


def test_the_correction_costs_one_statement_and_only_for_unknown_words(user, notes, django_assert_max_num_queries):
    memory_search(actor=user, text="postgres migration")  # the lexemes' cache is warm for both forms after this
    memory_search(actor=user, text="postgress migratoin")
    with django_assert_max_num_queries(20) as plain:
        memory_search(actor=user, text="postgres migration", reinforce=False)
    with django_assert_max_num_queries(20) as typo:
        memory_search(actor=user, text="postgress migratoin", reinforce=False)
    assert len(typo.captured_queries) == len(plain.captured_queries) + 1
    assert sum("similarity(" in query["sql"] for query in typo.captured_queries) == 1


def test_rest_answers_did_you_mean(user, notes, api):
    answer = api.post(reverse("memories_api:memory-search"), {"text": "postgress migratoin"}, format="json").json()
    assert answer["did_you_mean"] == "postgres migration" and answer["total_count"] >= 2
    assert api.post(reverse("memories_api:memory-search"), {"text": "postgres"}, format="json").json()["did_you_mean"] is None


def test_the_search_page_offers_the_suggestion_as_a_link(client, user, notes):
    client.force_login(user)
    page = client.get(reverse("dashboard:search"), {"q": "postgress migratoin", "limit": 10}).content.decode()
    assert "Did you mean" in page and "?q=postgres+migration" in page and "limit=10" in page


def test_keywords_keep_non_ascii_words_whole():
    assert extract_keywords("Tomás met Tomás in Zürich; Zürich was cold.")[:2] == ["zürich", "tomás"]
