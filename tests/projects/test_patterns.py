"""Detection patterns: validation at write time, bounded regex search, keyword reading, file globs."""
import logging

import pytest

from apps.core.exceptions import InvalidInput
from apps.projects.patterns import (
    clean_detection_patterns, glob_allows, keywords_match, pattern_keywords, pattern_search,
)

SEED_PATTERNS = [
    {"type": "code", "pattern": "crypto\\.randomUUID|crypto\\.createHash", "description": "Node crypto usage"},
    {"type": "context", "pattern": "edge.*crypto|crypto.*edge", "description": "Crypto in edge context"},
]


def test_seed_patterns_are_accepted_as_they_are():
    assert clean_detection_patterns(SEED_PATTERNS) == SEED_PATTERNS


def test_none_is_no_patterns_and_description_defaults_to_empty():
    assert clean_detection_patterns(None) == []
    assert clean_detection_patterns([{"type": "intent", "pattern": "deploy"}]) == [
        {"type": "intent", "pattern": "deploy", "description": ""}]


def test_file_glob_is_kept_on_code_patterns():
    cleaned = clean_detection_patterns([{"type": "code", "pattern": "x", "description": "", "file_glob": "*.ts"}])
    assert cleaned[0]["file_glob"] == "*.ts"


@pytest.mark.parametrize("patterns, field, words", [
    ("crypto", "detection_patterns", "must be a list"),
    (["crypto"], "detection_patterns[0]", "must be an object"),
    ([{"type": "regex", "pattern": "x"}], "detection_patterns[0].type", "code, context, intent"),
    ([{"pattern": "x"}], "detection_patterns[0].type", "code, context, intent"),
    ([SEED_PATTERNS[0], {"type": "code", "pattern": "(unclosed"}], "detection_patterns[1].pattern",
     "not a valid regular expression"),
    ([{"type": "code", "pattern": "a" * 501}], "detection_patterns[0].pattern", "at most 500"),
    ([{"type": "code", "pattern": "   "}], "detection_patterns[0].pattern", "non-empty"),
    ([{"type": "code", "pattern": 5}], "detection_patterns[0].pattern", "non-empty"),
    ([{"type": "intent", "pattern": ".*|\\."}], "detection_patterns[0].pattern", "no words"),
    ([{"type": "intent", "pattern": "x", "file_glob": "*.py"}], "detection_patterns[0].file_glob", "only to code"),
    ([{"type": "code", "pattern": "x", "regex": "y"}], "detection_patterns[0].regex", "unknown keys"),
    ([{"type": "code", "pattern": "x", "description": "d" * 1001}], "detection_patterns[0].description",
     "the limit is 1000"),
    ([{"type": "code", "pattern": "x"}] * 101, "detection_patterns", "at most 100"),
    ([{"type": "code", "pattern": "x", "description": 3}], "detection_patterns[0].description", "must be a string"),
])
def test_bad_patterns_name_the_field_and_the_fix(patterns, field, words):
    with pytest.raises(InvalidInput) as caught:
        clean_detection_patterns(patterns)
    assert caught.value.field == field
    assert words in caught.value.message


def test_the_field_prefix_is_the_callers():
    with pytest.raises(InvalidInput) as caught:
        clean_detection_patterns([{"type": "bad", "pattern": "x"}], field="patterns")
    assert caught.value.field == "patterns[0].type"


def test_code_patterns_are_case_insensitive_regexes():
    assert pattern_search("crypto\\.randomUUID", "const token = CRYPTO.randomuuid()")
    assert pattern_search("crypto\\.randomUUID", "const token = cryptoXrandomUUID()") is None


def test_a_catastrophic_pattern_returns_no_match():
    assert pattern_search(r"(a+)+$", "a" * 50 + "b") is None


def test_a_pattern_that_runs_out_of_time_is_no_match_and_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="apps.projects.patterns"):
        assert pattern_search(r"(a|aa)+$", "a" * 50 + "b") is None
    assert "ran out of time" in caplog.text


def test_a_stored_pattern_that_does_not_compile_is_no_match(caplog):
    with caplog.at_level(logging.WARNING, logger="apps.projects.patterns"):
        assert pattern_search("(unclosed", "(unclosed") is None
    assert "does not compile" in caplog.text


def test_keyword_patterns_read_alternatives_and_words():
    assert pattern_keywords("edge.*crypto|crypto.*edge") == [["edge", "crypto"], ["crypto", "edge"]]
    assert pattern_keywords("Deploy, Vercel | .*") == [["deploy", "vercel"]]


@pytest.mark.parametrize("pattern, text, expected", [
    ("edge.*crypto|crypto.*edge", "runtime edge, hashing with crypto", True),
    ("edge.*crypto|crypto.*edge", "crypto on the EDGE", True),
    ("edge.*crypto", "runtime edge only", False),
    ("edge", "acquire knowledge", False),
    ("deploy", "deploying to production", True),
    ("webhook|cron", "schedule a CRON job", True),
    ("webhook|cron", "", False),
])
def test_keyword_matching(pattern, text, expected):
    assert keywords_match(pattern, text) is expected


@pytest.mark.parametrize("glob, path, expected", [
    ("*.ts", "src/lib/token.ts", True),
    ("*.ts", "src/lib/token.py", False),
    ("page.tsx", "app/page.tsx", True),
    ("app/api/*", "app/api/route.ts", True),
    ("app/api/*", "lib/route.ts", False),
    ("*.ts", None, True),
    (None, "src/x.py", True),
])
def test_file_globs(glob, path, expected):
    assert glob_allows(glob, path) is expected
