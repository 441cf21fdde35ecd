"""Small, deterministic text analysis used when storing memories (no model, no network)."""
from __future__ import annotations

import re
from collections import Counter

WORD = re.compile(r"[A-Za-z][A-Za-z0-9'_-]*")

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

# Causal cue phrases: a new memory whose text has one links to its neighbours as "causal".
CAUSAL_CUES = ("because", "therefore", "caused", "causes", "due to", "leads to", "led to", "results in",
               "resulted in", "so that", "as a result", "consequently", "hence")

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


def has_causal_cue(text: str) -> bool:
    lowered = f" {text.lower()} "
    return any(f" {cue} " in lowered or f" {cue}," in lowered for cue in CAUSAL_CUES)


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
