"""How relevant a retrieved memory is to a chat question, and the floor below which chat does not answer from it.

Retrieval's relevance (apps/memories/services/retrieval/scoring.py) divides each memory's lexical score by the best
in its pool, so whatever word of a query matches best scores 1.0: "zzzz qqqq nothing relevant" reached 0.57 on a
memory that said "nothing". Ranking needs only the order, but a floor needs an absolute measure, so chat scores a
memory as 0.5 x its cosine similarity to the question (retrieval's dense score) + 0.5 x the share of the question's
content words the memory holds (words of three letters or more, not stopwords; "tomato" and "tomatoes" count as one
word: two words are one when the shorter, of four letters or more, starts the longer).
"""
from __future__ import annotations

import re

from apps.memories.text import STOPWORDS

# Measured with the real MiniLM on LoCoMo's dev split (its 2,760 turns stored as memories, one cube per
# conversation): at 0.35 the best of the top five clears the floor for 99.2% of its 762 questions (categories
# 1-4) and the memory holding the answer does for 98.4% of those that retrieve it, while 97.6% of 125 unrelated
# questions (25 off-topic ones and gibberish in each cube) are refused; the three that pass matched a memory on
# their topic (the Eiffel Tower, a recipe). docs/architecture.md, "Chat", has the table.
RELEVANCE_FLOOR = 0.35
DENSE_WEIGHT = 0.5
WORDS_WEIGHT = 0.5
MIN_WORD_CHARS = 3
MIN_STEM_CHARS = 4

WORD = re.compile(r"[^\W_]+", re.UNICODE)


def content_words(text: str) -> set[str]:
    return {word for word in (match.lower() for match in WORD.findall(text))
            if len(word) >= MIN_WORD_CHARS and word not in STOPWORDS}


def same_word(a: str, b: str) -> bool:
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return shorter == longer or (len(shorter) >= MIN_STEM_CHARS and longer.startswith(shorter))


def shared_words(query_words: set[str], text_words: set[str]) -> set[str]:
    """The query's words that ``text_words`` holds (as the same word, see same_word)."""
    return {word for word in query_words if word in text_words or any(same_word(word, other) for other in text_words)}


def chat_relevance(*, query_words: set[str], content: str, dense: float) -> float:
    """0-1: the memory's cosine to the question and the share of the question's content words it holds."""
    share = len(shared_words(query_words, content_words(content))) / len(query_words) if query_words else 0.0
    return round(DENSE_WEIGHT * max(0.0, dense) + WORDS_WEIGHT * share, 4)
