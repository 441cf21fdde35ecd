"""Reading a problem statement without a language model: clauses, key phrases, the question asked, action verbs
and their objects, hedges, causal cues and domain signals, plus the caller's memories that bear on it.

think, analyze_systematically, think_parallel and decompose_problem all start from one ``ProblemProfile``, so the
deterministic analyses of one problem agree with each other, and two different problems read differently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from apps.core.exceptions import InvalidInput
from apps.reasoning.analysis.common import EvidenceItem, ProblemContext
from apps.reasoning.analysis.llm import evidence_prompt
from apps.reasoning.analysis.reasoning_text import (
    STOPWORDS,
    WORD,
    content_words,
    join_list,
    matched,
    sentences,
    shorten,
    words,
)

# Verbs that start a task, grouped by the kind of problem they signal. The kind picks the lifecycle a
# decomposition uses and the framing of every analysis.
KIND_VERBS: dict[str, tuple[str, ...]] = {
    "build": ("build", "create", "develop", "implement", "launch", "add", "write", "design", "set",
              "introduce", "integrate", "support", "make", "prototype", "brainstorm"),
    "deliver": ("deploy", "release", "ship", "roll", "publish", "rollout", "host", "migrate"),
    "fix": ("fix", "debug", "repair", "resolve", "diagnose", "troubleshoot", "stop", "prevent", "recover"),
    "improve": ("optimize", "optimise", "improve", "reduce", "increase", "speed", "scale", "refactor", "simplify",
                "enhance", "lower", "raise", "boost", "cut", "grow", "harden", "tune", "redesign", "rework",
                "restructure", "modernize", "modernise", "upgrade", "update", "rewrite", "rebuild"),
    "decide": ("choose", "decide", "select", "pick", "compare", "evaluate", "adopt", "switch", "replace",
               "prioritize", "prioritise"),
    "plan": ("plan", "approach", "organize", "organise", "schedule", "prepare", "structure", "manage",
             "coordinate"),
    "understand": ("understand", "explain", "analyze", "analyse", "investigate", "explore", "learn", "study",
                   "assess", "measure", "test", "rethink", "review"),
}
KIND_LABELS = {"build": "building", "deliver": "delivery", "fix": "troubleshooting", "improve": "improvement",
               "decide": "decision", "plan": "planning", "understand": "understanding"}
VERB_KIND = {verb: kind for kind, verbs in KIND_VERBS.items() for verb in verbs}

# Words that mark a problem as belonging to a domain. Each domain brings its own risks and levers below.
DOMAIN_CUES: dict[str, tuple[str, ...]] = {
    "performance": ("performance", "slow", "latency", "throughput", "optimize", "optimise", "speed", "fast",
                    "p95", "p99", "response time", "bottleneck", "load", "cache", "caching"),
    "scale": ("scale", "scalable", "scaling", "growth", "growing", "traffic", "capacity", "concurrent"),
    "reliability": ("fail", "fails", "failure", "failures", "error", "errors", "crash", "crashes", "intermittent",
                    "outage", "downtime", "bug", "leak", "sla", "flaky", "timeout", "unstable", "broken"),
    "users": ("user", "users", "customer", "customers", "experience", "ux", "usability", "retention",
              "onboarding", "churn", "adoption", "feedback", "engagement"),
    "cost": ("cost", "costs", "budget", "expensive", "cheap", "price", "pricing", "spend", "roi", "revenue",
             "money", "funding"),
    "risk": ("risk", "risks", "security", "secure", "compliance", "breach", "vulnerability", "privacy", "safety",
             "audit", "regulation", "legal"),
    "time": ("deadline", "timeline", "month", "months", "week", "weeks", "quarter", "q1", "q2", "q3", "q4",
             "schedule", "soon", "urgent", "year"),
    "team": ("team", "teams", "hiring", "hire", "people", "skills", "staff", "engineers", "developer",
             "developers", "ownership"),
    "data": ("database", "query", "queries", "records", "schema", "data", "index", "indexes", "sql",
             "postgresql", "postgres", "table", "tables", "storage", "migration"),
    "architecture": ("architecture", "microservices", "monolith", "monolithic", "service", "services", "system",
                     "component", "components", "api", "infrastructure", "platform", "modular", "coupling"),
}

HEDGES = ("might", "maybe", "perhaps", "possibly", "probably", "unclear", "uncertain", "unknown", "seems",
          "appears", "likely", "unlikely", "not sure", "guess", "could be", "somewhat", "sometimes")
CAUSAL_CUES = ("because", "due to", "caused by", "leads to", "lead to", "results in", "result in", "since",
               "therefore", "so that", "as a result", "triggers", "after", "whenever")
SEQUENCE_CUES = ("then", "after", "before", "afterwards", "first", "next", "finally", "once")

_CLAUSE_SPLIT = re.compile(r",\s*(?:and\s+|or\s+|but\s+|then\s+)?|\s+(?:and then|and|but|while|whereas|then)\s+",
                           re.IGNORECASE)
_LEADING_FILLER = re.compile(r"^(?:(?:a|an|the|our|my|your|their|its|this|that|these|those|some|all|new)\s+)+",
                             re.IGNORECASE)
# Nouns too general to name what a problem is about; the phrase that follows them does ("the argument that ...").
GENERIC_OBJECTS = frozenset("""argument arguments hypothesis claim claims idea ideas option options way ways approach
problem problems issue issues question questions plan strategy""".split())
# Participles, adverbs and state verbs that end a noun phrase ("the system experiencing failures" and "backups
# sometimes fail" are about "the system" and "backups").
PARTICIPLES = frozenset("""experiencing causing getting becoming having taking running returning throwing showing
seeing making losing failing using producing hitting reaching generating sometimes often always never usually
randomly occasionally intermittently suddenly frequently rarely fail fails failed crash crashes crashed break breaks
hang hangs hung stall stalls time-out times-out keep keeps seem seems""".split())
_BOUNDARY_WORDS = frozenset("""to for with without in on at by from into of while when so because that which who
under over across within via using than as if and or but then""".split())


def clauses(text: str) -> list[str]:
    """The sentence's parts joined by "and", "but", "while", commas...; fragments of one word are folded back."""
    parts: list[str] = []
    for sentence in sentences(text):
        for part in _CLAUSE_SPLIT.split(sentence):
            part = part.strip(" ,.")
            if not part:
                continue
            if parts and len(content_words(part)) < 2 and not _starts_with_verb(part):
                parts[-1] = f"{parts[-1]} and {part}"
            else:
                parts.append(part)
    return parts


