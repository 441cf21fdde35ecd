"""ThoughtMCP's ``analyze_systematically``: pick the thinking framework that fits a problem (or take the caller's),
then work through its steps on that problem.

Selection scores cue words and phrases per framework over the problem (context counts half) plus the shape of the
question (why / should / what-if), and takes its confidence from the margin over the runner-up; a close runner-up
makes the analysis a hybrid that also runs the runner-up's steps. Each step renders one facet of the problem's
profile (its parts, candidate causes, the people affected, scenarios...), so the steps say something about this
problem. With a model, the model works through the same framework's steps and may pick a different framework
from the eight.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from apps.core.exceptions import InvalidInput
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend, ProblemContext
from apps.reasoning.analysis.llm import ask_json, model_or_fallback, model_score, required_conclusion, texts
from apps.reasoning.analysis.problem import (
    ProblemProfile,
    coverage_confidence,
    evidence_line,
    knowledge,
    problem_prompt,
    profile_problem,
)
from apps.reasoning.analysis.reasoning_text import join_list, lower_first, matched

# A runner-up scoring this close to the winner is worth running alongside it.
HYBRID_RATIO = 0.8
# Below this score the cues say little, and the problem's kind picks the framework.
WEAK_SCORE = 1.5
FRAMEWORK_MAX_TOKENS = 900


@dataclass(frozen=True)
class Framework:
    id: str
    name: str
    description: str
    best_for: str
    angle: str  # what it would add as an alternative
    steps: tuple[tuple[str, str], ...]  # (step name, facet of the problem it works on)
    cues: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description, "bestFor": self.best_for,
                "steps": [name for name, _ in self.steps]}


FRAMEWORKS: dict[str, Framework] = {framework.id: framework for framework in (
    Framework("scientific-method", "Scientific Method", "Form hypotheses and test them against observations",
              "Hypothesis testing, empirical problems", "Could turn the candidate explanations into tests",
              (("Observe", "observations"), ("Form hypotheses", "hypotheses"), ("Design the experiment", "test"),
               ("Analyze the results", "verify")),
              {"hypothesis": 3, "hypotheses": 3, "experiment": 2.5, "measure": 1.5, "measurement": 1.5,
               "a/b": 2, "validate": 1.5, "empirical": 2, "metric": 1, "metrics": 1, "correlation": 1.5,
               "observe": 1.5, "evidence": 1, "test": 1, "data": 0.5}),
    Framework("design-thinking", "Design Thinking", "Start from the people affected and iterate on prototypes",
              "User-centered problems, innovation", "Could surface what users actually need",
              (("Empathize", "stakeholders"), ("Define", "needs"), ("Ideate", "ideas"), ("Prototype", "prototype"),
               ("Test with users", "verify")),
              {"user": 2, "users": 2, "customer": 2, "customers": 2, "experience": 2, "ux": 2.5, "usability": 2,
               "onboarding": 2, "interface": 1.5, "retention": 1, "adoption": 1.5, "feedback": 1, "people": 0.5,
               "prototype": 1.5, "design": 1, "churn": 1.5}),
    Framework("systems-thinking", "Systems Thinking", "Understand the parts, their connections and feedback loops",
              "Complex interconnected systems", "Could reveal systemic issues",
              (("Map the components", "components"), ("Find the feedback loops", "loops"),
               ("Identify leverage points", "leverage"), ("Anticipate side effects", "risks")),
              {"system": 1, "systems": 1, "architecture": 1.5, "microservices": 1.5, "interconnected": 3,
               "dependencies": 2, "ecosystem": 2, "feedback loop": 3, "scale": 1, "scalable": 1, "complex": 1.5,
               "integration": 1.5, "components": 1.5, "infrastructure": 1, "organization": 1, "platform": 1}),
    Framework("critical-thinking", "Critical Thinking", "Examine claims, evidence and alternatives before judging",
              "Evaluation, argument analysis", "Could test the claims the problem takes for granted",
              (("Identify the claims", "claims"), ("Examine the evidence", "evidence"),
               ("Consider alternatives", "ideas"), ("Judge the risks", "risks")),
              {"evaluate": 2, "argument": 3, "claim": 2.5, "claims": 2.5, "assess": 1.5, "compare": 1.5,
               "valid": 1.5, "bias": 2, "pros and cons": 2.5, "trade-off": 1.5, "tradeoff": 1.5, "justify": 2,
               "credible": 2, "review": 1, "is it true": 2, "worth": 1}),
    Framework("creative-problem-solving", "Creative Problem Solving", "Generate many options, then develop the best",
              "Novel solutions, brainstorming", "Could find options outside the obvious ones",
              (("Clarify the challenge", "restate"), ("Generate ideas", "ideas"),
               ("Challenge the constraints", "constraints"), ("Develop the solution", "prototype")),
              {"novel": 2.5, "innovative": 2.5, "innovation": 2.5, "creative": 2.5, "idea": 2, "ideas": 2,
               "brainstorm": 3, "alternative": 1.5, "alternatives": 1.5, "reinvent": 2, "differentiate": 1.5,
               "unconventional": 2, "new": 1, "launch": 1}),
    Framework("root-cause-analysis", "Root Cause Analysis", "Systematic approach to identify underlying causes",
              "Debugging, failure analysis", "Could find the cause behind the symptoms",
              (("Define the problem", "restate"), ("Collect data", "observations"), ("Identify causes", "hypotheses"),
               ("Verify the root cause", "test")),
              {"fail": 2, "fails": 2, "failure": 2, "failures": 2, "intermittent": 2, "error": 1.5, "errors": 1.5,
               "crash": 2, "crashes": 2, "bug": 1.5, "outage": 2, "broken": 1.5, "regression": 1.5, "leak": 1.5,
               "debug": 2, "root cause": 3, "incident": 1.5, "flaky": 1.5, "timeout": 1, "sla": 1, "slow": 0.5}),
    Framework("first-principles", "First Principles", "Reduce the problem to what must be true and rebuild from it",
              "Fundamental understanding", "Could question the assumptions under the usual approach",
              (("Identify the assumptions", "claims"), ("Break down to fundamentals", "fundamentals"),
               ("Rebuild from the fundamentals", "rebuild")),
              {"fundamental": 2.5, "fundamentals": 2.5, "first principles": 3, "from scratch": 2.5, "basics": 1.5,
               "assumption": 2, "assumptions": 2, "rethink": 2, "simplest": 1.5, "essential": 1.5,
               "understand": 1, "cost": 0.5}),
    Framework("scenario-planning", "Scenario Planning", "Explore plausible futures and pick a strategy robust to them",
              "Future planning, uncertainty", "Could test the plan against different futures",
              (("Identify the driving forces", "components"), ("Build scenarios", "scenarios"),
               ("Find the signposts", "signposts"), ("Choose a robust strategy", "strategy")),
              {"should we": 2.5, "future": 2.5, "uncertain": 2.5, "uncertainty": 2.5, "plan": 1, "planning": 1,
               "roadmap": 2, "strategy": 2, "forecast": 2.5, "long-term": 2, "what if": 2.5, "market": 1.5,
               "migrate": 1, "years": 1.5, "timeline": 1, "quarter": 1, "q1": 1, "q2": 1, "q3": 1, "q4": 1}),
)}
QUESTION_BONUS = {"why": {"root-cause-analysis": 1.5, "scientific-method": 0.5},
                  "should": {"scenario-planning": 1, "critical-thinking": 1},
                  "what-if": {"scenario-planning": 1.5}}
KIND_DEFAULT = {"build": "systems-thinking", "deliver": "systems-thinking", "fix": "root-cause-analysis",
                "improve": "systems-thinking", "decide": "critical-thinking", "plan": "scenario-planning",
                "understand": "first-principles"}


class Selection(NamedTuple):
    """select_framework's answer; unpacks as (framework, confidence, reason, is_hybrid, alternatives)."""

    framework: Framework
    confidence: float
    reason: str
    is_hybrid: bool
    alternatives: tuple[tuple[Framework, str], ...]


