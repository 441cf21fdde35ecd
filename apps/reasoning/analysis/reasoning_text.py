"""How the analyses read plain English: words and their stems, sentences, phrases, and short renderings of text;
and for the lexicon detectors (bias.py, emotion.py), tokens, negation and intensity.

think, analyze_systematically, think_parallel and decompose_problem read a problem through the word helpers
(problem.py builds its profile from them), so that "failures" meets "failure" the same way in each.

Both lexicon detectors read a word as negated when a negator stands at most a few words before it in the same
clause ("not happy", "nobody anchored on", but not "I wasn't sure, but it's great"), and an intensifier or
dampener just before a word scales it ("very happy", "slightly worried").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

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


# The lexicon detectors' tokens. Emoticons first, so ":)" is one token rather than punctuation; then words with
# inner apostrophes or hyphens ("don't", "mind-blowing"), numbers, and the two marks that carry feeling.
_TOKEN = re.compile(r"[:;=][-']?[)(\]\[dDpP/|*]|<3|[A-Za-z]+(?:['\u2019-][A-Za-z]+)*|\d+(?:[.,]\d+)*%?|[!?]")

NEGATORS = frozenset({
    "not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "nowhere", "without", "hardly",
    "barely", "cannot", "avoid", "avoided", "avoiding", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt",
    "werent", "wont", "wouldnt", "cant", "couldnt", "shouldnt", "havent", "hasnt", "hadnt", "aint",
})

# Words that end a negation's reach: a new clause starts after them (or after "and" with a new subject).
_CLAUSE_BREAK = re.compile(r"[.,;:!?()\n\u2014]|\b(?:but|however|although|though|yet|whereas|while)\b|"
                           r"\band (?=(?:i|we|he|she|they|it|you)\b)", re.I)
_REACH = 120  # characters looked back for a negator: a few words, and never the whole text of a long input
# Negators that reach only the word right after them: "without consent is vile" is still vile.
_SHORT_REACH = frozenset({"without", "nothing", "avoid", "avoided", "avoiding"})
# "couldn't be prouder", "can't be any happier": the negation of a comparative says "as much as possible".
_COMPARATIVE_IDIOM = re.compile(r"^(?:any )?(?:more\b|\w+er\b)", re.I)

# From VADER's booster list (MIT, see lexicons/README.md), with the scale VADER gives them.
BOOSTERS = frozenset({
    "absolutely", "amazingly", "awfully", "completely", "considerably", "decidedly", "deeply", "enormously",
    "entirely", "especially", "exceptionally", "extremely", "fully", "greatly", "highly", "hugely", "incredibly",
    "intensely", "particularly", "really", "remarkably", "so", "substantially", "thoroughly", "totally",
    "tremendously", "truly", "unbelievably", "utterly", "very", "super", "insanely", "seriously", "honestly",
})
DAMPENERS = frozenset({
    "almost", "barely", "hardly", "kinda", "less", "little", "marginally", "mildly", "partly", "slightly",
    "somewhat", "sorta", "bit", "fairly", "rather",
})
BOOST = 0.293  # VADER's B_INCR on its -4..4 scale, i.e. about a 30% change of a typical word's weight.


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower().replace("\u2019", "'")

    @property
    def is_word(self) -> bool:
        return self.text[0].isalpha()

    @property
    def is_shouted(self) -> bool:
        """ALL CAPS for emphasis ("this is GREAT"), not an acronym of one or two letters."""
        return len(self.text) > 2 and self.text.isalpha() and self.text.isupper()


def tokenize(text: str) -> list[Token]:
    return [Token(match.group(), match.start(), match.end()) for match in _TOKEN.finditer(text)]


def is_negator(word: str) -> bool:
    word = word.lower().replace("\u2019", "'")
    return word in NEGATORS or word.endswith("n't") or word.replace("'", "") in NEGATORS


def is_negated(text: str, start: int, *, window: int = 3) -> bool:
    """Whether a negator stands among the ``window`` words before ``start`` within the same clause."""
    before = text[max(0, start - _REACH):start]
    breaks = list(_CLAUSE_BREAK.finditer(before))
    clause = before[breaks[-1].end():] if breaks else before
    words = [token.text for token in tokenize(clause) if token.is_word][-window:]
    for distance, word in enumerate(reversed(words), start=1):
        if not is_negator(word) or (distance > 1 and word.lower() in _SHORT_REACH):
            continue
        between = [item.lower() for item in words[len(words) - distance + 1:]]
        if between and between[-1] in {"be", "been"} and _COMPARATIVE_IDIOM.match(text[start:]):
            continue
        return True
    return False


def intensity(tokens: list[Token], index: int) -> float:
    """The scale the one or two words before ``tokens[index]`` give it: >1 boosted, <1 dampened, 1 plain."""
    scale = 1.0
    for distance, token in enumerate(reversed(tokens[max(0, index - 2):index]), start=1):
        word = token.lower
        step = BOOST if distance == 1 else BOOST * 0.5
        if word in BOOSTERS:
            scale += step
        elif word in DAMPENERS:
            scale -= step
    return max(scale, 0.2)


def word_forms(word: str) -> tuple[str, ...]:
    """The word and the plain forms a small lexicon is likely to list it under ("worried" -> "worry")."""
    forms = [word]
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"),
                                ("ing", ""), ("ing", "e"), ("ly", ""), ("ness", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            forms.append(word[: -len(suffix)] + replacement)
    return tuple(forms)
