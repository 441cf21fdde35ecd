"""reflect_on_memory: the next steps toward a goal, from the session's UTL state and the goal's own words.

Steps, in this order, the first ``max_steps`` kept:
1. From the session's cached state (its latest when no session_id is given; only once it has interactions):
   coherence < REFLECT_COHERENCE_LOW (0.4) -> ``trigger_dream`` (consolidate what the session touched before more
   searching), entropy > REFLECT_ENTROPY_HIGH (0.6) -> ``epistemic_action`` for the session (ask about its weakest
   spot). These thresholds are issue 20's, fixed whatever the lifecycle stage (the pulse's are the stage's).
2. From the goal: ``generate_search_plan`` with the query types the goal's words call for (semantic always; causal
   when it asks why or names a cause or effect; code when it names code; temporal when it asks when or names a
   time; hierarchical when it asks for kinds, parts or an overview); ``expand_causal_path`` toward causes when it
   asks why, else toward effects, when it is causal; then ``inject_context`` with the goal as the query.

Each step names the tool, its arguments and why, in numbers where the state gave them. Nothing is written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import REFLECT_COHERENCE_LOW, REFLECT_ENTROPY_HIGH, REFLECT_STEPS, Stage
from apps.cognition.models import CgSession
from apps.cognition.services.plan import clean_goal, goal_terms
from apps.cognition.services.sessions import session_get
from apps.memories.text import words

CAUSAL_WORDS = frozenset("why cause causes caused because effect effects consequence consequences lead leads led "
                         "result results resulted impact impacts affect affects affected reason reasons".split())
WHY_WORDS = frozenset("why cause causes caused because reason reasons".split())
CODE_WORDS = frozenset("code function functions method methods class classes api endpoint endpoints implementation "
                       "implement implemented bug bugs module modules library script query sql schema config".split())
TEMPORAL_WORDS = frozenset("when date dates time timeline history yesterday today recent recently last before after "
                           "since until year month week day schedule deadline version versions".split())
HIERARCHY_WORDS = frozenset("kind kinds type types category categories hierarchy overview part parts member members "
                            "group groups family families taxonomy subtypes".split())
CODE_SHAPE = re.compile(r"[a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|\w+\(\)|`")


@dataclass(frozen=True)
class ReflectStep:
    tool: str
    arguments: dict[str, Any]
    why: str


@dataclass(frozen=True)
class Reflection:
    goal: str
    session: CgSession | None
    stage: Stage
    steps: list[ReflectStep]
    left_out: int  # steps beyond max_steps
    notes: list[str] = field(default_factory=list)


def memory_reflect(*, actor: User, goal, session_id=None, max_steps=None) -> Reflection:
    """The steps toward ``goal`` (see the module docstring). An unknown session, or another user's, is not found
    (code session_not_found)."""
    goal = clean_goal(goal)
    limit = REFLECT_STEPS.clean(max_steps, field="max_steps")
    session = session_get(actor=actor, session_id=session_id)
    steps, notes = [], []
    if session is None:
        notes.append("You have no session yet, so there is no entropy or coherence to act on: the steps come from "
                     "the goal alone.")
    elif session.interactions == 0:
        notes.append(f"Session {session.pk} has no interactions yet: the steps come from the goal alone.")
    else:
        steps += _state_steps(session)
        if not steps:
            notes.append(f"Entropy {session.entropy:.2f} is at most {REFLECT_ENTROPY_HIGH} and coherence "
                         f"{session.coherence:.2f} at least {REFLECT_COHERENCE_LOW}: the session's state calls for "
                         "nothing before the goal's own steps.")
    steps += _goal_steps(goal, session)
    stage = utl.stage_of(session.interactions if session else 0)
    return Reflection(goal=goal, session=session, stage=stage, steps=steps[:limit], left_out=max(0, len(steps) - limit),
                      notes=notes)


def _state_steps(session: CgSession) -> list[ReflectStep]:
    steps = []
    if session.coherence < REFLECT_COHERENCE_LOW:
        steps.append(ReflectStep("trigger_dream", {"phase": "full_cycle", "blocking": False}, (
            f"Coherence {session.coherence:.2f} is below {REFLECT_COHERENCE_LOW}: the nodes this session touched are "
            "scattered. A dream replays them, strengthens the links between those used together and merges "
            "near-duplicates, so later searches land in one connected neighbourhood.")))
    if session.entropy > REFLECT_ENTROPY_HIGH:
        steps.append(ReflectStep("epistemic_action", {"session_id": str(session.pk)}, (
            f"Entropy {session.entropy:.2f} is above {REFLECT_ENTROPY_HIGH}: what this session asks keeps surprising "
            "the graph. A clarifying question about its weakest spot (an open ambiguity, two close unlinked nodes) "
            "settles it before more is stored or searched.")))
    return steps


def _goal_steps(goal: str, session: CgSession | None) -> list[ReflectStep]:
    tokens = set(words(goal))
    causal = bool(tokens & CAUSAL_WORDS)
    types = ["semantic"]
    if causal:
        types.append("causal")
    if tokens & CODE_WORDS or CODE_SHAPE.search(goal):
        types.append("code")
    if tokens & TEMPORAL_WORDS:
        types.append("temporal")
    if tokens & HIERARCHY_WORDS:
        types.append("hierarchical")
    steps = [ReflectStep("generate_search_plan", {"goal": goal, "query_types": types, "max_queries": len(types)}, (
        f"Queries for the goal from its words and your graph's, one per perspective it calls for ({', '.join(types)}), "
        "each with the share of the goal's own best nodes it recovers, measured."))]
    if causal:
        direction = "causes" if tokens & WHY_WORDS else "effects"
        concept = " ".join(word for word in goal_terms(goal) if word not in CAUSAL_WORDS)
        steps.append(ReflectStep("expand_causal_path", {"concept": concept or goal, "direction": direction}, (
            f"The goal asks about {'causes' if direction == 'causes' else 'effects'}: follow the directed causal "
            f"links {'into' if direction == 'causes' else 'out of'} the node that matches it.")))
    arguments: dict[str, Any] = {"query": goal}
    if session is not None:
        arguments["session_id"] = str(session.pk)
    steps.append(ReflectStep("inject_context", arguments, (
        "Load what the graph holds about the goal within a token budget, with citation tags to check each claim "
        "(hydrate_citation).")))
    return steps
