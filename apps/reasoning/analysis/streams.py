"""The four reasoning streams of think and think_parallel: analytical, creative, critical and synthetic.

Without a model, each stream reasons in four phases over the problem's profile (problem.py): the analytical stream
frames the problem and weighs its domain factors, constraints, goals and evidence; the creative stream reframes it
and proposes alternatives; the critical stream surfaces assumptions and risks, and turns the caller's sharp edges
and open issues into warnings; the synthetic stream connects the parts and reads what the other streams found
(``PeerView``). The phases are the unit think_parallel synchronises on, so a stream reasons the same alone
(think.py) or alongside the others (parallel.py).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from apps.reasoning.analysis.problem import (
    ProblemProfile,
    coverage_confidence,
    domain_signals,
    evidence_line,
    knowledge,
)
from apps.reasoning.analysis.reasoning_text import is_measurable, join_list, lower_first, overlap

STREAMS = ("analytical", "creative", "critical", "synthetic")
MODE_DESCRIPTIONS = {
    "analytical": "logical: break the problem down, weigh the factors, constraints, goals and evidence",
    "creative": "innovative: reframe the problem, propose alternatives, question the constraints",
    "critical": "skeptical: surface assumptions, risks and weak points, check against known pitfalls",
    "synthetic": "holistic: connect the parts, balance goals against constraints, integrate into one plan",
}
# How many domains a stream works through: enough to cover a problem's main concerns without padding.
DOMAINS_PER_STREAM = 3
# Per stream: the kinds of memory it weighs (None: all), the role they play, and their base importance.
EVIDENCE_FOCUS = {"analytical": (None, "insight", 0.7),
                  "creative": (("decision", "thought", "memory", "episode"), "insight", 0.6),
                  "critical": (("sharp_edge", "issue"), "risk", 0.75)}
# Topics that say what kind of finding it is rather than what it is about: two streams sharing one is no theme.
NOT_THEMES = frozenset({"framing", "general", "assumption", "evidence", "constraint", "goal", "plan"})


@dataclass(frozen=True)
class Finding:
    """One thing a stream found. ``role`` is insight, recommendation or risk; ``topic`` is the domain (or "evidence",
    "constraint", "goal") it concerns, which is how synthesis tells when two streams talk about the same thing."""

    content: str
    role: str
    importance: float
    confidence: float
    topic: str = "general"
    evidence_id: str | None = None


@dataclass(frozen=True)
class Phase:
    step: str
    findings: tuple[Finding, ...] = ()
    conclusion: str = ""


# What a stream can see of the others at a sync point: checkpoint number (1..3) -> stream name -> their findings.
PeerView = Callable[[int], dict[str, list[Finding]]]


@dataclass
class StreamResult:
    mode: str
    steps: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    conclusion: str = ""

    def add(self, phase: Phase) -> None:
        self.steps.append(phase.step)
        self.findings.extend(phase.findings)
        self.conclusion = phase.conclusion or self.conclusion


def run_stream(mode: str, profile: ProblemProfile, peers: PeerView) -> StreamResult:
    result = StreamResult(mode=mode)
    for phase in stream_phases(mode, profile, peers):
        result.add(phase)
    return result


def stream_phases(mode: str, profile: ProblemProfile, peers: PeerView) -> Iterator[Phase]:
    """The four phases of a mode's reasoning; think_parallel publishes findings after each and syncs."""
    phases = {"analytical": _analytical, "creative": _creative, "critical": _critical, "synthetic": _synthetic}
    return phases[mode](profile, peers)


def local_peers(profile: ProblemProfile, *, exclude: str) -> PeerView:
    """Outside think_parallel there is nobody to sync with: the other streams run here, on demand, so that the
    synthetic mode alone still integrates what the others would find."""
    cache: dict[str, list[Phase]] = {}

    def view(checkpoint: int) -> dict[str, list[Finding]]:
        seen = {}
        for mode in STREAMS:
            if mode in {exclude, "synthetic"}:
                continue
            if mode not in cache:
                cache[mode] = list(stream_phases(mode, profile, lambda _: {}))
            seen[mode] = [finding for phase in cache[mode][:checkpoint] for finding in phase.findings]
        return seen

    return view


def stream_confidence(profile: ProblemProfile, findings: list[Finding]) -> tuple[float, list[str]]:
    """Half how well the problem is covered (evidence, goals, constraints), half how sure the findings are."""
    coverage, gaps = coverage_confidence(profile, found=len(findings))
    certainty = sum(finding.confidence for finding in findings) / len(findings) if findings else 0.3
    return round((coverage + certainty) / 2, 2), gaps


def ranked(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda finding: -finding.importance * finding.confidence)


def evidence_findings(mode: str, profile: ProblemProfile) -> list[Finding]:
    """The caller's memories a stream weighs, as its findings: the analytical stream all of them, the creative
    stream the decisions and earlier work it can build on, the critical stream sharp edges and issues, as risks."""
    kinds, role, base = EVIDENCE_FOCUS[mode]
    return [Finding(evidence_line(item), role, round(min(0.95, base + 0.2 * item.score), 2),
                    round(min(0.95, 0.6 + 0.3 * item.score), 2), topic="evidence", evidence_id=item.id)
            for item in profile.evidence_of(kinds)[:3]]


