"""Sharp-edge detection patterns: validating them when an edge is written, and running them when edges
are checked.

A pattern is ``{"type": "code" | "context" | "intent", "pattern": str, "description": str,
"file_glob"?: str}``. Patterns come from users and agents, so they are untrusted:

- Every pattern must compile with the ``regex`` module and is at most 500 characters, so a bad one is
  refused when the edge is written, naming the list item at fault, instead of failing at check time.
- **Code** patterns are case-insensitive regular expressions searched in the code, with a time budget
  (``regex``'s ``timeout``): a catastrophic pattern counts as no match and logs a warning instead of
  holding a worker. An optional ``file_glob`` (fnmatch, e.g. ``*.ts``) limits a code pattern to files
  whose path matches it; a check given no file path is not limited by it.
- **Intent** and **context** patterns are keyword lists (the reference design matches them as
  keywords, and the seed writes them in regex-looking syntax such as ``edge.*crypto|crypto.*edge``).
  They are read as: ``|`` separates alternatives; within an alternative, every run of letters, digits
  or ``_`` is a keyword, and anything else (``.*``, spaces, commas, backslashes) only separates them.
  An alternative matches when each of its keywords starts a word of the text, case-insensitively
  (``deploy`` matches "deploying", ``edge`` does not match "knowledge"); the pattern matches when
  any alternative does. So ``edge.*crypto|crypto.*edge`` matches any text that mentions both words,
  in either order. No regex is run on them at check time, so they cannot be slow.
"""
from __future__ import annotations

import fnmatch
import logging
import re

import regex

from apps.core.exceptions import InvalidInput
from apps.memories.text import STOPWORDS as MEMORY_STOPWORDS
from apps.projects.validation import MAX_ITEM_CHARS, clean_object_list, clean_text

logger = logging.getLogger(__name__)

PATTERN_TYPES = ("code", "context", "intent")
KEYWORD_TYPES = ("context", "intent")
MAX_PATTERN_CHARS = 500
MAX_DESCRIPTION_CHARS = MAX_ITEM_CHARS
MAX_GLOB_CHARS = 300
MAX_PATTERNS = 100
# Seconds one pattern may run on one text: generous for any sane pattern, short enough that an edge
# with a handful of pathological ones still answers well inside a request.
SEARCH_TIMEOUT = 0.05
ALLOWED_KEYS = frozenset({"type", "pattern", "description", "file_glob"})

_WORD = re.compile(r"\w+")


def clean_detection_patterns(value, field: str = "detection_patterns") -> list[dict]:
    """The validated, normalised list of detection patterns, or InvalidInput naming the item at fault
    (``detection_patterns[2].pattern``) and how to fix it. ``None`` means no patterns."""
    items = clean_object_list(value, field=field, example='{"type": "code", "pattern": "...", "description": "..."}',
                              max_items=MAX_PATTERNS)
    return [_clean_pattern(item, f"{field}[{index}]") for index, item in enumerate(items)]


def _clean_pattern(item: dict, where: str) -> dict:
    unknown = sorted(set(item) - ALLOWED_KEYS)
    if unknown:
        raise InvalidInput(
            f"{where} has unknown keys {', '.join(unknown)}: use type, pattern, description and (for code "
            "patterns) file_glob.", field=f"{where}.{unknown[0]}",
        )
    kind = item.get("type")
    if kind not in PATTERN_TYPES:
        raise InvalidInput(f"{where}.type must be one of code, context, intent; got {kind!r}.", field=f"{where}.type")
    pattern = _clean_pattern_text(item.get("pattern"), kind, f"{where}.pattern")
    cleaned = {
        "type": kind,
        "pattern": pattern,
        "description": clean_text(item.get("description"), field=f"{where}.description",
                                  max_chars=MAX_DESCRIPTION_CHARS),
    }
    glob = item.get("file_glob")
    if glob not in (None, ""):
        if kind != "code":
            raise InvalidInput(f"{where}.file_glob applies only to code patterns: remove it or use type code.",
                               field=f"{where}.file_glob")
        cleaned["file_glob"] = clean_text(glob, field=f"{where}.file_glob", max_chars=MAX_GLOB_CHARS)
    return cleaned


