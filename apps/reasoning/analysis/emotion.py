"""Emotion from word lexicons: the circumplex (valence, arousal, dominance) and the seed's eleven discrete emotions.

Valence comes from VADER's lexicon (MIT); arousal and dominance from a lexicon of a few hundred words whose
values the Engram authors assigned; the discrete emotions from cue lists per emotion plus the circumplex
position (lexicons/README.md names each source and licence). Negation ("not happy") flips and damps a word,
an intensifier ("very") or shouting ("GREAT") scales it, "!" raises arousal and pushes valence further.

A text with no emotional cue reads as valence ~0, low arousal and ``primary`` None with few or no discrete
emotions: the seed lists only the eleven, so "no emotion" is the absence of a primary, not a twelfth name.
Confidence follows coverage: how many words carried affect, and (for the discrete reading) how clearly the
first emotion leads the second. docs/benchmarks.md ("Reasoning detectors") has its measured precision and
recall on tests/data/emotion_labelled.jsonl.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from apps.reasoning.analysis.reasoning_text import (
    BOOSTERS,
    DAMPENERS,
    Token,
    intensity,
    is_negated,
    tokenize,
    word_forms,
)

METHOD = "lexicon"
EMOTIONS: tuple[str, ...] = ("joy", "sadness", "anger", "fear", "disgust", "surprise", "pride", "shame", "guilt",
                             "gratitude", "awe")
_POSITIVE = frozenset({"joy", "pride", "gratitude", "awe"})
_NEUTRAL_VALENCE = frozenset({"surprise"})

# Where each emotion sits in the circumplex: (valence -1..1, arousal 0..1, dominance -1..1), after Russell's and
# Mehrabian's placements of these terms.
_PROTOTYPES: dict[str, tuple[float, float, float]] = {
    "joy": (0.8, 0.65, 0.4), "sadness": (-0.7, 0.2, -0.45), "anger": (-0.7, 0.85, 0.45),
    "fear": (-0.7, 0.8, -0.6), "disgust": (-0.65, 0.55, 0.2), "surprise": (0.1, 0.85, -0.15),
    "pride": (0.7, 0.55, 0.7), "shame": (-0.6, 0.45, -0.7), "guilt": (-0.5, 0.4, -0.45),
    "gratitude": (0.7, 0.35, -0.05), "awe": (0.6, 0.7, -0.45),
}

# Lexicon words whose everyday use in engineering text is not affective ("kind of", "a clean build", "please
# review", "the error rate", "a high value", "commit the change"): counting them would give neutral work talk a
# tone it does not have. The discrete cues still catch their affective uses ("what a mess", "afraid of the risk").
_NOT_AFFECTIVE = frozenset({
    "like", "kind", "please", "no", "yes", "support", "supports", "supported", "clean", "free", "pretty", "sure",
    "well", "fine", "share", "shared", "save", "saved", "help", "care", "cut", "cuts", "block", "blocked",
    "critical", "fix", "fixed", "ok", "okay", "true", "false", "kill", "killed", "dead", "join", "joined",
    "error", "errors", "problem", "problems", "issue", "issues", "risk", "risks", "number", "value", "values",
    "create", "creates", "created", "commit", "commits", "committed", "isolation", "active", "low", "high",
    "negative", "positive", "missing", "likely", "matter", "matters", "security", "secure", "safe", "safety",
    "master", "fresh", "force", "forced", "stable", "intelligent", "smart", "drop", "drops", "dropped",
})
# A cue of a discrete emotion also moves valence, by the emotion's own valence: "vile" or "on edge" are negative
# even where VADER's lexicon has no entry for them.
CUE_VALENCE = 0.5
NEGATION_SCALE = -0.74  # VADER's N_SCALAR: "not good" is milder than "bad".
_VADER_ALPHA = 15 / 16  # VADER's normalisation constant, rescaled from its -4..4 range to ours of -1..1.
BANG = 0.292 / 4  # VADER's emphasis per "!" (at most four), on our scale.
RESTING_AROUSAL = 0.1  # a text with no affect at all
PRIMARY_THRESHOLD = 0.3
LISTED_THRESHOLD = 0.15
HIGH, MODERATE = 0.7, 0.4
NEUTRAL_BAND = 0.15  # |valence| below this reads as neutral tone
_LEXICONS = Path(__file__).resolve().parent / "lexicons"


def intensity_label(score: float) -> str:
    """high / moderate / low: a discrete emotion's score in words, for the lexicon's and a model's scores alike."""
    return "high" if score >= HIGH else "moderate" if score >= MODERATE else "low"