def _starts_with_verb(text: str) -> bool:
    first = words(text)[:1]
    return bool(first) and first[0] in VERB_KIND


def question_type(text: str) -> str:
    """why | how | should | what-if | what | when | which | statement, from the problem's opening words."""
    lowered = text.strip().lower()
    if re.search(r"\bwhat if\b|\bwhat would happen\b|\bsuppose\b", lowered):
        return "what-if"
    first = words(lowered)[:2]
    if not first:
        return "statement"
    if first[0] == "why":
        return "why"
    if first[0] == "how":
        return "how"
    if first[0] in {"should", "shall"} or re.search(r"\bshould (?:we|i|you|they)\b", lowered):
        return "should"
    if first[0] in {"when"}:
        return "when"
    if first[0] in {"which"} or (first[0] == "what" and len(first) > 1 and first[1] in {"option", "approach"}):
        return "which"
    if first[0] in {"what", "who", "where", "is", "are", "does", "do", "can", "could"}:
        return "what"
    return "statement"


def verb_objects(text: str) -> list[tuple[str, str]]:
    """(verb, object) pairs: each action verb the problem names and the phrase it acts on."""
    found = []
    tokens = WORD.findall(text)
    index = 0
    while index < len(tokens):
        verb = tokens[index].lower()
        if verb in VERB_KIND:
            phrase = []
            for token in tokens[index + 1:]:
                lowered = token.lower()
                if lowered in _BOUNDARY_WORDS and phrase and phrase[-1].lower() in GENERIC_OBJECTS:
                    phrase.append(token)
                    continue
                if (lowered in _BOUNDARY_WORDS or lowered in PARTICIPLES) and phrase:
                    break
                if lowered in _BOUNDARY_WORDS:
                    continue
                phrase.append(token)
                if len(phrase) >= 8:
                    break
            obj = _LEADING_FILLER.sub("", " ".join(phrase)).strip(" ?.,")
            if obj and content_words(obj):
                found.append((verb, obj))
                index += len(phrase)
        index += 1
    return found


