"""epistemic_action reads the dream's BlindSpots: the user's weakest open spot (lowest best score) whose nodes they
can still read is asked about before anything else, and marked resolved once asked; another user's spots and spots
on deleted nodes are never asked about."""
from __future__ import annotations

import pytest

from apps.cognition.models import BlindSpot, CurationTask
from apps.cognition.services.epistemic import epistemic_question
from apps.cognition.services.inbox import task_open
from apps.memories.services import memory_delete
from tests.cognition.support import new_session, node, record, set_state
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def spot(owner, kind, best_score, walk, hits=()):
    return BlindSpot.objects.create(owner=owner, kind=kind, query=walk[-1].content, node_ids=[m.pk for m in walk],
                                    best_score=best_score,
                                    hits=[{"node_id": str(m.pk), "score": s, "dense": s} for m, s in hits])


def test_the_weakest_open_blind_spot_is_asked_first_then_the_next_then_the_usual_spots():
    alice, bob = UserFactory(), UserFactory()
    radar = node(alice, "The radar array was recalibrated after the storm.", "radar")
    ferry = node(alice, "The ferry timetable changes in October.", "ferry")
    boats = node(alice, "Boats leave the harbour at dawn in autumn.", "boats")
    gone = node(alice, "A node deleted since its walk.", "gone")
    first = node(alice, "Invoices are emailed on the first of the month.", "invoices")
    fifth = node(alice, "Invoices are emailed on the fifth of the month.", "invoice")
    task = task_open(owner=alice, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED, node_ids=[first.pk, fifth.pk],
                     reason="Two dates.", suggested_tool=CurationTask.SuggestedTool.ANNOTATE_NODE)
    disconnected = spot(alice, "disconnected", 0.52, [radar, ferry], hits=[(boats, 0.52)])
    thin = spot(alice, "thin", 0.21, [ferry, radar], hits=[(boats, 0.21)])
    stale = spot(alice, "thin", 0.05, [radar, gone])
    memory_delete(actor=alice, memory_id=gone.pk)
    bobs = spot(bob, "thin", 0.01, [node(bob, "Bob's lonely note about kites.", "kites")])
    session = new_session(alice)
    record(session, "when do ferries run", [(ferry, 0.9)])
    session = set_state(session, entropy=0.95, coherence=0.1, interactions=2)

    asked = epistemic_question(actor=alice, session_id=str(session.pk))
    assert (asked.action_type, asked.target_nodes) == ("search_external", [str(radar.pk)])
    assert "radar array" in asked.question and "0.21" in asked.question and str(thin.pk) in asked.reason
    thin.refresh_from_db()
    assert thin.resolved_at is not None
    stale.refresh_from_db()
    assert stale.resolved_at is None  # its node is gone: skipped, not used

    again = epistemic_question(actor=alice, session_id=str(session.pk))
    assert (again.action_type, again.target_nodes) == ("clarify", [str(ferry.pk), str(boats.pk)])
    assert "ferry timetable" in again.question and "Boats leave" in again.question
    disconnected.refresh_from_db()
    assert disconnected.resolved_at is not None

    # No open spot left that alice can read: the inbox's ambiguity comes next, as before.
    assert epistemic_question(actor=alice, session_id=str(session.pk)).task == task
    bobs.refresh_from_db()
    assert bobs.resolved_at is None
    assert epistemic_question(actor=bob, force=True).target_nodes == [str(bobs.node_ids[-1])]