@dataclass(frozen=True)
class EmotionScore:
    emotion: str
    score: float

    @property
    def intensity(self) -> str:
        return intensity_label(self.score)

    def as_dict(self) -> dict:
        return {"emotion": self.emotion, "score": round(self.score, 2), "intensity": self.intensity}


@dataclass(frozen=True)
class EmotionReading:
    valence: float
    arousal: float
    dominance: float
    confidence: float
    primary: str | None
    emotions: tuple[EmotionScore, ...]
    discrete_confidence: float
    cues: tuple[str, ...]  # the words and phrases of the text that carried the reading
    include_discrete: bool = True

    @property
    def polarity(self) -> str:
        """positive / negative / neutral, as tests/data/emotion_labelled.jsonl labels valence."""
        return ("positive" if self.valence >= NEUTRAL_BAND else "negative" if self.valence <= -NEUTRAL_BAND
                else "neutral")

    def as_dict(self) -> dict:
        reading = {
            "circumplex": {"valence": round(self.valence, 2), "arousal": round(self.arousal, 2),
                           "dominance": round(self.dominance, 2), "confidence": round(self.confidence, 2)},
            "method": METHOD,
            "cues": list(self.cues),
        }
        if self.include_discrete:
            reading["discrete"] = {"primary": self.primary, "emotions": [item.as_dict() for item in self.emotions],
                                   "confidence": round(self.discrete_confidence, 2)}
        return reading


@dataclass(frozen=True)
class _Cue:
    emotion: str
    weight: float
    pattern: re.Pattern
    phrase: str  # as listed, lower case; a stem ends in *


@cache
def _valence_lexicon() -> dict[str, float]:
    """VADER's mean ratings, rescaled from -4..4 to -1..1."""
    lexicon = {}
    for line in (_LEXICONS / "vader_lexicon.tsv").read_text(encoding="utf-8").splitlines():
        word, _, rating = line.partition("\t")
        if rating:
            lexicon[word] = float(rating) / 4
    return lexicon