def key_phrases(text: str, *, limit: int = 6) -> list[str]:
    """Runs of content words (noun-phrase-like), longest and most repeated first, in the problem's own wording."""
    runs: list[str] = []
    current: list[str] = []
    previous_end = 0
    for match in list(WORD.finditer(text)) + [None]:
        token = match.group(0).strip(".") if match else ""
        lowered = token.lower()
        punctuated = match is not None and bool(re.search(r"[,;:!?()]", text[previous_end:match.start()]))
        if punctuated and current:
            runs.append(" ".join(current[:5]))
            current = []
        if match:
            previous_end = match.end()
        if token and lowered not in STOPWORDS and lowered not in VERB_KIND and lowered not in PARTICIPLES \
                and len(lowered) > 1:
            current.append(token)
            continue
        if current:
            runs.append(" ".join(current[:5]))
        current = []
    counts: dict[str, int] = {}
    for run in runs:
        counts[run] = counts.get(run, 0) + 1
    # dict keeps first-seen order, and sorted is stable: ties go to the phrase that came first.
    ranked = sorted(counts, key=lambda run: (-counts[run], -len(run.split())))
    return ranked[:limit]


def domain_signals(text: str) -> dict[str, list[str]]:
    signals = {domain: matched(text, cues) for domain, cues in DOMAIN_CUES.items()}
    return {domain: cues for domain, cues in signals.items() if cues}


def problem_kind(text: str, question: str, pairs: list[tuple[str, str]]) -> str:
    """build | fix | improve | decide | plan | understand: what kind of answer the problem wants."""
    if question == "why":
        return "fix" if domain_signals(text).get("reliability") else "understand"
    if question in {"should", "which", "what-if"}:
        return "decide"
    if pairs:
        return VERB_KIND[pairs[0][0]]
    if domain_signals(text).get("reliability"):
        return "fix"
    return "understand" if question in {"what", "when"} else "plan"


@dataclass(frozen=True)
class ProblemProfile:
    """Everything the deterministic analyses read from one problem, its context and its evidence."""

    problem: str
    context: ProblemContext
    question: str
    kind: str
    pairs: tuple[tuple[str, str], ...]
    phrases: tuple[str, ...]
    domains: dict[str, list[str]]
    hedges: tuple[str, ...]
    causal: tuple[str, ...]
    evidence: tuple[EvidenceItem, ...]

    @property
    def subject(self) -> str:
        """The thing the problem is about, in its own words: the first verb's object, else its key phrase."""
        if self.pairs:
            return self.pairs[0][1]
        if not self.phrases:
            return self.problem.strip(" ?.!")
        # Without an action verb, the problem's first noun phrase is its topic ("Why is the system ...").
        lowered = self.problem.lower()

        def position(phrase: str) -> int:
            found = lowered.find(phrase.lower())
            return found if found >= 0 else len(lowered)

        return min(self.phrases, key=position)

    @property
    def top_domains(self) -> list[str]:
        """The domains by weight: a cue in the problem itself counts twice one in its context, and a domain only
        the context hints at needs two cues (a "growing user base" in the background is no scaling problem)."""
        in_problem = domain_signals(self.problem)

        def weight(domain: str) -> tuple[int, int]:
            return -(len(self.domains[domain]) + len(in_problem.get(domain, ()))), list(DOMAIN_CUES).index(domain)

        return sorted((domain for domain in self.domains if domain in in_problem or len(self.domains[domain]) >= 2),
                      key=weight)

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]

    def main_domains(self, limit: int = 3) -> list[str]:
        """The strongest domains, or "general" when the problem shows none."""
        return self.top_domains[:limit] or ["general"]

    def fill(self, template: str) -> str:
        """A domain or lifecycle template about this problem's subject."""
        return template.format(subject=self.subject)

    def lifecycle(self) -> list[str]:
        return [self.fill(phase) for phase in LIFECYCLES[self.kind]]

    def evidence_of(self, kinds: tuple[str, ...] | None = None) -> list[EvidenceItem]:
        """The evidence items of these kinds (all by default), most relevant first."""
        return [item for item in self.evidence if kinds is None or item.kind in kinds]


