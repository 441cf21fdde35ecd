import pytest

from apps.core.exceptions import InvalidInput
from apps.memories.models import Memory
from apps.memories.services import memory_search
from apps.memories.validation import MemoryFilters


@pytest.fixture
def corpus(user, store):
    return {
        "dark": store(user, "User prefers dark mode for all applications", tags=["settings"]),
        "themes": store(user, "The user likes dark themes in the editor", tags=["editor"]),
        "light": store(user, "Light mode is used for printed reports", tags=["settings"]),
        "deploy": store(user, "Deploy with make release on Fridays", tags=["ops"]),
    }


def ids(result):
    return {item.memory.pk for item in result.items}


@pytest.mark.parametrize(("query", "expected"), [
    ("dark AND mode", {"dark"}),
    ("dark mode", None),  # plain words: hybrid, checked below
    ("dark OR light", {"dark", "themes", "light"}),
    ("mode NOT dark", {"light"}),
    ("mode -dark", {"light"}),
    ('"dark themes"', {"themes"}),
    ('"dark mode" OR deploy', {"dark", "deploy"}),
])
def test_boolean_operators_and_phrases(user, corpus, query, expected):
    result = memory_search(actor=user, text=query)
    if expected is None:
        assert result.search_type == "hybrid"
        return
    assert result.search_type == "full-text"
    assert ids(result) == {corpus[name].pk for name in expected}
    assert result.total_count == len(expected)


def test_plain_words_are_hybrid_and_rank_lexical_matches_first(user, corpus):
    result = memory_search(actor=user, text="dark mode")
    assert result.items[0].memory.pk == corpus["dark"].pk
    assert result.total_count >= 3


def test_highlight_marks_matches_and_escapes_html(user, store):
    store(user, "<script>alert(1)</script> dark mode rocks")
    item = memory_search(actor=user, text="dark AND mode").items[0]
    assert "<script>" not in item.highlight
    assert "&lt;script&gt;" in item.highlight
    assert "<b>dark</b> <b>mode</b>" in item.highlight
    assert item.highlight.startswith("&lt;script&gt;alert")  # nothing of the content is lost


def test_long_content_is_cut_around_the_first_match(user, store):
    store(user, "filler words here " * 60 + "the dark mode setting " + "more filler " * 60)
    highlight = memory_search(actor=user, text="dark AND mode").items[0].highlight
    assert highlight.startswith("… ") and highlight.endswith(" …") and "<b>dark</b>" in highlight


def test_matched_terms_use_stemming(user, corpus):
    item = memory_search(actor=user, text="prefer AND applications").items[0]
    assert item.memory.pk == corpus["dark"].pk
    assert item.matched_terms == ["prefer", "applications"]


def test_filters_and_paging(user, corpus):
    result = memory_search(actor=user, text="mode", filters=MemoryFilters.build(tags=["settings"]), limit=1)
    assert result.total_count == 2 and len(result.items) == 1
    rest = memory_search(actor=user, text="mode", filters=MemoryFilters.build(tags=["settings"]), limit=1, offset=1)
    assert ids(result) | ids(rest) == {corpus["dark"].pk, corpus["light"].pk}


def test_no_text_lists_by_metadata(user, corpus):
    result = memory_search(actor=user, filters=MemoryFilters.build(tags=["ops"]))
    assert result.search_type == "metadata" and ids(result) == {corpus["deploy"].pk}


def test_only_negation_is_refused(user, corpus):
    with pytest.raises(InvalidInput) as caught:
        memory_search(actor=user, text="NOT dark")
    assert caught.value.field == "text"


@pytest.mark.parametrize(("text", "search_type", "top", "terms"), [
    ("dark & | ! ( ) : * mode", "hybrid", "dark", ["dark", "mode"]),  # the punctuation goes, the words stay
    ("'; DROP TABLE memories; --", "full-text", None, []),  # "--" negates nothing; no memory has these words
    ('"unclosed phrase', "hybrid", None, []),  # a lone quote is no phrase
    ("❤️ émoji", "hybrid", None, []),
])
def test_punctuation_cannot_break_the_query(user, corpus, text, search_type, top, terms):
    result = memory_search(actor=user, text=text)  # never a database error
    assert result.search_type == search_type
    assert ids(result) <= {memory.pk for memory in corpus.values()}
    if top is not None:
        assert (result.items[0].memory.pk, result.items[0].matched_terms) == (corpus[top].pk, terms)
    else:
        assert all(item.matched_terms == [] for item in result.items)
    if search_type == "full-text":
        assert result.items == [] and result.total_count == 0
    assert Memory.objects.count() == len(corpus)  # the table and its rows are still there