@cache
def _arousal_dominance() -> dict[str, tuple[float, float]]:
    lexicon = {}
    for line in (_LEXICONS / "arousal_dominance.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, arousal, dominance = line.split("\t")
            lexicon[word] = (float(arousal), float(dominance))
    return lexicon


@cache
def _cues() -> tuple[_Cue, ...]:
    cues = []
    for line in (_LEXICONS / "emotion_cues.tsv").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        emotion, weight, phrases = line.split("\t")
        for phrase in phrases.split("|"):
            cues.append(_Cue(emotion, float(weight), _cue_pattern(phrase), phrase.lower()))
    return tuple(sorted(cues, key=lambda cue: -len(cue.pattern.pattern)))  # see _any_cue


def _cue_pattern(phrase: str) -> re.Pattern:
    """A cue as a regex: whole words, a trailing * for any ending, and no word boundary next to punctuation
    (":)", "?!")."""
    stem = phrase.endswith("*")
    body = re.escape(phrase.rstrip("*")).replace(r"\ ", r"\s+")
    head = r"\b" if phrase[0].isalnum() else ""
    tail = r"[\w'-]*" if stem else (r"\b" if phrase[-1].isalnum() else "")
    return re.compile(head + body + tail, re.I)


def _lookup(table: dict, word: str):
    for form in word_forms(word):
        if form in table:
            return table[form]
    return None


@dataclass
class _Word:
    token: Token
    valence: float
    arousal: float
    dominance: float


def _affective_words(text: str, tokens: list[Token]) -> list[_Word]:
    valences, arousal_dominance = _valence_lexicon(), _arousal_dominance()
    words = []
    for index, token in enumerate(tokens):
        word = token.lower
        if word in _NOT_AFFECTIVE or word in BOOSTERS or word in DAMPENERS or token.text in "!?":
            continue
        valence = valences.get(word)
        if valence is None and token.is_word:
            valence = _lookup(valences, word)
        placed = _lookup(arousal_dominance, word) if token.is_word else None
        if valence is None and placed is None:
            continue
        valence = valence or 0.0
        # A word only the arousal/dominance lexicon knows still leans the way its dominance does, a little.
        arousal, dominance = placed or (0.3 + 0.35 * abs(valence), 0.25 * valence)
        scale = intensity(tokens, index) * (1.3 if token.is_shouted else 1.0)
        valence, arousal = valence * scale, min(1.0, arousal * (1 + (scale - 1) * 0.8))
        if is_negated(text, token.start):
            valence, arousal, dominance = valence * NEGATION_SCALE, arousal * 0.85, dominance * -0.5
        words.append(_Word(token, valence, arousal, dominance))
    _weigh_contrast(tokens, words)
    return words


def _weigh_contrast(tokens: list[Token], words: list[_Word]) -> None:
    """VADER's "but" rule: what follows "but" is what the writer means (x1.5), what precedes it less (x0.5)."""
    pivots = [token.start for token in tokens if token.lower == "but"]
    if not pivots:
        return
    pivot = pivots[-1]
    for word in words:
        word.valence *= 0.5 if word.token.start < pivot else 1.5


def _circumplex(text: str, tokens: list[Token], words: list[_Word]) -> tuple[float, float, float, float, float]:
    """(valence, arousal, dominance, confidence, strength): strength is how much affect the text carries, 0..1."""
    exclamations = min(text.count("!"), 4)
    total = sum(word.valence for word in words)
    if total:
        total += math.copysign(exclamations * BANG, total)
    valence = total / math.sqrt(total * total + _VADER_ALPHA)
    strength = 1 - math.exp(-len(words) / 1.5)
    shouted = sum(1 for word in words if word.token.is_shouted)
    if words:
        mean_arousal = sum(word.arousal for word in words) / len(words)
        mean_dominance = sum(word.dominance for word in words) / len(words)
    else:
        mean_arousal, mean_dominance = RESTING_AROUSAL, 0.0
    arousal = RESTING_AROUSAL + (mean_arousal - RESTING_AROUSAL) * strength + 0.06 * exclamations + 0.05 * shouted
    dominance = mean_dominance * strength
    content_words = sum(1 for token in tokens if token.is_word) or 1
    coverage = min(1.0, 3 * len({word.token.start for word in words}) / content_words)
    confidence = min(0.95, 0.3 + 0.4 * strength + 0.25 * coverage)
    return valence, min(arousal, 1.0), max(-1.0, min(dominance, 1.0)), confidence, strength


@dataclass(frozen=True)
class _CueHit:
    token: Token  # the cue as it stands in the text
    emotion: str  # the emotion it counts for (sadness for a negated positive cue)
    weight: float


@cache
def _cues_by_phrase() -> tuple[dict[str, tuple[_Cue, ...]], tuple[_Cue, ...]]:
    """The literal cues by their text, and the stems (which only a regex can test)."""
    literal: dict[str, list[_Cue]] = {}
    for cue in _cues():
        if not cue.phrase.endswith("*"):
            literal.setdefault(cue.phrase, []).append(cue)
    return ({phrase: tuple(cues) for phrase, cues in literal.items()},
            tuple(cue for cue in _cues() if cue.phrase.endswith("*")))


def _cues_matching(phrase: str) -> list[_Cue]:
    literal, stems = _cues_by_phrase()
    found = list(literal.get(" ".join(phrase.lower().split()), ()))
    return found + [cue for cue in stems if cue.pattern.fullmatch(phrase)]


@cache
def _any_cue() -> re.Pattern:
    """All cues in one alternation, longest first: scanning left to right, each stretch of text is claimed by
    the longest cue that starts there ("thank you" before "thank", "in awe" before "awe")."""
    return re.compile("|".join(f"(?:{cue.pattern.pattern})" for cue in _cues()), re.I)


def _cue_hits(text: str, tokens: list[Token]) -> list[_CueHit]:
    """The emotion cues of ``text`` (a phrase listed for two emotions counts for both). A negated positive cue
    ("not happy") counts towards sadness; a negated negative one ("no risk", "not worried") counts for nothing."""
    starts = {token.start: index for index, token in enumerate(tokens)}
    hits: list[_CueHit] = []
    for match in _any_cue().finditer(text):
        start, phrase = match.start(), match.group()
        index = starts.get(start)
        scale = intensity(tokens, index) if index is not None else 1.0
        token = Token(phrase, start, match.end())
        negated = is_negated(text, start)
        for cue in _cues_matching(phrase):
            if not negated:
                hits.append(_CueHit(token, cue.emotion, cue.weight * scale))
            elif cue.emotion in _POSITIVE:
                hits.append(_CueHit(token, "sadness", 0.6 * cue.weight * scale))
    return hits


def _cue_words(hits: list[_CueHit]) -> list[_Word]:
    """The cues as affective words placed at their emotion's prototype (see CUE_VALENCE)."""
    words = []
    for hit in hits:
        valence, arousal, dominance = _PROTOTYPES[hit.emotion]
        words.append(_Word(hit.token, valence * hit.weight * CUE_VALENCE, arousal, dominance))
    return words


def _evidence(hits: list[_CueHit]) -> dict[str, float]:
    evidence = dict.fromkeys(EMOTIONS, 0.0)
    for hit in hits:
        evidence[hit.emotion] += hit.weight
    return evidence


def _prototype_similarity(emotion: str, valence: float, arousal: float, dominance: float) -> float:
    target_valence, target_arousal, target_dominance = _PROTOTYPES[emotion]
    distance = math.sqrt((valence - target_valence) ** 2 + (2 * (arousal - target_arousal)) ** 2 * 0.5
                         + 0.5 * (dominance - target_dominance) ** 2)
    return max(0.0, 1 - distance / 1.6)


def detect_emotion(text: str, *, include_discrete: bool = True, context: str = "") -> EmotionReading:
    """Read ``text``'s emotion. ``context`` (e.g. "incident review") only nudges the discrete reading: its cues
    count a fifth of the text's, and it never moves the circumplex, which describes the text itself."""
    tokens = tokenize(text)
    hits = _cue_hits(text, tokens)
    words = _affective_words(text, tokens) + _cue_words(hits)
    valence, arousal, dominance, confidence, strength = _circumplex(text, tokens, words)
    evidence = _evidence(hits)
    if context:
        for emotion, weight in _evidence(_cue_hits(context, tokenize(context))).items():
            evidence[emotion] += 0.2 * weight
    scores = []
    for emotion in EMOTIONS:
        from_cues = 1 - math.exp(-1.2 * evidence[emotion])
        from_position = _prototype_similarity(emotion, valence, arousal, dominance) * 0.35 * strength
        if emotion not in _NEUTRAL_VALENCE and (emotion in _POSITIVE) != (valence > 0) and abs(valence) > 0.3:
            from_position = 0.0  # the circumplex never argues for an emotion of the opposite sign
        scores.append(EmotionScore(emotion, min(1.0, 0.8 * from_cues + from_position)))
    scores.sort(key=lambda item: -item.score)
    top, second = scores[0].score, scores[1].score
    primary = scores[0].emotion if top >= PRIMARY_THRESHOLD else None
    if primary:
        discrete_confidence = min(0.95, top * (0.6 + 0.4 * (top - second) / top))
    else:
        discrete_confidence = 0.8 * (1 - top)  # how sure we are there is no emotion worth naming
    cues = tuple(dict.fromkeys(word.token.text for word in sorted(words, key=lambda item: item.token.start)))
    return EmotionReading(
        valence=valence, arousal=arousal, dominance=dominance, confidence=confidence, primary=primary,
        emotions=tuple(item for item in scores[:5] if item.score >= LISTED_THRESHOLD),
        discrete_confidence=discrete_confidence, cues=cues, include_discrete=include_discrete,
    )
