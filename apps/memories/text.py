"""Small, deterministic text analysis used when storing memories (no model, no network)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

# Letters of any script start a word ("Tomás", "Zürich", "東京" stay whole); digits, apostrophes, _ and - continue it.
WORD = re.compile(r"[^\W\d_][\w'-]*")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    also get got like really one two us let lets i'm it's that's don't didn't can't won't i've you're we're
    them they're isn't wasn't yeah yes oh ok okay""".split()
)

# Words that mark a memory as urgent or important (ThoughtMCP: +0.1 salience each).
URGENCY_WORDS = frozenset(
    "important urgent critical crucial essential vital must never always deadline asap emergency key priority "
    "remember warning danger required blocker blocking".split()
)

# Causal claims: a clause that names a cause and one that names its effect, and the phrase that joins them
# (causal_claims). Which side is the cause depends on the phrase: "E because C", "C leads to E".
_EFFECT_FIRST = re.compile(  # "E because C", "E, due to C", "E was caused by C"
    r"(?P<effect>.+?)[,;]?\s+(?P<cue>because of|because|due to|owing to|as a result of|as a consequence of"
    r"|(?:(?:was|were|is|are|has been|have been|had been|got)\s+)?caused by)\s+(?P<cause>.+)", re.IGNORECASE)
_CAUSE_LEADS = re.compile(  # "C leads to E", "C caused E"
    r"(?P<cause>.+?)\s+(?P<cue>leads to|led to|lead to|leading to|results in|resulted in|result in|causes|caused)"
    r"\s+(?P<effect>.+)", re.IGNORECASE)
_CAUSE_SO = re.compile(  # "C, so E", "C; therefore E", "C so that E"
    r"(?P<cause>.+?)(?:\s+(?P<purpose>so that)|\s*[,;]\s*(?P<cue>so|therefore|hence|thus|consequently)\b"
    r"|\s+(?P<cue2>therefore|hence|consequently)\b),?\s+(?P<effect>.+)", re.IGNORECASE)
_LEADING_CAUSE = re.compile(  # "Because C, E"
    r"^(?P<cue>because of|because|due to|owing to|as a result of)\s+(?P<cause>[^,]+),\s*(?P<effect>.+)",
    re.IGNORECASE)
_FOLLOWS = re.compile(  # "... C. As a result, E": the cause is the sentence before
    r"^(?P<cue>as a result|therefore|consequently|hence|thus|so|because of (?:this|that))\s*,?\s+(?P<effect>.+)",
    re.IGNORECASE)
_IN_ONE_SENTENCE = (_LEADING_CAUSE, _EFFECT_FIRST, _CAUSE_LEADS, _CAUSE_SO)  # the first that matches
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
# A side of a claim needs this many words to name something.
CLAIM_MIN_WORDS = 2


# A small valence/arousal lexicon for the emotional sector text; reported as lexicon-based.
POSITIVE = frozenset("love loved happy glad great good excellent wonderful excited joy enjoy enjoyed proud "
                     "grateful thanks thank fantastic amazing awesome pleased delighted relieved calm fun".split())
NEGATIVE = frozenset("hate hated sad angry upset bad terrible awful afraid scared worried anxious frustrated "
                     "annoyed disappointed hurt lonely stressed fear pain broken failed failure stuck".split())
AROUSING = frozenset("excited angry furious thrilled panic scared terrified urgent amazing shocked love hate "
                     "stressed anxious ecstatic".split())


def words(text: str) -> list[str]:
    return [w.lower().strip("'-_") for w in WORD.findall(text)]


def extract_keywords(text: str, *, limit: int = 8) -> list[str]:
    """The most frequent content words, longest first on ties: cheap and stable."""
    counts = Counter(w for w in words(text) if w not in STOPWORDS and len(w) > 2)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], -len(item[0]), item[0]))
    return [word for word, _ in ranked[:limit]]


def urgency_salience(text: str) -> float:
    hits = sum(1 for w in words(text) if w in URGENCY_WORDS)
    return min(1.0, 0.5 + 0.1 * hits)


@dataclass(frozen=True)
class CausalClaim:
    """A sentence's claim that `cause` brings about `effect` (both clauses of the text), joined by `cue`."""

    cause: str
    effect: str
    cue: str


def causal_claims(text: str) -> list[CausalClaim]:
    """The causal claims of a text, by the phrase that joins two clauses: "E because C", "because C, E", "C leads
    to E", "C, so E", "C so that E", and a sentence opening "As a result, E" after C. No model: the direction comes
    from the phrase, never from which memory was stored last."""
    claims, previous = [], ""
    for sentence in (part.strip() for part in _SENTENCES.split(text) if part.strip()):
        claim = _claim_of(sentence, previous)
        if claim is not None:
            claims.append(claim)
        previous = sentence
    return claims


def _claim_of(sentence: str, previous: str) -> CausalClaim | None:
    if (match := _FOLLOWS.match(sentence)) and previous:
        found = (previous, match["effect"], match["cue"])
    else:
        match = next((found for pattern in _IN_ONE_SENTENCE if (found := pattern.match(sentence))), None)
        if match is None:
            return None
        groups = match.groupdict()
        found = (groups["cause"], groups["effect"], groups.get("purpose") or groups.get("cue") or groups["cue2"])
    cause, effect, cue = (_clause(part) for part in found)
    if min(len(words(cause)), len(words(effect))) < CLAIM_MIN_WORDS:
        return None
    return CausalClaim(cause=cause, effect=effect, cue=cue.lower())


def _clause(text: str) -> str:
    return text.strip().strip(" ,;:.!?\"'").strip()


def valence_arousal(text: str) -> tuple[float, float]:
    tokens = words(text)
    if not tokens:
        return 0.0, 0.0
    positive = sum(1 for w in tokens if w in POSITIVE)
    negative = sum(1 for w in tokens if w in NEGATIVE)
    arousing = sum(1 for w in tokens if w in AROUSING) + text.count("!")
    total = positive + negative
    valence = (positive - negative) / total if total else 0.0
    arousal = min(1.0, arousing / 3) * 2 - 1 if arousing else -0.5
    return valence, arousal