def select_framework(problem: str, context: ProblemContext) -> Selection:
    """The framework whose cues the problem matches best; confidence grows with the margin over the runner-up."""
    profile = profile_problem(problem, context)
    return _select(profile)


def _select(profile: ProblemProfile) -> Selection:
    scores, hits = _scores(profile)
    order = sorted(FRAMEWORKS, key=lambda framework_id: (-scores[framework_id], list(FRAMEWORKS).index(framework_id)))
    best, runner_up = order[0], order[1]
    top = scores[best]
    if top < WEAK_SCORE:
        best = KIND_DEFAULT[profile.kind]
        order = [best, *[framework_id for framework_id in order if framework_id != best]]
        reason = (f"No strong cues in the problem; chosen for a {profile.kind_label} problem"
                  + (f" (weak cues: {join_list(hits[best])})" if hits[best] else ""))
        return Selection(FRAMEWORKS[best], 0.4, reason, False, _alternatives(order[1:3], hits))
    margin = (top - scores[runner_up]) / top
    confidence = round(min(0.95, 0.5 + 0.45 * margin * min(1.0, top / 4)), 2)
    is_hybrid = scores[runner_up] >= HYBRID_RATIO * top
    reason = (f"Problem characteristics match the {FRAMEWORKS[best].best_for.lower()} pattern "
              f"(cues: {join_list([repr(hit) for hit in hits[best]], limit=4)})")
    if is_hybrid:
        reason += f"; {FRAMEWORKS[runner_up].name} fits almost as well, so its steps are included"
    return Selection(FRAMEWORKS[best], confidence, reason, is_hybrid, _alternatives(order[1:3], hits))


