"""Cognitive biases in a piece of reasoning, found by phrase patterns and keyword indicators per bias type.

Each of the seed's eight types has indicators of three strengths: a strong one is the bias nearly spelled out
("we've already invested two years, switching would waste it"), a medium one is half of it (a first estimate
that is mentioned; a trait word about a person), a weak one only leans that way. A type is reported when its
indicators add up to a strong one's weight. Indicators inside a negation ("nobody anchored on the first
number") do not count, and counter-patterns -- the reasoning already guarding against the bias ("despite the
time already spent", "the base rate") -- cancel a strong indicator's weight.

Confidence follows REFERENCE.md: a base of 0.65-0.75 per type, +0.03 per extra indicator, capped at 0.95
(+0.05 when the caller's context is one where the bias is common). Severity
grows with the indicators' strength and count, and with absolute language around them ("obviously", "never").
Evidence quotes the text's own words and says what they suggest; the correction is a concrete strategy.
docs/benchmarks.md ("Reasoning detectors") has the measured precision and recall on
tests/data/bias_labelled.jsonl.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.reasoning.analysis.reasoning_text import is_negated

STRONG, MEDIUM, WEAK = 1.0, 0.6, 0.35
THRESHOLD = 0.9  # a strong indicator alone, or a medium and a weak one together
CONFIDENCE_STEP, CONFIDENCE_CAP = 0.03, 0.95
# Enough to saturate confidence and severity; more would only lengthen the evidence (and the scan of a long text).
MATCHES_PER_INDICATOR = 3

BIAS_TYPES: dict[str, str] = {
    "confirmation": "Favoring information that confirms existing beliefs",
    "anchoring": "Over-relying on first piece of information",
    "availability": "Overweighting easily recalled information",
    "recency": "Giving more weight to recent events",
    "representativeness": "Judging probability by similarity to stereotypes",
    "framing": "Being influenced by how information is presented",
    "sunk_cost": "Continuing due to past investment",
    "attribution": "Attributing behavior to character vs situation",
}

_ABSOLUTE = re.compile(r"\b(?:always|never|obviously|clearly|surely|definitely|certainly|must|no need|no matter what|"
                       r"plain and simple|for good|all the time|every|everyone|nothing to)\b", re.I)

# Phrase pieces shared by several types.
_CONCLUDE = (r"(?:so|therefore|thus|hence|which (?:means|shows|proves|tells me)|shows?|means|proves|"
             r"(?:we|i) should assume)")
_SWEEPING = (r"(?:whole|entire|all year|for good|permanent\w*|rest of the (?:year|quarter)|must|clearly|"
             r"fundamentally|for the year|through|outweighs?|deserves?|only one that matters|alone|can (?:stop|drop)|"
             r"top priority|solved|always|never|can (?:\w+ )?(?:stop|drop)|no longer|is over|overblown|"
             r"the (?:entire|whole) next)")
_GENERAL = (r"(?:must|usually|basically never|always|all the time|most likely|the common|biggest|main|"
            r"most \w+ (?:are|is)|more (?:dangerous|risky|likely)|weakest|for anything|probably|in general|definitely|"
            r"i'?m convinced|several times a|happens? (?:all the time|often|constantly)|how we'?ll)")
_TRAIT = (r"(?:careless|lazy|incompetent|sloppy|stupid|dumb|unreliable|dishonest|mediocre|indecisive|clueless|"
          r"arrogant|selfish|useless|hopeless|negligent|bad (?:engineers?|developers?|people|at (?:their|his|her) job)|"
          r"not (?:a )?real (?:engineers?|developers?)|not cut out for|(?:don'?t|doesn'?t) (?:care|take)\b|"
          r"disorgani[sz]ed|cowboys?|not (?:very )?(?:technical|smart|bright|competent)(?: people)?|amateurs?|clowns|"
          r"idiots|unprofessional|irresponsible|(?:don'?t|doesn'?t) (?:bother|follow process)|can'?t be bothered|"
          r"cheap|greedy|stingy|entitled|whiny)")
_PERSON = (r"(?:he|she|they|him|her|them|\w+|the (?:\w+ )?(?:team|intern|engineer|developer|vendor|users?|"
           r"customers?|contractors?|people|manager|designer|PM|QA))")


@dataclass(frozen=True)
class _Indicator:
    pattern: re.Pattern
    strength: float
    suggests: str


@dataclass(frozen=True)
class _Rule:
    type: str
    base_confidence: float
    indicators: tuple[_Indicator, ...]
    counters: tuple[re.Pattern, ...]  # the reasoning already guards against the bias
    context_hint: re.Pattern  # a context where this bias is common
    correction: str


def _indicator(pattern: str, strength: float, suggests: str) -> _Indicator:
    return _Indicator(re.compile(pattern, re.I), strength, suggests)


def _patterns(*patterns: str) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(pattern, re.I) for pattern in patterns)


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "confirmation", 0.75,
        (
            _indicator(r"\b(?:all|every|everything|each)\b[^.;]{0,40}?\b(?:supports?|confirms?|backs? up|proves?|"
                       r"validates?|agrees? with)\b", STRONG, "every piece of evidence is read as support"),
            _indicator(r"\b(?:confirms?|proves?|validates?|vindicates?|backs? up|settles it)\b[^.;]{0,40}?"
                       r"(?:what (?:i|we)(?:'ve| have)? (?:been )?(?:suspected|thought|expected|believed|said|saying|"
                       r"predicted|knew)|\b(?:my|our) (?:hypothesis|belief|theory|view|assumption|intuition|point)|"
                       r"(?:i|we) (?:was|were) right)", STRONG, "the conclusion was held before the evidence"),
            _indicator(r"\b(?:just |exactly )?as (?:i|we) (?:thought|expected|predicted|suspected)\b|\bas expected\b|"
                       r"\bsure enough\b|\b(?:all )?along\b(?=[^.;]{0,30}\b(?:suspected|thought|knew|said))",
                       MEDIUM, "the result is framed as the expected one"),
            _indicator(r"\b(?:ignore|ignored|dismiss\w*|discard\w*|disregard\w*|left (?:them )?out|leave out|"
                       r"skipp?\w*|throw out|exclud\w*|not (?:going to )?bother with)\b[^.;]{0,40}?"
                       r"(?:outliers?|(?:that|which) (?:don'?t|doesn'?t|didn'?t|did not) (?:fit|agree|match)|"
                       r"contradict\w*|disagree\w*|counter-?arguments?|counter-?evidence|objections?)",
                       STRONG, "contradicting evidence is set aside"),
            _indicator(r"\b(?:contradict\w*|disagree\w*|objected|(?:don'?t|doesn'?t) fit)\b[^.;]{0,50}?"
                       r"\b(?:noise|error|fluke|wrong|didn'?t read|don'?t understand|misunderstood|careless(?:ly)?)\b",
                       STRONG, "disagreement is explained away instead of weighed"),
            _indicator(r"\b(?:looking|looked|searched|search(?:ing)?|went looking|hunting)\b(?: \w+){0,3} for "
                       r"(?:\w+ ){0,2}(?:evidence|proof|data|benchmarks?|examples?|signs?)\b(?: \w+){0,2}? "
                       r"(?:that|showing|supporting|proving|to support|confirming)", STRONG,
                       "the search looked for support, not for a test"),
            _indicator(r"\b(?:i|we) (?:already )?know\b[^.;]{0,40}?\b(?:is|are|was) (?:the|right|wrong|correct)\b",
                       MEDIUM, "the answer is treated as known before checking"),
            _indicator(r"\b(?:feedback|data|evidence|results?|opinions?|tickets?)\b (?:that|which) "
                       r"(?:matches|match|fits?|agrees? with|supports?|confirms?)\b", STRONG,
                       "only the matching evidence is kept"),
            _indicator(r"\bmust be (?:a )?(?:measurement error|noise|a fluke|an outlier|wrong)\b", STRONG,
                       "a disagreeing result is assumed to be an error"),
            _indicator(r"\bonly (?:pulled|looked at|read|kept|counted|listened to)\b", MEDIUM,
                       "the evidence was filtered before it was read"),
            _indicator(r"\b(?:no need to|didn'?t) (?:look at|check|consider|verify|examine)\b", WEAK,
                       "a check that could disconfirm was skipped"),
            _indicator(r"\b(?:my|our) (?:gut(?: feeling)?|hunch|hypothesis|theory|belief|intuition|assumption|"
                       r"prediction|expectation)s?\b|\bwhat (?:i|we)(?:'ve| have)? (?:always )?(?:believed|thought|"
                       r"said|expected|been saying)\b|\b(?:agreed|agree|agrees|sided) with (?:me|us)\b", MEDIUM,
                       "a prior belief is in play"),
            _indicator(r"\b(?:reinforc\w*|confirm(?:s|ed|ing)?|validat\w*|vindicat\w*|prove[sd]?|proving)\b", WEAK,
                       "the evidence is read as confirmation"),
            _indicator(r"\bonly (?:\w+ ){0,3}(?:read|reading|asked|looked|listened|pulled|counted|kept|talked|"
                       r"interviewed|checked)\b|\b(?:who|that|which) already (?:agreed|agree|liked|support\w*)\b|"
                       r"\bthe ones? (?:that|which|who) (?:improved|agreed|worked|liked|support\w*)\b|"
                       r"\bdidn'?t (?:bother|schedule|run|ask|read)\b|\bskipp?(?:ed|ing)? the (?:remaining|rest|"
                       r"other)\b",
                       MEDIUM, "the evidence was selected to agree"),
            _indicator(r"\bonly (?:trust|believe|use|count|cite|quote)\b|\bwhat (?:i|we) wanted to (?:hear|see)\b|"
                       r"\b(?:picked|chose|selected|cherry-?picked) (?:the )?(?:\w+ ){0,3}(?:that|which) (?:show|"
                       r"support|prove|"
                       r"confirm|agree)|\bleft (?:the )?(?:\w+ ){0,2}(?:ones?|results?|data|quotes?|numbers?|"
                       r"runs?) out\b",
                       STRONG, "the evidence was selected to agree"),
            _indicator(r"\b(?:critics|skeptics|sceptics|detractors|objectors|doubters)\b[^.;]{0,30}?\b(?:haven'?t|"
                       r"don'?t|"
                       r"didn'?t) (?:understood|understand|get it|read)\b|\bwon'?t address (?:their|the) (?:points|"
                       r"concerns|"
                       r"objections)\b|\bthe ones? (?:showing|that show|with)\b[^.;]{0,30}?\b(?:are|"
                       r"is) (?:misconfigured|"
                       r"wrong|broken|noise|unreliable|outdated|biased)\b", STRONG, "objections are dismissed unheard"),
            _indicator(r"\b(?:wrong way|went down|got worse|disagree\w*|contradict\w*|didn'?t improve)\b[^.;]{0,40}?"
                       r"\b(?:probably|just|must be|are|were)\b[^.;]{0,15}?\b(?:seasonal|noise|random|a blip|a fluke|"
                       r"an anomaly|outliers?)\b", STRONG, "unwelcome results are explained away"),
        ),
        _patterns(r"\bdisprov\w*|\bdisconfirm\w*|\bfalsif\w*|\bevidence against\b|\bsteel-?man\w*|devil'?s advocate|"
                  r"\bless sure\b"),
        re.compile(r"research|analysis|hypothesis|experiment|review|investigation|debug", re.I),
        "Actively seek disconfirming evidence: write down what result would prove the belief wrong, then look "
        "for it, and keep the contradicting data in the analysis.",
    ),
    _Rule(
        "anchoring", 0.7,
        (
            _indicator(r"\banchor(?:ed|ing)? (?:on|to|around)\b", STRONG, "a reference value steers later ones"),
            _indicator(r"\b(?:first|initial|original|opening|starting|previous|earlier|last year'?s|list)\s+"
                       r"(?:\w+\s+){0,1}(?:estimate|quote|guess|number|figure|price|offer|bid|benchmark|baseline|"
                       r"salary|sketch|profile|value|target|date|load test|test|run|measurement|proposal|draft|"
                       r"design)s?\b|"
                       r"\bkickoff\b|\b(?:floated|threw out|put forward|said (?:it )?out loud first|mentioned first)\b|"
                       r"\b(?:asked for|opened with|quoted us|said it would take)\b|\blast (?:quarter|year)'?s "
                       r"(?:target|number|budget|plan|figure)\b",
                       MEDIUM,
                       "an early figure is the reference point"),
            _indicator(r"\b(?:opened at|started at|starting from|based (?:off|on) the (?:first|original|initial))\b",
                       MEDIUM, "an opening value is the reference point"),
            _indicator(r"\b(?:around that|near that|close to (?:that|the|two|it)|somewhere near|that range|"
                       r"adjust\w* (?:up|down)? ?(?:a little|slightly)|only moved it|tweak\w* around|"
                       r"small adjustments|from there|call it \d|stayed? close|still guides|stuck with|has stuck|"
                       r"against that|measuring every|close enough to|ever since|relative to (?:that|it|this|"
                       r"the first)|"
                       r"compared (?:to|with) (?:that|it|the first)|clustered around|cent(?:er|re)d on|shaved|"
                       r"a bit (?:over|under|more|less)|never revisited|became the (?:deadline|target|budget|plan)|"
                       r"a few (?:days|percent|points) off|roughly the same|hover\w*|nudg\w+|counter-?offer|"
                       r"plan around|"
                       r"re-?deriv\w*)\b", MEDIUM,
                       "later values only adjust a little from it"),
            _indicator(r"\b(?:negotiated down to|looks like a bargain|seems reasonable|felt (?:bold|fair|cheap|high|"
                       r"low))\b|"
                       r"\bso\b[^.;]{0,40}?\b(?:around|about|close to|near|roughly)\b", WEAK,
                       "a value is judged relative to the first one seen"),
        ),
        _patterns(r"\b(?:privately|independently|each (?:person|of us) wrote)\b", r"\bbreak the work down\b"),
        re.compile(r"estimat|negotiat|pricing|budget|forecast|planning|capacity", re.I),
        "Re-estimate from scratch: have each person estimate independently before anyone shares a number, and "
        "build the estimate bottom-up from the current scope instead of adjusting the first figure.",
    ),
    _Rule(
        "availability", 0.68,
        (
            _indicator(r"\b(?:i|we) (?:still )?(?:remember|recall) (?:that|the|when|one)\b|\bthat one time\b|"
                       r"\bcomes? to mind\b|\boff the top of my head\b|\bfresh in (?:my|our|everyone'?s) minds?\b",
                       STRONG, "a memorable case stands in for the frequency"),
            _indicator(r"\b(?:i|we) can (?:easily |readily )?(?:think of|recall|name)\b|\bthe only \w+ (?:i|we) can "
                       r"(?:recall|remember|think of)\b", STRONG, "ease of recall is treated as frequency"),
            _indicator(r"\b(?:everyone|everybody|people|twitter|the internet)\b[^.;]{0,20}?\b(?:talking|posting|"
                       r"tweeting|writing) about\b|\bi keep hearing\b|\bthe story everyone tells\b|"
                       r"\bkeeps? coming up\b",
                       STRONG, "what is talked about is taken for what is common"),
            _indicator(r"\b(?:just|recently) (?:read|saw|heard|watched)\b|\bhorror stor(?:y|ies)\b|\bheadlines?\b|"
                       r"\bmade the news\b|\ba friend'?s\b|\ba friend of mine\b|\bdramatic\b|\bvivid\b|\bmemorable\b",
                       MEDIUM, "a vivid or recent story is the evidence"),
            _indicator(r"\b(?:my|a) (?:neighbou?r|friend|cousin|colleague|brother|sister|uncle|aunt|former boss)\b|"
                       r"\bstuck with me\b|\ball over the (?:news|internet|feeds?)\b|\bin the news\b|"
                       r"\bkeeps? (?:sharing|posting)\b|\beveryone (?:keeps )?shar\w*|\bwent viral\b|"
                       r"\ba talk (?:about|on)\b|\banecdot\w*|\bstor(?:y|ies) about\b|\bi heard (?:about|that)\b|"
                       r"\bsaw a (?:post|video|thread|tweet)\b|\bi read (?:about|an article|a post)\b|"
                       r"\bthere was that\b|"
                       r"\beveryone remembers\b|\bmy last (?:company|job|team|employer)\b|\bat my (?:last|previous|"
                       r"old) "
                       r"(?:company|job|team)\b|\b(?:had|heard) an? (?:terrible|bad|horrible|awful|great) experience\b|"
                       r"\bviral\b", MEDIUM, "an anecdote is the evidence"),
            _indicator(rf"\b(?:so|therefore|hence)\b[^.;]{{0,60}}?\b{_GENERAL}\b[^.;,]{{0,30}}|"
                       rf"\b{_GENERAL}\b[^.;,]{{0,30}}",
                       WEAK,
                       "one case is generalised to a rate"),
        ),
        _patterns(r"\bfull (?:\w+ )?log\b|\bbase rates?\b|\bcounted\b|\bacross (?:the|all)\b|"
                  r"\ball (?:the )?incidents\b"),
        re.compile(r"risk|security|incident|safety|threat", re.I),
        "Check the base rate: count how often the event actually happened in your own records (incident log, "
        "tickets, metrics) before letting a memorable example set the estimate.",
    ),
    _Rule(
        "recency", 0.68,
        (
            _indicator(r"\b(?:the |our )?(?:last|latest|most recent|past (?:two|few|couple of)|previous|"
                       r"recent|newest|yesterday'?s|this week'?s|this month'?s|(?:his|her|their) last(?: (?:two|"
                       r"few))?)\s+"
                       r"(?:\w+\s+){0,1}(?:sprint|release|deploy\w*|retro|week|days?|incident|run|quarter|month|spike|"
                       r"numbers|outage|prs?|pull requests?|complaint|demo|results?|survey|poll|report|data|metrics)\b|"
                       r"\b(?:the )?past (?:week|month|day|few days)\b|\byesterday(?:'s)?\b|"
                       r"\blately\b|\brecently\b|\bjust last week\b|\bthis (?:week|month|morning)\b|\btoday\b|"
                       r"\bsince (?:monday|tuesday|wednesday|thursday|friday|yesterday|last week|this morning)\b",
                       MEDIUM,
                       "the most recent events are the evidence"),
            _indicator(rf"\b{_CONCLUDE}\b[^.;,]{{0,60}}|\b{_SWEEPING}\b[^.;,]{{0,30}}", WEAK,
                       "a short recent window is extrapolated to the whole"),
            _indicator(r"\b(?:earlier|older|previous) (?:\w+ ){0,2}(?:runs?|results?|data) (?:are|is) outdated\b|"
                       r"\bonly one that matters\b|\bbased on it alone\b", STRONG, "older evidence is discarded"),
        ),
        _patterns(r"\bacross the (?:year|quarter|months?)\b|\bover the (?:past )?(?:year|long run|last \w+ months)\b|"
                  r"\b(?:twelve|12|\w+) months\b|\bhistorical\b|\bwhole history\b|\bbefore it\b"),
        re.compile(r"review|performance|forecast|trend|retro", re.I),
        "Widen the window: compare the recent observation with the longer history (quarter, year) and judge "
        "the trend on all of it, not on the last few data points.",
    ),
    _Rule(
        "representativeness", 0.65,
        (
            _indicator(r"\b(?:looks|looked|seems|sounds|reads|talks|acts|behaves) (?:exactly |just )?like\b|"
                       r"\bresembles?\b|\breminds me of\b|\btypical (?:of|for)?\b|\bthe kind of \w+ that\b|\bclassic\b|"
                       r"\bobviously an? \w+(?: \w+)? (?:person|type|guy|engineer|company|team)\b|\btextbook\b|"
                       r"\bsame (?:vibe|feel|look) as\b|\bhas the look of\b|\bmatch(?:es)? (?:a|the)\b|\bthe sort of\b|"
                       r"\b(?:written|built|designed|dressed) like\b|\bthe usual\b",
                       MEDIUM, "similarity to a type stands in for the odds"),
            _indicator(r"\bfits the profile\b|\ball the hallmarks\b|\bstereotyp\w*", STRONG,
                       "the case is judged by how well it matches a type"),
            _indicator(r"\b(?:so|therefore)\b[^.;]{0,50}?\b(?:must|surely|definitely|certainly|probably|will|'ll|"
                       r"won'?t|i'?m sure|the same|going to be|no point)\b[^.;,]{0,40}|\bmust be (?:one|"
                       r"the same)\b", MEDIUM,
                       "a conclusion is drawn from the resemblance alone"),
            _indicator(r"\b(?:is|'s|are) an? \w+(?: \w+)?, so (?:she|he|they|it) (?:probably|must|will|won'?t|"
                       r"surely)\b|"
                       r"\b(?:people from|teams that|engineers who)\b[^.;]{0,40}?\b(?:usually|typically|are|always)\b|"
                       r"\b\w+ (?:are|is) (?:usually|typically|stereotypically|always|never|"
                       r"all) [^.;]{1,40}?, so\b", STRONG,
                       "a group trait is applied to an individual case"),
            _indicator(r"\bregardless of how rare\b|\bwe don'?t need to (?:reproduce|verify|check)\b", STRONG,
                       "the base rate is ignored"),
        ),
        _patterns(r"\bbase rates?\b", r"\blet'?s (?:take|check|verify|measure|compare|reproduce)\b",
                  r"\bbefore (?:we decide|assuming|concluding)\b"),
        re.compile(r"hiring|candidate|diagnos|triage|investment|classif", re.I),
        "Start from the base rate: ask how common the category is before judging by resemblance, then check "
        "the specific evidence (reproduce, measure) instead of the stereotype.",
    ),
    _Rule(
        "framing", 0.65,
        (
            _indicator(r"\b(?:framed|pitched|presented|described|phrased|advertised|worded|called|branded|billed|spun|"
                       r"sold) (?:\w+ ){0,3}as\b|\bcalls (?:the|it|this) (?:\w+ )?['\"]|\b(?:that|the) word ['\"]|"
                       r"\bput that way\b|\bcalling (?:it|the \w+) an?\b|\bcalls it\b|\bif we (?:present|frame|call|"
                       r"say|pitch|describe)\b|\bthe (?:wording|framing)\b|\bthat wording\b", STRONG,
                       "the presentation, not the substance, drives the choice"),
            _indicator(r"\b\d+(?:\.\d+)?% (?:chance of )?(?:success|failure|survival|mortality|uptime|"
                       r"error rate)\b|\b\d+ in \d+\b|\b\d+(?:\.\d+)?% of (?:\w+ )?(?:sessions|users|conversions)\b",
                       MEDIUM, "a figure whose framing (gain or loss) shapes its reading"),
            _indicator(r"\b\d+(?:\.\d+)?%", WEAK, "a percentage whose framing shapes its reading"),
            _indicator(r"\b(?:labell?ed|branded|renamed|rebranded|marketed|billed|spun)\b[^.;]{0,25}?['\"]|"
                       r"\b(?:labell?ed|branded|rebranded|billed|spun) as\b|\binstead of ['\"]", STRONG,
                       "a label, not the substance, drives the reaction"),
            _indicator(r"\b(?:one|1)[- ]in[- ](?:a |an )?\w+\b|\bfelt (?:negligible|small|huge|scary|safe|tiny|"
                       r"risky)\b|\bsound(?:s|ed)? (?:expensive|cheap|small|huge|safe|risky)\b", MEDIUM,
                       "the wording of a figure shapes how big it feels"),
            _indicator(r"\bsounds? (?:much )?(?:better|great|scary|worse|alarming|reasonable|good)\b|"
                       r"\bfelt (?:alarming|urgent|reasonable)\b|\bwould have calmed\b|\blooks like a bargain\b|"
                       r"\bsound reasonable\b|\bmade the decision sound\b", MEDIUM,
                       "the reaction follows the wording"),
            _indicator(r"'(?:[^']{3,40})'|\"(?:[^\"]{3,40})\"|\blimited time\b|\bfree forever\b|\bcolou?rs? the\b",
                       WEAK, "a label or slogan carries the argument"),
            _indicator(r"\b(?:gain|loss|losing|saving)\b[^.;]{0,40}?\b(?:equivalent|rather than|instead of|"
                       r"sounds?)\b|\bframed as a (?:gain|loss)\b", MEDIUM,
                       "the same outcome is judged differently as a gain or a loss"),
        ),
        _patterns(r"\bboth\b[^.;]{0,40}\band\b[^.;]{0,40}\b(?:rates?|framings?|ways)\b",
                  r"\bframing (?:wouldn'?t|doesn'?t|didn'?t|won'?t)\b", r"\breframe\w*\b"),
        re.compile(r"pitch|present|marketing|negotiat|decision|proposal|pricing", re.I),
        "Reframe and recompute: state the outcome both as a gain and as a loss (and in absolute numbers), and "
        "decide on the numbers, not on the label.",
    ),
    _Rule(
        "sunk_cost", 0.75,
        (
            _indicator(r"\b(?:already|have|'ve) (?:\w+ )?(?:invested|spent|paid|put|committed|bought|hired|sunk)\b"
                       r"(?! (?:well|wisely))", MEDIUM, "past investment is in the argument"),
            _indicator(r"\balready (?:\w+ )?(?:invested|spent|paid|sunk|put) (?:so much|a lot|too much|"
                       r"\$?\d[\d,.]*k?\b|"
                       r"(?:\w+ )?(?:years?|months?|quarters?)\b)", STRONG, "a past investment is weighed as a reason"),
            _indicator(r"\b(?:invested|spent|put|sunk|committed) (?:so much|too (?:much|many)|a lot|\w+ years?)\b|"
                       r"\bso much (?:time|money|effort|work) has gone into\b|\byears of (?:effort|work)\b|"
                       r"\bafter all the (?:money|time|effort|"
                       r"work)\b", MEDIUM, "the size of the past investment is stressed"),
            _indicator(r"\btoo far (?:in|along) to\b|\bcome this far\b|\bthrow(?:ing)? away\b|"
                       r"\bwaste (?:all )?(?:that|the|this|of)? ?(?:effort|work|time|money|investment)\b|"
                       r"\ball that work was for nothing\b|\bfor nothing\b|\b(?:can'?t|cannot|"
                       r"won'?t) (?:just )?walk away\b|\bwalk away\b|\ba shame to waste\b|"
                       r"\bpush through\b|\bno matter what\b|\bto give up on\b|\bisn'?t an option\b|"
                       r"\bembarrassing to cancel\b|\bkeep (?:funding|patching|tuning|using)\b",
                       STRONG, "continuing is justified by what has been spent"),
            _indicator(r"\b(?:poured|sunk|prepaid|pre-paid)\b|\b(?:hundreds|thousands|months|years|weeks) of "
                       r"(?:hours|work|effort|commits|development)\b|\b\d+ (?:sprints|months|years|pages|hours)\b",
                       MEDIUM, "the size of the past investment is stressed"),
            _indicator(r"\b(?:would (?:mean|be)|feels? like) (?:all of it|it all|everything) (?:was )?wasted\b|"
                       r"\badmitting (?:failure|defeat)\b|\bso (?:we|i)(?:'ll| will)? (?:keep going|continue|finish|"
                       r"stick with)\b", STRONG, "stopping is cast as wasting what was spent"),
            _indicator(r"\bkeep going\b|\bstick with it\b|\bsee it through\b|\bfinish it\b|\bwe continue\b|"
                       r"\b(?:so|then)\b[^.;]{0,40}?\b(?:ha(?:s|ve) to|should|might as well|let'?s|need to|keep|"
                       r"finish|ship|"
                       r"continue|stay)\b[^.;,]{0,30}", WEAK, "the plan is to continue"),
            _indicator(r"\b(?:went|gone|poured) into\b|\b(?:were|was|be) wasted\b", MEDIUM,
                       "the past investment is counted as a reason"),
            _indicator(r"\b(?:put|invested|spent|sunk) too much\b[^.;]{0,40}?\bto (?:pull out|stop|quit|back out|"
                       r"walk away|give up)\b", STRONG, "continuing is justified by what has been spent"),
            _indicator(r"\b(?:paid|bought|prepaid|purchased|signed) (?:for )?[^.;]{0,30}?, so (?:we|i) (?:have to|"
                       r"must|need to|should)\b|"
                       r"\bso we (?:have to|need to) keep\b", STRONG, "a past payment obliges future use"),
        ),
        _patterns(r"\bdespite (?:the )?(?:time|money|effort|work|investment)\b|\bregardless of (?:what|how much)\b|"
                  r"\bgone either way\b|\bsunk cost\b|\bfrom here\b|\bgoing forward\b|\bexpected value\b|"
                  r"\bstill (?:performs|works|fits)\b"),
        re.compile(r"project|budget|roadmap|investment|portfolio|vendor", re.I),
        "Ignore what is already spent: compare the options only on their future costs and benefits from today, "
        "as if starting fresh, and set a kill criterion before investing more.",
    ),
    _Rule(
        "attribution", 0.7,
        (
            _indicator(rf"\bbecause (?:of )?(?:he|she|they|we|you|it|{_PERSON})(?:'s|'re| is| are| was| were)? "
                       rf"(?:just |simply |so |too |a |an )?{_TRAIT}", STRONG,
                       "an outcome is explained by someone's character"),
            _indicator(rf"\b(?:is|are|'s|'re|was|were|seems?) (?:just |simply |plain |obviously |clearly )?{_TRAIT}",
                       STRONG, "a person is labelled by a trait"),
            _indicator(rf"\b(?:he|she|they)\b (?:\w+ )?{_TRAIT}", STRONG, "a person is labelled by a trait"),
            _indicator(rf"\b{_TRAIT}\b", MEDIUM, "a character trait is the explanation"),
            _indicator(r"\bby nature\b|\bthat'?s just (?:the kind of people|how (?:he|she|they) (?:is|are))\b|"
                       r"\bthe kind of people they are\b|\bthanks to my (?:skill|talent|brilliance)\b|"
                       r"\bbad luck\b|\bbrilliant team\b", STRONG,
                       "success is credited to ourselves and failure to others' nature or luck"),
            _indicator(r"\bwhen (?:i|we) [^.;]{0,40}?\bit'?s (?:the|because of)\b[^.;]{0,60}?\bwhen \w+ [^.;]{0,30}?"
                       r"\bit'?s because\b", STRONG,
                       "our failures are put down to circumstances, others' to character"),
            _indicator(r"\bnothing about (?:our|the|my) [^.;]{0,30}?could have caused\b", MEDIUM,
                       "the situation is ruled out as a cause"),
            _indicator(r"\ba bunch of\b|\btypical of someone who\b|\bfrankly\b", WEAK,
                       "a person is summed up rather than the situation examined"),
            _indicator(r"\bnot because (?:of )?(?:the )?\w+|\bwhatever (?:he|she|they) (?:says?|said) about\b|"
                       r"\bhad nothing to do with it\b|\bnothing to fix in the\b|\bplain and simple\b", MEDIUM,
                       "the situation is ruled out as a cause"),
        ),
        _patterns(r"\bnot by any individual\b|\bblameless\b|\bwas possible because\b|\bbecause (?:his|her|their) "
                  r"(?:train|flight|car|child|kid)\b|\bsystemic\b"),
        re.compile(r"incident|post-?mortem|retro|performance review|blame|hiring", re.I),
        "Look at the situation first: list the process, tooling and context that made the outcome possible "
        "(a blameless review), and ask what anyone in that position would have done.",
    ),
)


@dataclass(frozen=True)
class BiasFinding:
    type: str
    severity: float
    confidence: float
    evidence: list[str] = field(default_factory=list)
    correction: str = ""
    indicators: list[str] = field(default_factory=list)  # the exact phrases of the text that matched

    def as_dict(self) -> dict:
        return {"type": self.type, "severity": round(self.severity, 2), "evidence": list(self.evidence),
                "correction": self.correction, "confidence": round(self.confidence, 2)}


@dataclass(frozen=True)
class _Match:
    start: int
    end: int
    phrase: str
    strength: float
    suggests: str


def _matches(rule: _Rule, text: str) -> list[_Match]:
    """The rule's indicators found in ``text``, not negated, the stronger kept where two overlap."""
    found = []
    for indicator in rule.indicators:
        taken = 0
        for match in indicator.pattern.finditer(text):
            phrase = match.group().strip(" ,;'\"")
            if not phrase or is_negated(text, match.start()):
                continue
            found.append(_Match(match.start(), match.end(), phrase, indicator.strength, indicator.suggests))
            taken += 1
            if taken == MATCHES_PER_INDICATOR:
                break
    kept: list[_Match] = []
    for candidate in sorted(found, key=lambda item: (-item.strength, item.start)):
        if not any(candidate.start < other.end and other.start < candidate.end for other in kept):
            kept.append(candidate)
    return sorted(kept, key=lambda item: item.start)


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(mark, 0, start) for mark in ".!?\n")
    rights = [index for index in (text.find(mark, end) for mark in ".!?\n") if index != -1]
    return text[left + 1: min(rights) if rights else len(text)]