def profile_problem(problem: Any, context: ProblemContext, evidence: list[EvidenceItem] | tuple = ()) -> ProblemProfile:
    text = require_problem(problem)
    whole = " ".join([text, context.background, *context.constraints, *context.goals])
    pairs = verb_objects(text)
    question = question_type(text)
    return ProblemProfile(
        problem=text, context=context, question=question, kind=problem_kind(text, question, pairs),
        pairs=tuple(pairs), phrases=tuple(key_phrases(text)),
        domains=domain_signals(whole), hedges=tuple(matched(whole, HEDGES)), causal=tuple(matched(whole, CAUSAL_CUES)),
        evidence=tuple(sorted(evidence, key=lambda item: -item.score)),
    )


def problem_prompt(profile: ProblemProfile) -> str:
    """The problem, its context and the evidence, as every model prompt of the analyses states them."""
    parts = [f"Problem: {profile.problem}"]
    if not profile.context.is_empty:
        parts.append(profile.context.as_text())
    parts.append(evidence_prompt(list(profile.evidence)))
    return "\n\n".join(parts)


def require_problem(problem: Any) -> str:
    if not isinstance(problem, str) or not problem.strip():
        raise InvalidInput("problem must be a non-empty text describing what to reason about.", field="problem")
    return problem.strip()


EVIDENCE_LABELS = {
    "sharp_edge": "Known sharp edge",
    "decision": "Earlier decision",
    "issue": "Open issue",
    "thought": "Earlier thought",
    "episode": "Earlier episode",
    "memory": "Related memory",
}


def evidence_line(item: EvidenceItem) -> str:
    """An evidence item as an insight, naming its kind and id so the caller can open it."""
    label = EVIDENCE_LABELS.get(item.kind, "Related memory")
    return f"{label}: {shorten(item.content, 160)} ({item.id})"


def coverage_confidence(profile: ProblemProfile, *, found: int) -> tuple[float, list[str]]:
    """How sure a deterministic analysis can be, and why not more: evidence, goals, constraints and background
    raise it; hedged wording and missing context lower it. ``found`` counts the specific findings it made."""
    score = 0.4 + min(found, 6) * 0.03
    gaps = []
    score += min(len(profile.evidence), 3) * 0.05
    if not profile.evidence:
        gaps.append("No memories bear on this problem: the analysis rests on the problem text alone.")
    if profile.context.goals:
        score += 0.07
    else:
        gaps.append("No goals were given, so success criteria are assumed; state them to sharpen the conclusion.")
    if profile.context.constraints:
        score += 0.05
    else:
        gaps.append("No constraints were given; options that break an unstated limit may be included.")
    if profile.context.background:
        score += 0.04
    if profile.hedges:
        score -= min(len(profile.hedges), 3) * 0.04
        gaps.append(f"The wording is uncertain ({join_list(list(profile.hedges))}); verify those points first.")
    return round(min(0.92, max(0.2, score)), 2), gaps


@dataclass(frozen=True)
class DomainKnowledge:
    """What a domain brings to any problem in it, each line naming the problem's subject ({subject})."""

    lever: str  # the analytical move that usually pays
    alternative: str  # a creative option
    risk: str  # what a critic warns about
    cause: str  # the usual suspect when something in this domain goes wrong