def _scores(profile: ProblemProfile) -> tuple[dict[str, float], dict[str, list[str]]]:
    context_text = profile.context.as_text()
    scores, hits = {}, {}
    for framework in FRAMEWORKS.values():
        in_problem = matched(profile.problem, tuple(framework.cues))
        in_context = [cue for cue in matched(context_text, tuple(framework.cues)) if cue not in in_problem]
        bonus = QUESTION_BONUS.get(profile.question, {}).get(framework.id, 0)
        scores[framework.id] = (sum(framework.cues[cue] for cue in in_problem)
                                + 0.5 * sum(framework.cues[cue] for cue in in_context) + bonus)
        hits[framework.id] = ([f"{profile.question} question"] if bonus else []) + in_problem + in_context
    return scores, hits


def _alternatives(framework_ids: list[str], hits: dict[str, list[str]]) -> tuple[tuple[Framework, str], ...]:
    return tuple((FRAMEWORKS[framework_id], FRAMEWORKS[framework_id].angle
                  + (f" (also matches {join_list(hits[framework_id])})" if hits[framework_id] else ""))
                 for framework_id in framework_ids)


def require_framework(framework_id: Any) -> Framework:
    if not isinstance(framework_id, str) or framework_id not in FRAMEWORKS:
        raise InvalidInput(f"preferred_framework must be one of {', '.join(FRAMEWORKS)}; got {framework_id!r}.",
                           field="preferred_framework", extra={"allowed": list(FRAMEWORKS)})
    return FRAMEWORKS[framework_id]


def analyze_systematically(*, problem: str, preferred_framework: str | None, context: ProblemContext,
                           evidence: list[EvidenceItem], backend: ModelBackend | None) -> dict[str, Any]:
    """The seed's analyze_systematically data (without processingTime, which the edge measures) plus method."""
    profile = profile_problem(problem, context, evidence)
    selection = _select(profile)
    if preferred_framework is not None:
        preferred = require_framework(preferred_framework)
        automatic = selection.framework
        selection = Selection(
            preferred, 1.0, f"Requested by the caller (automatic selection would have chosen {automatic.name})",
            False, tuple(alternative for alternative in ((automatic, automatic.angle), *selection.alternatives)
                         if alternative[0].id != preferred.id)[:2])
    return model_or_fallback(
        backend, ask=lambda model: _with_model(profile, selection, model, fixed=preferred_framework is not None),
        fallback=lambda: {**_shape(selection, _apply(profile, selection)), "method": DETERMINISTIC})


def _shape(selection: Selection, result: dict[str, Any]) -> dict[str, Any]:
    framework = selection.framework
    return {
        "framework": {"id": framework.id, "name": framework.name, "description": framework.description},
        "selection": {"confidence": selection.confidence, "reason": selection.reason, "isHybrid": selection.is_hybrid},
        "result": result,
        "alternatives": [{"framework": {"id": alternative.id, "name": alternative.name}, "reason": reason}
                         for alternative, reason in selection.alternatives],
    }