def test_operators_alone_get_a_clear_error(user, corpus):
    with pytest.raises(InvalidInput) as caught:
        memory_search(actor=user, text="AND OR NOT")
    assert caught.value.field == "text"


def test_isolation(user, other_user, corpus, store):
    theirs = store(other_user, "User prefers dark mode for all applications")
    assert theirs.pk not in ids(memory_search(actor=user, text="dark AND mode"))
    assert ids(memory_search(actor=other_user, text="dark AND mode")) == {theirs.pk}


@pytest.mark.parametrize("through_hnsw", [False, True])
def test_a_boolean_search_with_more_matches_than_the_pool_ranks_them_all(user, monkeypatch, through_hnsw):
    # More matches than the candidate pool: their vectors are compared exactly, all of them (or, when
    # they are many and a fair share of the table, found through HNSW), so every page is ranked by the
    # full score and the pages together hold every match once.
    from apps.memories.services import memory_store_many
    from apps.memories.services.retrieval import dense, planner
    from apps.memories.services.retrieval.planner import MIN_POOL

    if through_hnsw:
        monkeypatch.setattr(dense, "HNSW_MIN_MATCHES", 0)
        monkeypatch.setattr(dense, "HNSW_MIN_SHARE", 0.0)
        # A fresh test table has not been analyzed (its size is unknown, which keeps the exact way).
        monkeypatch.setattr(dense, "_memories_in_table", lambda: 1)
    chosen = []
    real = dense.compare_exactly
    monkeypatch.setattr(planner, "compare_exactly", lambda matches: chosen.append(real(matches)) or chosen[-1])

    count = MIN_POOL + 21
    items = [{"content": f"Garden log {n}: checked the fence posts and the shed roof"} for n in range(count - 1)]
    items.append({"content": "Garden log: the tomatoes need feeding this week"})
    memory_store_many(actor=user, items=items, link=False)
    first = memory_search(actor=user, text="garden AND log", limit=100)
    rest = memory_search(actor=user, text="garden AND log", limit=100, offset=100)
    assert first.search_type == "full-text" and first.total_count == count
    items = first.items + rest.items
    assert len({item.memory.pk for item in items}) == count
    assert all(item.dense > 0 for item in items)
    scores = [item.score for item in items]
    assert scores == sorted(scores, reverse=True)
    assert chosen == [not through_hnsw] * 2


@pytest.mark.parametrize(("matches", "table", "exactly"), [
    (1000, 10_000, True),  # up to HNSW_MIN_MATCHES: always exact
    (1001, 100_000, False),  # 1% of the table: HNSW
    (2500, 100_000, False),
    (2500, 1_000_000, True),  # one user's matches among many users' memories: the walk would go far
    (1500, -1, True),  # a table PostgreSQL has not analyzed yet: the safe way
])
def test_when_a_boolean_search_compares_its_matches_exactly(monkeypatch, matches, table, exactly):
    from apps.memories.services.retrieval import dense

    monkeypatch.setattr(dense, "_memories_in_table", lambda: table)
    assert dense.compare_exactly(matches) is exactly


def test_the_table_size_is_postgresqls_estimate_read_once_in_a_while(user, store, monkeypatch,
                                                                      django_assert_num_queries):
    from django.db import connection

    from apps.memories.services.retrieval import dense

    store(user, "One memory so that the table has a row")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    monkeypatch.setattr(dense, "_table_size", [float("-inf"), -1])
    with django_assert_num_queries(1):
        assert dense._memories_in_table() >= 1
        assert dense._memories_in_table() >= 1  # the second read comes from the process's copy


@pytest.mark.parametrize(("query", "meaning"), [
    ("inspired -joanna", "inspired"),
    ("painting NOT joanna", "painting"),
    ('"machine learning" OR python', "machine learning python"),
    ("dark AND mode", "dark mode"),
    ("What did Joanna paint last week?", "What did Joanna paint last week?"),  # plain words: the text itself
])
def test_a_search_ranks_by_the_meaning_of_its_positive_words(user, corpus, monkeypatch, query, meaning):
    # A NOT-ed word embedded with the rest would pull the query vector toward what the query excludes.
    from apps.memories.services.retrieval import dense

    embedded = []
    real = dense.embed_query
    monkeypatch.setattr(dense, "embed_query", lambda text: embedded.append(text) or real(text))
    memory_search(actor=user, text=query)
    assert embedded == [meaning]
