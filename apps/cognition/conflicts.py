"""When two similar memories say different things: the text checks of inject_context's conflict alert, as plain
functions. A pair clashes when one is negated and the other is not ("X supports Y" / "X does not support Y"), or
when the same word is followed by different numbers ("version 2.1" / "version 3.0"); the topic is the words they
share."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "without",
                       "nowhere"})
STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being it its
this that these those there here we you they he she i me my our your their his her them us do does did done have has
had having will would shall should can could may might must so than then too very also just about into over under
up down out off again once all any both each few more most other some such only own same which who whom what when
where why how while after before per via""".split())
# Words, with their dots, apostrophes and hyphens ("3.11", "don't", "gpt-4"), and numbers with a unit ("16gb").
_WORD = re.compile(r"\w+(?:[.'’-]\w+)*")
_NUMBER = re.compile(r"v?\d+(?:[.,]\d+)*[a-z%]*")
# How far back (in words) a number looks for the word it belongs to.
_KEY_WINDOW = 3
TOPIC_WORDS = 4


@dataclass(frozen=True)
class Clash:
    reason: str  # "negation" or "numbers"
    topic: str


def words(text: str) -> list[str]:
    return [word.lower().replace("’", "'") for word in _WORD.findall(text)]


def is_number(word: str) -> bool:
    return bool(_NUMBER.fullmatch(word))


def negated(text: str) -> bool:
    return any(word in NEGATIONS or word.endswith("n't") for word in words(text))


def content_words(text: str) -> list[str]:
    """The words that carry the topic: no stopwords, negations or numbers; each once, in order."""
    seen = [word for word in words(text) if word not in STOPWORDS and word not in NEGATIONS
            and not word.endswith("n't") and not is_number(word)]
    return list(dict.fromkeys(seen))


def numbers_by_word(text: str) -> dict[str, set[str]]:
    """Each number (a leading "v" dropped) under the word it belongs to: the nearest content word before it within
    a few words, else the next one after it ("PostgreSQL 15", "version 2.1", "30 seconds")."""
    tokens = words(text)
    found: dict[str, set[str]] = {}
    for index, word in enumerate(tokens):
        if not is_number(word):
            continue
        before = [w for w in tokens[max(0, index - _KEY_WINDOW):index] if _is_key(w)]
        after = [w for w in tokens[index + 1:index + 1 + _KEY_WINDOW] if _is_key(w)]
        key = before[-1] if before else after[0] if after else None
        if key:
            found.setdefault(key, set()).add(word.removeprefix("v"))
    return found


def _is_key(word: str) -> bool:
    return word not in STOPWORDS and word not in NEGATIONS and not is_number(word)


@dataclass(frozen=True)
class Reading:
    """What the checks read of a text, once: a node meets many others in one call."""

    negated: bool
    numbers: dict[str, set[str]]
    content: tuple[str, ...]


@functools.lru_cache(maxsize=2048)
def reading(text: str) -> Reading:
    return Reading(negated(text), numbers_by_word(text), tuple(content_words(text)))


def topic(a: str, b: str, *, key: str | None = None) -> str:
    """The first few content words both texts have (and ``key``, the word a number clash is about)."""
    shared_words = set(reading(b).content)
    shared = [word for word in reading(a).content if word in shared_words][:TOPIC_WORDS]
    if key and key not in shared:
        shared = [*shared[:TOPIC_WORDS - 1], key]
    return " ".join(shared)


def clash(a: str, b: str) -> Clash | None:
    """Whether two texts contradict each other by negation or by numbers, and on what."""
    first, second = reading(a), reading(b)
    if first.negated != second.negated:
        return Clash("negation", topic(a, b))
    for key, numbers in first.numbers.items():
        if key in second.numbers and numbers != second.numbers[key]:
            return Clash("numbers", topic(a, b, key=key))
    return None