def _apply(profile: ProblemProfile, selection: Selection) -> dict[str, Any]:
    steps = list(selection.framework.steps)
    if selection.is_hybrid:
        runner_up = selection.alternatives[0][0]
        steps += [step for step in runner_up.steps if step[1] not in {facet for _, facet in steps}]
    rendered, insights = [], []
    for name, facet in steps:
        items = FACETS[facet](profile)
        rendered.append(f"{name}: {join_list(items, limit=3)}")
        insights += [item for item in items if item not in insights]
    insights += [evidence_line(item) for item in profile.evidence[:3] if evidence_line(item) not in insights]
    coverage, gaps = coverage_confidence(profile, found=len(insights))
    return {"conclusion": CONCLUSIONS[selection.framework.id](profile), "steps": rendered, "insights": insights,
            "confidence": round((coverage + selection.confidence) / 2, 2), "limitations": gaps}


def _with_model(profile: ProblemProfile, selection: Selection, backend: ModelBackend, *, fixed: bool) -> dict:
    framework = selection.framework
    choice = ("Use exactly this framework." if fixed else
              f"If another of these frameworks fits clearly better, name its id in \"framework\": "
              f"{', '.join(FRAMEWORKS)}.")
    system = (f"You analyse problems systematically with the {framework.name} framework ({framework.description}). "
              f"Its steps: {', '.join(name for name, _ in framework.steps)}. {choice} Work through each step on the "
              "user's problem, using its context and the user's memories given as evidence (cite ids). Answer with "
              "one JSON object and nothing else: {\"framework\": id, \"conclusion\": string, \"steps\": [\"step: "
              "what you found\"], \"insights\": [strings], \"confidence\": number between 0 and 1}.")
    answer = ask_json(backend, system=system, prompt=problem_prompt(profile), max_tokens=FRAMEWORK_MAX_TOKENS,
                      key="analyze-systematically")
    conclusion = required_conclusion(answer)
    proposed = answer.get("framework")
    if not fixed and isinstance(proposed, str) and proposed in FRAMEWORKS and proposed != framework.id:
        chosen = FRAMEWORKS[proposed]
        selection = Selection(chosen, selection.confidence, f"Chosen by the model over {framework.name}, which the "
                              f"problem's cues suggested ({selection.reason})", False,
                              ((framework, framework.angle), *[alternative for alternative in selection.alternatives
                                                               if alternative[0].id != chosen.id])[:2])
    _, gaps = coverage_confidence(profile, found=0)
    result = {"conclusion": conclusion, "steps": texts(answer.get("steps")) or
              [name for name, _ in selection.framework.steps], "insights": texts(answer.get("insights")),
              "confidence": model_score(answer.get("confidence")), "limitations": gaps}
    return _shape(selection, result)


def _hypotheses(profile: ProblemProfile) -> list[str]:
    """Candidate causes, best first: the caller's own sharp edges and open issues, then each domain's usual suspect
    (failure-shaped domains first)."""
    known = [evidence_line(item) for item in profile.evidence_of(("sharp_edge", "issue"))[:2]]
    domains = sorted(profile.main_domains(), key=lambda domain: domain not in {"reliability", "performance", "data"})
    return known + [profile.fill(knowledge(domain).cause) for domain in domains]


def _stakeholders(profile: ProblemProfile) -> list[str]:
    people = [f"the {cue} of {profile.subject}" for cue in profile.domains.get("users", [])
              if cue in {"users", "customers", "user", "customer"}][:1]
    people += [f"the {cue} that builds and runs it" for cue in profile.domains.get("team", [])[:1]]
    return people or [f"the people who use or run {profile.subject}"]


def _needs(profile: ProblemProfile) -> list[str]:
    needs = [f"Need: {goal}" for goal in profile.context.goals]
    return needs or [f"Define what {join_list(_stakeholders(profile), limit=2)} need from {profile.subject}; no goals "
                     "were given"]


def _claims(profile: ProblemProfile) -> list[str]:
    claims = [f"Claimed link ({cue}) needs testing" for cue in profile.causal]
    claims += [f"Uncertain: '{hedge}'" for hedge in profile.hedges]
    claims += [f"Assumed constraint: {constraint}" for constraint in profile.context.constraints]
    return claims or [f"Assumed: {profile.subject} is the right thing to work on"]


def _scenarios(profile: ProblemProfile) -> list[str]:
    domains = profile.main_domains()
    goal = profile.context.goals[0] if profile.context.goals else f"{profile.subject} succeeds"
    return [f"Best case: {goal}",
            f"Worst case: {lower_first(profile.fill(knowledge(domains[0]).risk))}",
            f"Likely case: partial progress limited by {join_list(list(profile.context.constraints)) or domains[0]}"]


