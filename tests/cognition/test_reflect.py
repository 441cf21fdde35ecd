"""reflect_on_memory (apps/cognition/services/reflect.py): steps from hand-set session states by issue 20's thresholds
(entropy > 0.6: epistemic_action; coherence < 0.4: trigger_dream), then from the goal; max_steps bounds them; an
unknown or another user's session is not found (code session_not_found, MCP -32000)."""
from __future__ import annotations

import pytest

from apps.cognition.services.reflect import memory_reflect
from apps.core.exceptions import InvalidInput, NotFound
from tests.cognition.support import new_session, set_state

GOAL = "Understand why the nightly deploy of the billing service fails"


def tools(reflection) -> list[str]:
    return [step.tool for step in reflection.steps]


@pytest.mark.parametrize(("entropy", "coherence", "first"), [
    (0.75, 0.30, ["trigger_dream", "epistemic_action"]),
    (0.75, 0.55, ["epistemic_action"]),
    (0.20, 0.10, ["trigger_dream"]),
    (0.20, 0.90, []),
    (0.60, 0.40, []),  # the thresholds themselves: entropy must exceed 0.6, coherence fall below 0.4
    (0.61, 0.39, ["trigger_dream", "epistemic_action"]),
])
def test_the_sessions_state_decides_the_first_steps(user, entropy, coherence, first):
    session = set_state(new_session(user), entropy=entropy, coherence=coherence, interactions=12)
    reflection = memory_reflect(actor=user, goal=GOAL, session_id=str(session.pk), max_steps=5)
    assert tools(reflection)[:len(first)] == first
    assert tools(reflection)[len(first)] == "generate_search_plan"
    assert reflection.session == session
    by_tool = {step.tool: step for step in reflection.steps}
    if "epistemic_action" in first:
        assert by_tool["epistemic_action"].arguments == {"session_id": str(session.pk)}
        assert f"{entropy:.2f}" in by_tool["epistemic_action"].why and "0.6" in by_tool["epistemic_action"].why
    if "trigger_dream" in first:
        assert by_tool["trigger_dream"].arguments == {"phase": "full_cycle", "blocking": False}
        assert f"{coherence:.2f}" in by_tool["trigger_dream"].why and "0.4" in by_tool["trigger_dream"].why
    if not first:
        assert "calls for nothing" in reflection.notes[0]


def test_the_goal_decides_the_rest(user):
    session = set_state(new_session(user), entropy=0.1, coherence=0.9, interactions=3)
    reflection = memory_reflect(actor=user, goal=GOAL, session_id=str(session.pk), max_steps=5)
    assert tools(reflection) == ["generate_search_plan", "expand_causal_path", "inject_context"]
    plan, causal, inject = reflection.steps
    assert plan.arguments == {"goal": GOAL, "query_types": ["semantic", "causal"], "max_queries": 2}
    assert causal.arguments == {"concept": "nightly deploy billing service fails", "direction": "causes"}
    assert inject.arguments == {"query": GOAL, "session_id": str(session.pk)}
    code = memory_reflect(actor=user, goal="List the API endpoints and when each version shipped",
                          session_id=str(session.pk))
    assert code.steps[0].arguments["query_types"] == ["semantic", "code", "temporal"]
    assert "expand_causal_path" not in tools(code)


def test_max_steps_bounds_the_steps_most_urgent_first(user):
    session = set_state(new_session(user), entropy=0.9, coherence=0.1, interactions=40)
    reflection = memory_reflect(actor=user, goal=GOAL, session_id=str(session.pk), max_steps=2)
    assert tools(reflection) == ["trigger_dream", "epistemic_action"] and reflection.left_out == 3
    assert len(memory_reflect(actor=user, goal=GOAL, session_id=str(session.pk)).steps) == 3  # default


def test_the_latest_session_and_none(user):
    assert memory_reflect(actor=user, goal=GOAL).session is None
    alone = memory_reflect(actor=user, goal=GOAL)
    assert tools(alone) == ["generate_search_plan", "expand_causal_path", "inject_context"]
    assert "no session yet" in alone.notes[0] and "session_id" not in alone.steps[-1].arguments
    fresh = new_session(user)
    assert "no interactions yet" in memory_reflect(actor=user, goal=GOAL).notes[0]
    set_state(fresh, entropy=0.8, coherence=0.8, interactions=2)
    assert tools(memory_reflect(actor=user, goal=GOAL))[0] == "epistemic_action"


def test_another_users_session_is_not_found(user, other_user):
    theirs = set_state(new_session(other_user), entropy=0.9, coherence=0.1, interactions=5)
    for session_id in (str(theirs.pk), "0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a"):
        with pytest.raises(NotFound) as caught:
            memory_reflect(actor=user, goal=GOAL, session_id=session_id)
        assert caught.value.code == "session_not_found" and caught.value.extra["field"] == "session_id"


@pytest.mark.parametrize(("arguments", "field"), [
    ({"goal": "short"}, "goal"),
    ({"goal": "g" * 501}, "goal"),
    ({"goal": GOAL, "max_steps": 0}, "max_steps"),
    ({"goal": GOAL, "max_steps": 6}, "max_steps"),
    ({"goal": GOAL, "session_id": "not-a-uuid"}, "session_id"),
])
def test_bad_input_names_the_field(user, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        memory_reflect(actor=user, **arguments)
    assert caught.value.field == field