def _finding(rule: _Rule, text: str, context: str) -> BiasFinding | None:
    matches = _matches(rule, text)
    counters = sum(1 for counter in rule.counters if counter.search(text))
    total = sum(match.strength for match in matches) - STRONG * counters
    if not matches or total < THRESHOLD - 1e-9:
        return None
    confidence = rule.base_confidence + CONFIDENCE_STEP * (len(matches) - 1)
    confidence += 0.05 if context and rule.context_hint.search(context) else 0.0
    absolute = any(_ABSOLUTE.search(_sentence_around(text, match.start, match.end)) for match in matches)
    severity = 0.3 + sum(0.2 if match.strength >= STRONG else 0.12 if match.strength >= MEDIUM else 0.05
                         for match in matches) + (0.1 if absolute else 0.0)
    return BiasFinding(
        type=rule.type, severity=min(severity, 0.95), confidence=min(confidence, CONFIDENCE_CAP),
        evidence=[f'"{match.phrase}": {match.suggests}' for match in matches], correction=rule.correction,
        indicators=[match.phrase for match in matches],
    )


def detect_biases(text: str, *, context: str = "") -> list[BiasFinding]:
    """The biases ``text`` shows, most likely and most severe first; [] for reasoning that shows none.
    ``context`` (e.g. "Product research analysis") raises confidence for the biases common there; evidence
    always comes from ``text`` itself."""
    findings = [finding for rule in _RULES if (finding := _finding(rule, text, context))]
    return sorted(findings, key=lambda finding: -(finding.confidence * finding.severity))