def _clean_pattern_text(value, kind: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{where} must be a non-empty string.", field=where)
    if "\x00" in value:
        raise InvalidInput(f"{where} cannot contain NUL bytes.", field=where)
    if len(value) > MAX_PATTERN_CHARS:
        raise InvalidInput(f"{where} is {len(value)} characters long; at most {MAX_PATTERN_CHARS}.", field=where)
    try:
        regex.compile(value, flags=regex.IGNORECASE)
    except regex.error as exc:
        raise InvalidInput(f"{where}: not a valid regular expression ({exc}). Escape special characters such "
                           "as . ( [ with a backslash.", field=where) from exc
    if kind in KEYWORD_TYPES and not pattern_keywords(value):
        raise InvalidInput(f"{where}: a {kind} pattern is a list of keywords and this one has no words.", field=where)
    return value


def pattern_search(pattern: str, text: str):
    """``regex.search`` of a stored code pattern, case-insensitive and time-bounded: the match, or None
    when there is none, when the pattern runs out of time, or when it does not compile (a row written
    around validation). The last two are logged, since they mean a pattern worth fixing."""
    try:
        return regex.search(pattern, text, flags=regex.IGNORECASE, timeout=SEARCH_TIMEOUT)
    except TimeoutError:
        logger.warning("Detection pattern %r ran out of time (%.2fs) on %d characters: treated as no match.",
                       pattern, SEARCH_TIMEOUT, len(text))
    except regex.error as exc:
        logger.warning("Detection pattern %r does not compile (%s): treated as no match.", pattern, exc)
    return None


def pattern_keywords(pattern: str) -> list[list[str]]:
    """A keyword pattern read as its alternatives, each a list of lower-case keywords (see the module
    docstring); alternatives without any word are dropped."""
    alternatives = ([word.lower() for word in _WORD.findall(part)] for part in pattern.split("|"))
    return [words for words in alternatives if words]


def keywords_match(pattern: str, text: str) -> bool:
    """Whether any alternative of a keyword pattern has all its keywords starting words of ``text``."""
    words = {word.lower() for word in _WORD.findall(text)}
    if not words:
        return False
    return any(all(_starts_a_word(keyword, words) for keyword in alternative)
               for alternative in pattern_keywords(pattern))


def _starts_a_word(keyword: str, words: set[str]) -> bool:
    return keyword in words or any(word.startswith(keyword) for word in words)


# Words too common to relate two texts: the memories' stopwords plus the vaguest verbs, which say nothing
# of what a condition or a goal is about ("we need X", "use Y").
STOPWORDS = MEMORY_STOPWORDS | frozenset(
    "already may might must need needs make made want wants use used using".split()
)
MIN_KEYWORD_CHARS = 3


def text_keywords(text: str) -> set[str]:
    """The words of ``text`` that can relate it to another text: lower-case, at least three characters,
    not a stopword. Used to tell whether two texts are about the same thing (primer points, pending
    decisions, trigger phrases)."""
    return {word for word in (w.lower() for w in _WORD.findall(text or ""))
            if len(word) >= MIN_KEYWORD_CHARS and word not in STOPWORDS}


def _same_word(a: str, b: str) -> bool:
    """Equal, or one a prefix of the other of at least four letters ("deploy" and "deploying")."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= 4 and long.startswith(short)


def shared_keywords(words: set[str], others: set[str]) -> set[str]:
    """The words of ``words`` that also occur (as the same word, see _same_word) in ``others``."""
    return {word for word in words if word in others or any(_same_word(word, other) for other in others)}


def glob_allows(glob: str | None, file_path: str | None) -> bool:
    """Whether a code pattern's file glob lets it run for ``file_path``: no glob or no path never
    restricts; otherwise the glob must match the whole path or its last component (``page.tsx``
    matches ``src/app/page.tsx``; fnmatch's ``*`` also crosses ``/``, so ``*.ts`` matches any .ts file)."""
    if not glob or not file_path:
        return True
    path = file_path.replace("\\", "/")
    return fnmatch.fnmatch(path, glob) or fnmatch.fnmatch(path.rsplit("/", 1)[-1], glob)
