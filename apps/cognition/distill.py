"""inject_context's text: the retrieved nodes written out within a token budget, raw or distilled.

Tokens are counted by one counter, the embedding model's tokenizer on whole texts
(apps/memories/embeddings.token_spans), and the finished text is counted again: it never exceeds max_tokens.
The tokenizer splits at whitespace and punctuation before it splits words, so the count of blocks joined by
whitespace is the sum of theirs, and a block is costed alone as it is built.

- raw: each node's content, best node first, as many as fit; the first that does not fit is cut between words.
- narrative, structured, code_focused: extractive, no language model. Each node's content is cut into sentences
  and code blocks; each is scored by its similarity to the query (its vector's cosine) and its node's retrieval
  score; the best are kept, in their node's order, until the distilled budget is spent. narrative writes a
  paragraph per node, structured a bullet per sentence, code_focused keeps every code block verbatim first (whole
  or not at all) and fills the rest with prose.
- auto: raw when the raw text is at most AUTO_RAW_TOKENS and fits max_tokens, else structured.
The distilled budget is DISTILLED_SHARE of the raw text's tokens (a small text, under the least max_tokens, is
kept whole and only reshaped), and never more than max_tokens. With verbosity >= 1 each passage carries its node's
citation tag; with 2, a line of insights about each node follows it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from apps.cognition.citations import citation_tag
from apps.cognition.limits import (
    AUTO_RAW_TOKENS, CONTEXT_TOKENS, DISTILL_SENTENCES, DISTILLED_SHARE, DistillationMode,
)
from apps.cognition.utl import cosine
from apps.memories.embeddings import clip_to_tokens, count_text_tokens, embed_for_ranking

# A passage's score: how close it is to the query, and how well its node ranked.
QUERY_WEIGHT, NODE_WEIGHT = 0.8, 0.2
NONE = "none"
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INDENTED = re.compile(r"(?:^(?: {4}|\t).*(?:\n|\Z))+", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


@dataclass(frozen=True)
class Source:
    """A retrieved node as the text shows it: its content, retrieval score, insight line (verbosity 2) and stored
    vector (which scores a one-sentence node without embedding it again)."""

    node_id: str
    content: str
    score: float
    insight: str = ""
    vector: object = None


@dataclass(frozen=True)
class Passage:
    source: int  # index of its Source
    order: int  # position in its node's content
    text: str
    code: bool
    score: float = 0.0


@dataclass
class Distilled:
    text: str
    tokens_used: int
    tokens_before: int
    applied: str  # "none" or the distilling mode

    @property
    def compression_ratio(self) -> float:
        """The share of the raw text's tokens that the answer saved (0 when it saved none)."""
        if not self.tokens_before:
            return 0.0
        return round(max(0.0, 1.0 - self.tokens_used / self.tokens_before), 4)


def distill(*, sources: list[Source], query_vector, max_tokens: int, mode: str, verbosity: int) -> Distilled:
    raw_blocks = [_raw_block(source, source.content, verbosity) for source in sources]
    raw_counts = count_text_tokens(raw_blocks)
    tokens_before = sum(raw_counts)
    if mode == DistillationMode.AUTO:
        fits = tokens_before <= min(AUTO_RAW_TOKENS, max_tokens)
        mode = DistillationMode.RAW if fits else DistillationMode.STRUCTURED
    if mode == DistillationMode.RAW:
        return _raw(sources, raw_blocks, raw_counts, max_tokens=max_tokens, verbosity=verbosity,
                    tokens_before=tokens_before)
    budget = min(max_tokens, max(math.ceil(DISTILLED_SHARE * tokens_before), min(tokens_before, CONTEXT_TOKENS.low)))
    passages = _scored(sources, _passages(sources), query_vector, code_first=mode == DistillationMode.CODE_FOCUSED)
    chosen = _choose(sources, passages, mode=mode, verbosity=verbosity, budget=budget)
    while True:  # the finished text is counted whole; should joining ever cost a token more, the weakest goes
        text = _join(sources, chosen, mode=mode, verbosity=verbosity)
        [used] = count_text_tokens([text])
        if used <= max_tokens or not chosen:
            break
        chosen.remove(min(chosen, key=lambda passage: passage.score))
    return Distilled(text=text, tokens_used=used, tokens_before=tokens_before, applied=str(mode))


# --- raw -------------------------------------------------------------------------------------------------------------

def _raw_block(source: Source, content: str, verbosity: int) -> str:
    block = f"{citation_tag(source.node_id)} {content}" if verbosity >= 1 else content
    return f"{block}\n{source.insight}" if verbosity >= 2 and source.insight else block


def _raw(sources, blocks, counts, *, max_tokens, verbosity, tokens_before) -> Distilled:
    kept: list[str] = []
    used = 0
    for index, (block, count) in enumerate(zip(blocks, counts)):
        if used + count <= max_tokens:
            kept.append(block)
            used += count
            continue
        # The first node that does not fit is cut between words to the tokens left, its tag and insight kept whole.
        source = sources[index]
        [overhead] = count_text_tokens([_raw_block(source, "", verbosity)])
        content = clip_to_tokens(source.content, max_tokens - used - overhead)
        if content:
            kept.append(_raw_block(source, content, verbosity))
        break
    while True:
        text = "\n\n".join(kept)
        [used] = count_text_tokens([text])
        if used <= max_tokens or not kept:
            break
        kept.pop()
    return Distilled(text=text, tokens_used=used, tokens_before=tokens_before, applied=NONE)