def _analytical(profile: ProblemProfile, peers: PeerView) -> Iterator[Phase]:
    parts = [phrase for phrase in profile.phrases if phrase != profile.subject]
    framing = f"This is a {profile.kind_label} problem about {profile.subject}"
    framing += f"; its parts: {join_list(parts, limit=4)}" if parts else ""
    findings = [Finding(framing, "insight", 0.6, 0.8, topic="framing")]
    if profile.causal:
        findings.append(Finding(f"The problem states a causal link ({join_list(list(profile.causal))}); test it "
                                "rather than assume it", "insight", 0.65, 0.7, topic="assumption"))
    yield Phase(f"Framed the {profile.question} question as a {profile.kind_label} problem about {profile.subject}",
                tuple(findings))

    domains = profile.main_domains(DOMAINS_PER_STREAM)
    yield Phase(f"Weighed the factors: {join_list(domains)}", tuple(
        Finding(profile.fill(knowledge(domain).lever), "insight", round(0.9 - 0.08 * rank, 2), 0.8, topic=domain)
        for rank, domain in enumerate(domains)))

    findings = [Finding(f"Constraint '{constraint}' excludes any option for {profile.subject} that breaks it; "
                        "check each candidate against it", "insight", 0.7, 0.85, topic="constraint")
                for constraint in profile.context.constraints]
    findings += [Finding(f"Goal '{goal}' is measurable: use it as the acceptance test" if is_measurable(goal)
                         else f"Goal '{goal}' is not measurable yet: define the number that shows it is met",
                         "insight", 0.75, 0.85, topic="goal") for goal in profile.context.goals]
    yield Phase(f"Checked {len(profile.context.constraints)} constraint(s) and {len(profile.context.goals)} goal(s)",
                tuple(findings))

    evidence = evidence_findings("analytical", profile)
    first_step, lever = profile.lifecycle()[0], profile.fill(knowledge(domains[0]).lever)
    recommendation = f"{first_step} first: {lower_first(lever)}"
    conclusion = recommendation
    if profile.context.constraints:
        conclusion += f", within {join_list(list(profile.context.constraints))}"
    if profile.context.goals:
        conclusion += f", judged against {join_list(list(profile.context.goals))}"
    if evidence:
        conclusion += f" (see {join_list([finding.evidence_id for finding in evidence])})"
    yield Phase(f"Weighed {len(evidence)} item(s) of evidence and concluded",
                (*evidence, Finding(recommendation, "recommendation", 0.85, 0.8, topic=domains[0])), conclusion)


def _creative(profile: ProblemProfile, peers: PeerView) -> Iterator[Phase]:
    reframes = {
        "why": f"Invert it: what would make {profile.subject} fail every time? Those conditions point at the cause",
        "should": f"Reframe as: what is the smallest reversible step towards {profile.subject}?",
        "what-if": f"Play the scenario forward for {profile.subject}, then backwards from its worst outcome",
        "how": f"Ask what would make {profile.subject} unnecessary; if nothing does, the simplest path is the baseline",
    }
    reframe = reframes.get(profile.question, f"Describe the ideal end state of {profile.subject} and work backwards")
    yield Phase("Reframed the problem", (Finding(reframe, "insight", 0.65, 0.65, topic="framing"),))

    domains = profile.main_domains(DOMAINS_PER_STREAM)
    alternatives = tuple(Finding(profile.fill(knowledge(domain).alternative), "recommendation",
                                 round(0.82 - 0.08 * rank, 2), round(0.7 - 0.05 * rank, 2), topic=domain)
                         for rank, domain in enumerate(domains))
    yield Phase(f"Generated {len(alternatives)} alternative(s)", alternatives)

    findings = [Finding(f"What if '{constraint}' were lifted? Price that option: if it is far better, negotiating "
                        "the constraint may pay", "insight", 0.6, 0.6, topic="constraint")
                for constraint in profile.context.constraints[:2]]
    parts = [phrase for phrase in profile.phrases if phrase != profile.subject]
    if len(parts) >= 2:
        findings.append(Finding(f"Combine {parts[0]} and {parts[1]}: one change that serves both beats two separate "
                                "efforts", "insight", 0.6, 0.6, topic="framing"))
    yield Phase("Questioned the constraints and combined the parts", tuple(findings))

    decisions = evidence_findings("creative", profile)
    best = alternatives[0].content
    conclusion = f"Try this: {lower_first(best)}"
    if decisions:
        conclusion += f", building on {join_list([finding.evidence_id for finding in decisions])}"
    yield Phase("Picked the most promising option", tuple(decisions), conclusion)


