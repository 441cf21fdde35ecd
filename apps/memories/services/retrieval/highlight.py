"""Highlighting: a search hit's content with its matching words in <b>, and the query terms it matched."""
from __future__ import annotations

import html
import re

from apps.memories.query import ParsedQuery

from .lexical import lexemes_of
from .scoring import ScoredMemory

HIGHLIGHT_CHARS = 400
HIGHLIGHT_WORD = re.compile(r"([^\W_]+)", re.UNICODE)


def annotate_matches(items: list[ScoredMemory], parsed: ParsedQuery) -> None:
    """Fill highlight and matchedTerms for one page of results.

    Highlighting happens here rather than in ts_headline, which drops anything that looks like a tag
    (so a memory about HTML would lose text). Each word is stemmed by PostgreSQL itself, in one query
    for the whole page, so a highlighted word is exactly one the full-text match used."""
    contents = [item.memory.content for item in items]
    words = {word.lower() for content in contents for word in HIGHLIGHT_WORD.findall(content)}
    lexemes = lexemes_of(sorted(words | set(parsed.terms)))
    wanted = set().union(*(lexemes.get(term, set()) for term in parsed.terms)) if parsed.terms else set()
    for item in items:
        item.highlight = _highlight(item.memory.content, wanted, lexemes)
        found = {lexeme for word in HIGHLIGHT_WORD.findall(item.memory.content) for lexeme in lexemes.get(word.lower(), ())}
        item.matched_terms = [term for term in parsed.terms if lexemes.get(term, set()) & found]


def _highlight(content: str, wanted: set[str], lexemes: dict[str, set[str]]) -> str:
    """HTML-escaped content with <b> around matching words; long texts are cut around the first match."""
    parts = HIGHLIGHT_WORD.split(content)  # odd indexes are words
    hits = [i for i in range(1, len(parts), 2) if lexemes.get(parts[i].lower(), set()) & wanted]
    start = 0
    if len(content) > HIGHLIGHT_CHARS and hits:
        before = len("".join(parts[:hits[0]]))
        start = max(0, before - HIGHLIGHT_CHARS // 4)
    out, position = [], 0
    for index, part in enumerate(parts):
        end = position + len(part)
        if end > start and position < start + HIGHLIGHT_CHARS:
            text = html.escape(part)
            out.append(f"<b>{text}</b>" if index in hits else text)
        position = end
    excerpt = "".join(out)
    prefix = "… " if start > 0 else ""
    suffix = " …" if len(content) > start + HIGHLIGHT_CHARS else ""
    return f"{prefix}{excerpt}{suffix}"