# --- distilled -------------------------------------------------------------------------------------------------------

def _passages(sources: list[Source]) -> list[Passage]:
    """Each node's content cut into code blocks (fenced or indented, whole) and sentences, in order."""
    passages = []
    for index, source in enumerate(sources):
        order = 0
        for text, code in _segments(source.content):
            passages.append(Passage(source=index, order=order, text=text, code=code))
            order += 1
    return passages


def _segments(content: str) -> list[tuple[str, bool]]:
    segments: list[tuple[str, bool]] = []
    position = 0
    blocks = sorted([*_FENCE.finditer(content), *_INDENTED.finditer(content)], key=lambda found: found.start())
    for block in blocks:
        if block.start() < position:  # an indented stretch inside a fenced block
            continue
        segments.extend((sentence, False) for sentence in _sentences(content[position:block.start()]))
        if block.group().strip():
            segments.append((block.group().rstrip("\n"), True))
        position = block.end()
    segments.extend((sentence, False) for sentence in _sentences(content[position:]))
    return segments


def _sentences(text: str) -> list[str]:
    return [_BULLET.sub("", part).strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def _scored(sources, passages, query_vector, *, code_first: bool) -> list[Passage]:
    """The passages, best first: similarity to the query (a node of one passage uses its stored vector; other
    passages are embedded, DISTILL_SENTENCES at most, from the best nodes) blended with the node's score.
    code_focused ranks every code block before any prose."""
    per_source: dict[int, int] = {}
    for passage in passages:
        per_source[passage.source] = per_source.get(passage.source, 0) + 1
    stored = {passage.source: sources[passage.source].vector for passage in passages
              if per_source[passage.source] == 1 and sources[passage.source].vector is not None}
    to_embed = [index for index, passage in enumerate(passages) if passage.source not in stored][:DISTILL_SENTENCES]
    # A sentence that recurs (across nodes, or within one) is embedded once.
    distinct = list(dict.fromkeys(passages[index].text for index in to_embed))
    by_text = dict(zip(distinct, embed_for_ranking(distinct)))
    vectors = {index: by_text[passages[index].text] for index in to_embed}
    scored = []
    for index, passage in enumerate(passages):
        vector = stored[passage.source] if passage.source in stored else vectors.get(index)
        similarity = max(0.0, cosine(vector, query_vector)) if vector is not None else 0.0
        score = QUERY_WEIGHT * similarity + NODE_WEIGHT * sources[passage.source].score
        scored.append(replace(passage, score=round(score, 6)))
    return sorted(scored, key=lambda passage: (code_first and passage.code, passage.score), reverse=True)


def _choose(sources, passages, *, mode, verbosity, budget) -> list[Passage]:
    """The best passages whose nodes' blocks, rebuilt with each, still fit the budget."""
    chosen: list[Passage] = []
    block_cost: dict[int, int] = {}
    used = 0
    for passage in passages:
        mine = sorted([p for p in chosen if p.source == passage.source] + [passage], key=lambda p: p.order)
        [cost] = count_text_tokens([_block(sources[passage.source], mine, mode=mode, verbosity=verbosity)])
        grown = used - block_cost.get(passage.source, 0) + cost
        if grown <= budget:
            chosen.append(passage)
            block_cost[passage.source] = cost
            used = grown
    prose = [passage for passage in passages if not passage.code]
    if not chosen and prose:  # every passage is longer than the budget: the best sentence, cut between words
        best = prose[0]
        [overhead] = count_text_tokens([_block(sources[best.source], [replace(best, text="")], mode=mode,
                                               verbosity=verbosity)])
        text = clip_to_tokens(best.text, budget - overhead)
        chosen = [replace(best, text=text)] if text else []
    return chosen


def _join(sources, chosen, *, mode, verbosity) -> str:
    by_source: dict[int, list[Passage]] = {}
    for passage in sorted(chosen, key=lambda passage: (passage.source, passage.order)):
        by_source.setdefault(passage.source, []).append(passage)
    return "\n\n".join(_block(sources[index], passages, mode=mode, verbosity=verbosity)
                       for index, passages in sorted(by_source.items()))


def _block(source: Source, passages: list[Passage], *, mode: str, verbosity: int) -> str:
    """One node's chosen passages, in its mode's shape."""
    tag = citation_tag(source.node_id) if verbosity >= 1 else ""
    lines: list[str] = []
    if mode == DistillationMode.STRUCTURED:
        for passage in passages:
            if passage.code:
                lines.extend([f"- {tag}".rstrip(), passage.text])
            else:
                lines.append(f"- {passage.text} {tag}".rstrip())
    else:  # narrative and code_focused: prose runs on as a paragraph; code stands on its own lines, verbatim
        prose: list[str] = []
        for passage in passages:
            if passage.code:
                if prose:
                    lines.append(" ".join(prose))
                    prose = []
                lines.append(passage.text)
            else:
                prose.append(passage.text)
        if prose:
            lines.append(" ".join(prose))
        if tag:
            lines = [tag, *lines] if mode == DistillationMode.CODE_FOCUSED else _tagged_last(lines, tag, passages)
    if verbosity >= 2 and source.insight:
        lines.append(source.insight)
    return "\n".join(lines)


def _tagged_last(lines: list[str], tag: str, passages: list[Passage]) -> list[str]:
    """A narrative paragraph ends with its tag; after a code block the tag takes a line of its own."""
    if passages[-1].code:
        return [*lines, tag]
    return [*lines[:-1], f"{lines[-1]} {tag}"]