def _critical(profile: ProblemProfile, peers: PeerView) -> Iterator[Phase]:
    findings = []
    if profile.hedges:
        findings.append(Finding(f"Uncertain wording ({join_list(list(profile.hedges))}) marks claims that are not "
                                "established yet", "risk", 0.7, 0.75, topic="assumption"))
    if not profile.context.goals:
        findings.append(Finding(f"No success criterion is stated: any outcome for {profile.subject} could be called "
                                "a success", "risk", 0.65, 0.8, topic="goal"))
    if profile.question == "should":
        findings.append(Finding(f"The question assumes a change is needed; compare against leaving {profile.subject} "
                                "as it is", "insight", 0.7, 0.75, topic="assumption"))
    if profile.causal:
        findings.append(Finding(f"The stated cause ({join_list(list(profile.causal))}) is an assumption until tested",
                                "risk", 0.7, 0.7, topic="assumption"))
    if not findings:
        findings.append(Finding(f"The implicit assumption is that {profile.subject} is the right thing to work on",
                                "insight", 0.5, 0.6, topic="assumption"))
    yield Phase("Surfaced the assumptions", tuple(findings))

    domains = profile.main_domains(DOMAINS_PER_STREAM)
    risks = tuple(Finding(profile.fill(knowledge(domain).risk), "risk", round(0.85 - 0.08 * rank, 2), 0.75,
                          topic=domain) for rank, domain in enumerate(domains))
    yield Phase(f"Listed {len(risks)} risk(s)", risks)

    findings = evidence_findings("critical", profile)
    findings += [Finding(f"'{constraint}' and '{goal}' pull against each other: meeting one may cost the other",
                         "risk", 0.7, 0.65, topic="constraint")
                 for constraint in profile.context.constraints for goal in profile.context.goals
                 if overlap(constraint, goal) > 0 or _same_domain(constraint, goal)]
    yield Phase("Checked the known pitfalls and tensions", tuple(findings))

    top = ranked([*risks, *findings])[0]
    recommendation = f"Before committing, test the biggest risk: {lower_first(top.content)}"
    yield Phase("Reached a verdict", (Finding(recommendation, "recommendation", 0.8, 0.75, topic=top.topic),),
                f"Proceed with {profile.subject} only after addressing this: {lower_first(top.content)}")


def _same_domain(first: str, second: str) -> bool:
    return bool(set(domain_signals(first)) & set(domain_signals(second)))


def _synthetic(profile: ProblemProfile, peers: PeerView) -> Iterator[Phase]:
    domains = profile.top_domains
    if len(domains) >= 2:
        link = (f"{profile.subject} spans {join_list(domains, limit=4)}: a change made for one shows up in the "
                "others, so judge options on all of them")
    else:
        link = f"{profile.subject} is mainly a {domains[0] if domains else 'general'} problem; keep the answer focused"
    yield Phase("Connected the parts of the problem", (Finding(link, "insight", 0.7, 0.7, topic="framing"),))

    yield Phase("Balanced the goals against the constraints", tuple(
        Finding(f"Balance '{goal}' against '{constraint}': prefer the option that meets the goal without breaking "
                "the constraint", "insight", 0.75, 0.7, topic="goal")
        for goal in profile.context.goals[:2] for constraint in profile.context.constraints[:2]))

    seen = peers(2)
    shared = _shared_topics(seen)
    findings = [Finding(f"{join_list([mode.capitalize() for mode in modes], limit=4)} reasoning "
                        f"{'both' if len(modes) == 2 else 'all'} point at {topic} in {profile.subject}: treat it as "
                        "central", "insight", 0.85, 0.8, topic=topic) for topic, modes in shared.items()]
    findings += [Finding(f"The option '{option.content}' carries a risk ({lower_first(risk.content)}): stage it "
                         "behind a check", "insight", 0.8, 0.7, topic=option.topic)
                 for option, risk in _risky_options(seen)]
    yield Phase(f"Read the other streams: {sum(len(found) for found in seen.values())} finding(s), "
                f"{len(shared)} shared theme(s)", tuple(findings))

    steps = profile.lifecycle()
    plan = f"{steps[0]}, then {lower_first(steps[1])}, then {lower_first(steps[2])}"
    seen = peers(3)
    risks = ranked([finding for found in seen.values() for finding in found if finding.role == "risk"])
    if risks:
        plan += f", guarding against: {lower_first(risks[0].content)}"
    yield Phase("Integrated the findings into one plan", (Finding(plan, "recommendation", 0.85, 0.75, topic="plan"),),
                plan)


def _shared_topics(seen: dict[str, list[Finding]]) -> dict[str, list[str]]:
    """Topics (domains, or a model's own topics) that two or more streams independently raised."""
    modes_by_topic: dict[str, list[str]] = {}
    for mode, found in seen.items():
        for topic in dict.fromkeys(finding.topic for finding in found):
            if topic not in NOT_THEMES:
                modes_by_topic.setdefault(topic, []).append(mode)
    return {topic: modes for topic, modes in modes_by_topic.items() if len(modes) >= 2}


def _risky_options(seen: dict[str, list[Finding]]) -> list[tuple[Finding, Finding]]:
    """Recommendations another stream flagged a risk on (same topic)."""
    options = [finding for found in seen.values() for finding in found if finding.role == "recommendation"]
    risks = [finding for found in seen.values() for finding in found if finding.role == "risk"]
    return [(option, risk) for option in options for risk in risks if option.topic == risk.topic][:2]