DOMAINS: dict[str, DomainKnowledge] = {
    "performance": DomainKnowledge(
        "Measure where time goes in {subject} before changing it: a baseline (p95, not the average) shows what pays",
        "Cache or precompute the repeated work in {subject} instead of making each request faster",
        "Tuning {subject} without a baseline risks optimising the wrong path and hiding the real bottleneck",
        "repeated or unindexed work on the hot path of {subject}"),
    "scale": DomainKnowledge(
        "Find the component of {subject} that saturates first as load grows; that one sets the ceiling",
        "Make {subject} stateless so it scales out behind a load balancer and queue the slow work",
        "Designing {subject} for scale it does not have yet adds cost and complexity early",
        "a shared resource in {subject} that saturates under load"),
    "reliability": DomainKnowledge(
        "Correlate each failure of {subject} with load, deploys, time of day and dependencies to narrow the cause",
        "Reproduce the failure of {subject} on demand with fault injection instead of waiting for it",
        "Fixing a symptom of {subject} without the root cause lets the failure return under other conditions",
        "resource exhaustion (connections, memory, handles) that builds up in {subject} until it fails"),
    "users": DomainKnowledge(
        "Segment the users of {subject} and measure where they drop off before choosing what to change",
        "Prototype {subject} with a handful of real users before building it fully",
        "Changing {subject} on assumptions about users risks building what nobody asked for",
        "a mismatch between what users need from {subject} and what it offers"),
    "cost": DomainKnowledge(
        "Break the cost of {subject} down by driver; the largest driver bounds any saving",
        "Buy or reuse an existing solution for {subject} instead of building it",
        "Cutting the cost of {subject} can move it elsewhere (people's time, reliability)",
        "spend in {subject} that grows with usage rather than with value"),
    "risk": DomainKnowledge(
        "List the trust boundaries of {subject} and what crosses each one",
        "Remove the sensitive part from {subject} altogether instead of protecting it",
        "A security or compliance gap in {subject} is costly to discover late",
        "a missing control at a trust boundary of {subject}"),
    "time": DomainKnowledge(
        "Work back from the deadline: order the parts of {subject} by dependency and leave slack for unknowns",
        "Ship the smallest slice of {subject} that meets the deadline, then iterate",
        "A fixed timeline with the full scope of {subject} risks scope creep and a rushed finish",
        "work on {subject} scheduled without slack for unknowns"),
    "team": DomainKnowledge(
        "Match the work on {subject} to the people available and their skills",
        "Pair or rotate people on {subject} so knowledge spreads while the work gets done",
        "Limited team capacity makes every parallel track of {subject} slower and riskier",
        "knowledge of {subject} held by too few people"),
    "data": DomainKnowledge(
        "Inspect the access paths of {subject}: query plans, missing indexes and repeated reads",
        "Denormalise or materialise the hot reads of {subject} so they need no joins",
        "Changing how {subject} stores or reads data risks migrations, locks and downtime",
        "queries in {subject} that scan whole tables or wait on locks"),
    "architecture": DomainKnowledge(
        "Map the components of {subject} and their dependencies; coupling shows where change is expensive",
        "Change {subject} incrementally (strangler fig): carve out one bounded piece first",
        "Splitting or re-architecting {subject} multiplies operational overhead: deploys, monitoring, network failures",
        "coupling in {subject}, so one slow or failing part stalls the rest"),
}
GENERAL_DOMAIN = DomainKnowledge(
    "Break {subject} into its parts and tackle the one with the largest effect first",
    "Look at how others solved a problem like {subject} and borrow the approach",
    "Acting on {subject} before the goal is explicit risks solving a different problem",
    "an unexamined assumption about {subject}")

# The phases a problem of each kind goes through; decompose_problem and the recommendations follow them.
LIFECYCLES: dict[str, tuple[str, ...]] = {
    "build": ("Design the architecture of {subject}", "Implement the core of {subject}", "Test {subject}",
              "Deploy {subject}"),
    "deliver": ("Prepare {subject} for release", "Set up the target environment for {subject}", "Release {subject}",
                "Monitor {subject} after the release"),
    "fix": ("Reproduce the failure in {subject}", "Isolate the cause in {subject}", "Fix the cause in {subject}",
            "Verify the fix of {subject}"),
    "improve": ("Measure the current state of {subject}", "Identify the bottlenecks of {subject}",
                "Implement the improvements to {subject}", "Verify the gains in {subject}"),
    "decide": ("List the options for {subject}", "Define the criteria for {subject}",
               "Evaluate the options for {subject}", "Choose and plan {subject}"),
    "plan": ("Gather the inputs for {subject}", "Set the priorities of {subject}", "Sequence the work on {subject}",
             "Review {subject} with the people affected"),
    "understand": ("Collect observations about {subject}", "Form hypotheses about {subject}",
                   "Test the hypotheses about {subject}", "Summarise what was learned about {subject}"),
}


def knowledge(domain: str) -> DomainKnowledge:
    return DOMAINS.get(domain, GENERAL_DOMAIN)
