"""Turning what people type into PostgreSQL tsquery text.

Search syntax (search_memories): words, "quoted phrases", and the operators AND, OR, NOT (upper case,
as in the ThoughtMCP seed; ``-word`` also negates). Words side by side mean AND. ``a OR b c`` groups as
``a | (b & c)`` is NOT what people expect, so OR binds loosest: ``(a) | (b & c)``. Retrieval
(retrieve_memories) and plain natural-language searches use any-word matching instead (``any_words``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from apps.memories.text import STOPWORDS

TOKEN = re.compile(r'"([^"]*)"|(\S+)')
WORD = re.compile(r"[^\W_]+(?:[_'][^\W_]+)*", re.UNICODE)
OPERATORS = {"AND", "OR", "NOT"}


def _lexeme_words(text: str) -> list[str]:
    # Apostrophes and underscores split words the way PostgreSQL's parser does.
    return [w.lower() for w in re.findall(r"[^\W_]+", text, re.UNICODE)]


def plain_word(text: str) -> bool:
    """One word as the query parser splits them: safe to put in a tsquery as it is."""
    return _lexeme_words(text) == [text.lower()]


@dataclass(frozen=True)
class ParsedQuery:
    tsquery: str  # text for to_tsquery(config, ...); "" when nothing searchable is left
    terms: list[str]  # the positive words, for matchedTerms and highlighting
    boolean: bool  # True when the query used operators, phrases or negation

    def with_terms(self, words: list[str]) -> ParsedQuery:
        """A plain-word query matching these words too (plain words, as ``plain_word`` checks)."""
        assert not self.boolean, "a boolean query's logic is the user's"
        terms = list(dict.fromkeys([*self.terms, *words]))
        return ParsedQuery(tsquery=" | ".join(terms), terms=terms, boolean=False)


def parse_search(text: str) -> ParsedQuery:
    groups: list[list[str]] = [[]]
    terms: list[str] = []
    boolean = False
    negate_next = False
    for phrase, bare in TOKEN.findall(text):
        if bare in OPERATORS:
            boolean = True
            if bare == "OR" and groups[-1]:
                groups.append([])
            elif bare == "NOT":
                negate_next = True
            continue
        negate = negate_next
        negate_next = False
        if phrase == "" and bare.startswith("-") and len(bare) > 1:
            negate, bare = True, bare[1:]
            boolean = True
        words = _lexeme_words(phrase if phrase else bare)
        if not words:
            continue
        if phrase:
            boolean = True
        clause = " <-> ".join(words)
        clause = f"({clause})" if len(words) > 1 else clause
        if negate:
            groups[-1].append(f"!{clause}")
        else:
            groups[-1].append(clause)
            terms.extend(words)
    clauses = [" & ".join(group) for group in groups if group and any(not c.startswith("!") for c in group)]
    tsquery = " | ".join(f"({c})" if len(clauses) > 1 else c for c in clauses)
    return ParsedQuery(tsquery=tsquery, terms=list(dict.fromkeys(terms)), boolean=boolean)


def any_words(text: str) -> ParsedQuery:
    """Match any content word of a natural-language query (stop words dropped)."""
    words = [w for w in _lexeme_words(text) if w not in STOPWORDS and len(w) > 1]
    words = list(dict.fromkeys(words))
    return ParsedQuery(tsquery=" | ".join(words), terms=words, boolean=False)