def _signposts(profile: ProblemProfile) -> list[str]:
    cues = [cue for domain in profile.main_domains() for cue in profile.domains.get(domain, [])[:2]]
    return [f"Watch: {cue}" for cue in cues] or [f"Watch the first results of {profile.subject}"]


def _loops(profile: ProblemProfile) -> list[str]:
    domains = profile.main_domains()
    if len(domains) < 2:
        return [f"Check whether fixing {profile.subject} feeds back into its own cause"]
    return [f"{first} and {second} feed back into each other in {profile.subject}"
            for first, second in zip(domains, domains[1:])]


FACETS: dict[str, Callable[[ProblemProfile], list[str]]] = {
    "restate": lambda profile: [f"{profile.problem.rstrip('?.!')} (a {profile.question} question about "
                                f"{profile.subject})"],
    "observations": lambda profile: [profile.fill(knowledge(domain).lever) for domain in profile.main_domains()[:2]],
    "hypotheses": _hypotheses,
    "test": lambda profile: ["Test each candidate cause one change at a time"
                             + (f", without breaking {join_list(list(profile.context.constraints))}"
                                if profile.context.constraints else "")],
    "verify": lambda profile: [f"Confirm against: {goal}" for goal in profile.context.goals]
                              or [f"Define the result that shows {profile.subject} is done; no goals were given"],
    "stakeholders": _stakeholders,
    "needs": _needs,
    "ideas": lambda profile: [profile.fill(knowledge(domain).alternative) for domain in profile.main_domains()],
    "prototype": lambda profile: [f"Try the cheapest version of this first: "
                                  f"{lower_first(profile.fill(knowledge(profile.main_domains()[0]).alternative))}"],
    "components": lambda profile: [f"{domain}: {join_list(profile.domains[domain])}" for domain in profile.top_domains]
                                  or list(profile.phrases) or [profile.subject],
    "loops": _loops,
    "leverage": lambda profile: [profile.fill(knowledge(profile.main_domains()[0]).lever)],
    "risks": lambda profile: [profile.fill(knowledge(domain).risk) for domain in profile.main_domains()],
    "claims": _claims,
    "evidence": lambda profile: [evidence_line(item) for item in profile.evidence[:3]]
                                or ["No memories bear on this; the claims rest on the problem text alone"],
    "constraints": lambda profile: [f"What if '{item}' were lifted?" for item in profile.context.constraints]
                                   or ["No constraints were stated: check which limits are real"],
    "fundamentals": lambda profile: [*profile.context.goals, *profile.context.constraints]
                                    or [f"What {profile.subject} must achieve, whatever the approach"],
    "rebuild": lambda profile: [profile.lifecycle()[0] + " from those truths alone"],
    "scenarios": _scenarios,
    "signposts": _signposts,
    "strategy": lambda profile: [profile.fill(knowledge(profile.main_domains()[0]).alternative)
                                 + ": it keeps options open in each scenario"],
}

CONCLUSIONS: dict[str, Callable[[ProblemProfile], str]] = {
    "scientific-method": lambda profile: f"Hypothesis to test first: {_hypotheses(profile)[0]}; "
                                         f"{lower_first(FACETS['verify'](profile)[0])}",
    "design-thinking": lambda profile: f"Start from {join_list(_stakeholders(profile), limit=2)}: "
                                       f"{lower_first(FACETS['ideas'](profile)[0])}",
    "systems-thinking": lambda profile: f"Leverage point: {lower_first(FACETS['leverage'](profile)[0])}; "
                                        f"{lower_first(_loops(profile)[0])}",
    "critical-thinking": lambda profile: f"Check the weakest assumption before acting "
                                         f"({lower_first(_claims(profile)[0])}); the main risk: "
                                         f"{lower_first(FACETS['risks'](profile)[0])}",
    "creative-problem-solving": lambda profile: f"Most promising idea: {lower_first(FACETS['ideas'](profile)[0])}",
    "root-cause-analysis": lambda profile: f"Most likely cause: {_hypotheses(profile)[0]}; "
                                           f"{lower_first(FACETS['test'](profile)[0])} to confirm it",
    "first-principles": lambda profile: f"Rebuild {profile.subject} from what must hold "
                                        f"({join_list(FACETS['fundamentals'](profile))})",
    "scenario-planning": lambda profile: f"Robust strategy: {lower_first(FACETS['strategy'](profile)[0])}",
}
