"""How the analyses read plain English: words and their stems, sentences, phrases, and short renderings of text.

think, analyze_systematically, think_parallel and decompose_problem read a problem through these (problem.py
builds its profile from them), so that "failures" meets "failure" the same way in each.
"""
from __future__ import annotations

import re

STOPWORDS = frozenset("""
a an the this that these those it its is are was were be been being am do does did doing have has had having of to in
on at by for with from into onto over under about as than then so such and or but nor if while when where which who
whom whose what why how should would could can may might must will shall we our us you your they their them i me my
he she his her there here not no yes all any some each every more most less least very just also only own same other
too up down out off again further once both few many much per via using use need needs want wants get make
""".split())

SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#./%<>-]*")


def words(text: str) -> list[str]:
    return [match.group(0).lower().strip(".") for match in WORD.finditer(text)]


def content_words(text: str) -> set[str]:
    """The words that carry meaning, lightly stemmed so that "failures" meets "failure" and "users" meets "user"."""
    return {stem(word) for word in words(text) if word not in STOPWORDS and len(word) > 1}


def stem(word: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def overlap(a: str | set[str], b: str | set[str]) -> float:
    """How much two texts share, 0..1: shared content words over the smaller set (short phrases match long ones)."""
    words_a = a if isinstance(a, set) else content_words(a)
    words_b = b if isinstance(b, set) else content_words(b)
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / min(len(words_a), len(words_b))


def similarity(a: str, b: str) -> float:
    """Symmetric word overlap (Jaccard), 0..1: whether two statements say the same thing."""
    words_a, words_b = content_words(a), content_words(b)
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / len(words_a | words_b)


def sentences(text: str) -> list[str]:
    return [part.strip(" .!?;") for part in SENTENCE_BREAK.split(text.strip()) if part.strip(" .!?;")]


def matched(text: str, cues: tuple[str, ...], *, word_chars: str = "a-z0-9") -> list[str]:
    """The cues that occur in ``text`` (in any case) as whole words, in the order given: no character of the class
    ``word_chars`` stands right before or after them."""
    lowered = text.lower()
    return [cue for cue in cues if re.search(rf"(?<![{word_chars}]){re.escape(cue)}(?![{word_chars}])", lowered)]


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_line(text: str, limit: int = 160) -> str:
    """The text's first line, cut to ``limit`` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else f"{line[:limit - 1]}…"


def lower_first(text: str) -> str:
    """A sentence continued mid-sentence: "Cache the reads" -> "cache the reads"."""
    return text[:1].lower() + text[1:]


def join_list(items: list[str] | tuple[str, ...], *, limit: int = 3) -> str:
    items = [item for item in items if item][:limit]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def listed(items: list[str], *, quoted: bool = False, limit: int = 4) -> str:
    """The first ``limit`` items, comma-separated, each in single quotes when ``quoted``."""
    return ", ".join(f"'{item}'" if quoted else item for item in items[:limit])


def is_measurable(text: str) -> bool:
    return bool(re.search(r"\d|%|<|>", text))
