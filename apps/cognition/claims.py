"""Causal claims in a sentence, read from its clauses (no model): which side is the cause and which the effect.

The cue word decides the direction, never its position alone: "A because B", "A due to B", "A is caused by B",
"A results from B" claim B -> A; "A causes B", "A leads to B", "A results in B", "A triggers B", "A, so B",
"A therefore B" claim A -> B; a sentence that opens with "Because B, A" claims B -> A. A side keeps its words as
written (they are resolved to nodes by meaning elsewhere); a side without a content word is no claim.
Honest gap: one claim per clause, no coreference ("it", "this"), no negated causation ("A does not cause B" is read
as A -> B; the negation checks of conflicts.py see the "not").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from apps.cognition.conflicts import content_words

# effect <cue> cause
_BACKWARD = (r"because\s+of", r"because", r"due\s+to", r"owing\s+to", r"as\s+a\s+result\s+of", r"thanks\s+to",
             r"(?:(?:is|are|was|were)\s+)?caused\s+by", r"results?\s+from", r"resulted\s+from", r"stems?\s+from",
             r"stemmed\s+from")
# cause <cue> effect (a bare "cause" is left out: "the root cause is X" is no claim)
_FORWARD = (r"causes", r"caused", r"leads\s+to", r"led\s+to", r"lead\s+to", r"results?\s+in", r"resulted\s+in",
            r"triggers", r"triggered", r"produces", r"produced", r"brings\s+about", r"brought\s+about", r"therefore",
            r"hence", r"thus")
_CUE = re.compile(r"(?P<backward>\b(?:%s)\b)|(?P<forward>\b(?:%s)\b|,\s*so(?:\s+that)?\b)"
                  % ("|".join(_BACKWARD), "|".join(_FORWARD)), re.IGNORECASE)
_OPENING_BECAUSE = re.compile(r"^\s*(?:because|since)\s+(?P<cause>[^,]+),\s*(?P<effect>.+)$", re.IGNORECASE)
_EDGE_PUNCTUATION = " \t\n,;:.!?\"'()[]"
# Joining words at a side's edges ("flooding, which causes ..."): not part of what the side names.
_EDGE_WORDS = re.compile(r"^(?:(?:and|then|which|that|this|it)\b[\s,]*)+|(?:[\s,]+(?:and|then|which|that))+$",
                         re.IGNORECASE)
# A side of a claim is cut to this many characters (a long clause still names its topic in its first words).
SIDE_CHARS = 300


@dataclass(frozen=True)
class CausalClaim:
    cause: str
    effect: str
    cue: str


def _side(text: str) -> str | None:
    text = _EDGE_WORDS.sub("", text.strip(_EDGE_PUNCTUATION)).strip(_EDGE_PUNCTUATION)[:SIDE_CHARS]
    return text if content_words(text) else None


def causal_claims(sentence: str) -> list[CausalClaim]:
    """The causal claim of each clause of ``sentence`` (at most one per cue), cause and effect as written."""
    opening = _OPENING_BECAUSE.match(sentence)
    if opening:
        cause, effect = _side(opening["cause"]), _side(opening["effect"])
        return [CausalClaim(cause, effect, "because")] if cause and effect else []
    claims = []
    cues = list(_CUE.finditer(sentence))
    for index, cue in enumerate(cues):
        start = cues[index - 1].end() if index else 0
        end = cues[index + 1].start() if index + 1 < len(cues) else len(sentence)
        before, after = _side(sentence[start:cue.start()]), _side(sentence[cue.end():end])
        if not before or not after:
            continue
        word = " ".join(cue.group().strip(" ,").split()).lower()
        claims.append(CausalClaim(after, before, word) if cue["backward"] else CausalClaim(before, after, word))
    return claims


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """``text`` cut at sentence ends and line breaks, blank pieces left out."""
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]
