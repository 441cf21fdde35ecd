import pytest

from apps.memories.query import any_words, parse_search


@pytest.mark.parametrize(("text", "tsquery", "terms", "boolean"), [
    ("dark mode", "dark & mode", ["dark", "mode"], False),
    ("dark AND mode", "dark & mode", ["dark", "mode"], True),
    ("dark OR light mode", "(dark) | (light & mode)", ["dark", "light", "mode"], True),
    ("mode NOT dark", "mode & !dark", ["mode"], True),
    ("mode -dark", "mode & !dark", ["mode"], True),
    ('"dark mode" rocks', "(dark <-> mode) & rocks", ["dark", "mode", "rocks"], True),
    ("it's a can't", "(it <-> s) & a & (can <-> t)", ["it", "s", "a", "can", "t"], False),
    ("!!! & |", "", [], False),
])
def test_parse_search(text, tsquery, terms, boolean):
    parsed = parse_search(text)
    assert (parsed.tsquery, parsed.terms, parsed.boolean) == (tsquery, terms, boolean)


def test_any_words_drops_stop_words():
    parsed = any_words("When did Caroline go to the LGBTQ support group?")
    assert parsed.tsquery == "caroline | go | lgbtq | support | group"
