"""The dream over REST (/api/v1/cognition/dreams/): trigger (queued for the worker, trigger_dream's validation),
the paged list without N+1, the detail step by step, interrupt, and Alice's runs out of Bob's reach."""
from __future__ import annotations

import pytest

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream import dream_execute, dream_trigger
from tests.cognition.dream_support import item, session
from tests.cognition.curation_support import link, nodes
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)

pytestmark = pytest.mark.django_db

BASE = "/api/v1/cognition/dreams/"


def _error(response, status, field=None):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] and error["message"]
    if field is not None:
        assert field in str(error["details"]) or field in error["message"], error
    return error


def _finished(user, **options) -> ConsolidationRun:
    return dream_execute(run_id=dream_trigger(actor=user, phase=options.pop("phase", "nrem"), **options).pk)


def test_trigger_queues_a_run_and_the_detail_follows_it_step_by_step(user, api):
    a, b = nodes(user, "Alpha service owns billing.", "Beta service sends invoices.")
    link(user, a, b, 0.5)
    item(session(user), (a, 0.9), (b, 0.6))
    response = api.post(BASE, {"phase": "nrem", "duration_minutes": 2}, format="json")
    assert response.status_code == 202, response.content
    queued = response.json()
    assert (queued["status"], queued["phase"], queued["current_step"]) == ("queued", "nrem", "nrem_replay")
    assert [step["state"] for step in queued["steps"]] == ["next", "pending", "pending", "pending", "pending"]
    assert queued["budget"]["minutes"] == 2 and queued["reversal_hash"] is None
    dream_execute(run_id=queued["dream_run_id"])  # the worker's part
    detail = api.get(f"{BASE}{queued['dream_run_id']}/").json()
    assert detail["status"] == "completed" and detail["current_step"] is None
    assert [step["step"] for step in detail["steps"]] == ["nrem_replay", "nrem_link", "nrem_dedupe",
                                                         "nrem_summarise", "nrem_commit"]
    assert all(step["state"] == "done" and step["batches"] >= 1 for step in detail["steps"])
    assert sum(step["batches"] for step in detail["steps"]) == detail["batches"] == detail["counters"]["batches"]
    assert detail["counters"]["edges_strengthened"] == 1 and detail["reversal_hash"]
    assert detail["notes"] and detail["stop_reason"] == "done"


def test_trigger_refuses_bad_input_naming_the_field_and_a_second_dream(user, api):
    _error(api.post(BASE, {"phase": "siesta"}, format="json"), 400, "phase")
    _error(api.post(BASE, {"duration_minutes": 0}, format="json"), 400, "duration_minutes")
    _error(api.post(BASE, {"synthetic_query_count": 501}, format="json"), 400, "synthetic_query_count")
    _error(api.post(BASE, {"blocking": True}, format="json"), 400, "blocking")
    dream_trigger(actor=user, phase="nrem")  # queued, its worker not yet there
    error = _error(api.post(BASE, {}, format="json"), 409)
    assert "under way" in error["message"]


def test_a_read_token_cannot_trigger_or_interrupt(user, api_client_for):
    reader = api_client_for(user, scopes=("read",))
    assert reader.post(BASE, {}, format="json").status_code == 403
    run = dream_trigger(actor=user, phase="nrem")
    assert reader.post(f"{BASE}{run.pk}/interrupt/", format="json").status_code == 403
    assert reader.get(f"{BASE}{run.pk}/").status_code == 200


def test_the_list_is_paged_newest_first_in_constant_queries(user, other_user, api, django_assert_num_queries):
    for _ in range(2):
        _finished(user)
    _finished(other_user)
    api.get(BASE)  # the token's last use is written on its first call only
    with django_assert_num_queries(3):  # the token, the count, the page
        listed = api.get(BASE).json()
    assert [run["dream_run_id"] for run in listed["results"]] == [
        str(pk) for pk in ConsolidationRun.objects.filter(owner=user).order_by("-created_at").values_list("pk",
                                                                                                         flat=True)]
    for _ in range(3):
        _finished(user)
    with django_assert_num_queries(3):
        page = api.get(BASE, {"limit": 2, "offset": 1}).json()
    assert page["count"] == 5 and len(page["results"]) == 2
    _error(api.get(BASE, {"limit": 0}), 400, "limit")


def test_interrupt_stops_a_queued_run_at_once_and_a_finished_one_is_a_conflict(user, api):
    run = dream_trigger(actor=user, phase="nrem")
    stopped = api.post(f"{BASE}{run.pk}/interrupt/", format="json")
    assert stopped.status_code == 200, stopped.content
    assert (stopped.json()["status"], stopped.json()["stop_reason"]) == ("interrupted", "interrupt")
    assert dream_execute(run_id=run.pk).status == "interrupted"  # a worker that comes later leaves it
    _error(api.post(f"{BASE}{run.pk}/interrupt/", format="json"), 409, "dream_run_id")
    _error(api.post(f"{BASE}{run.pk}/interrupt/", {"now": True}, format="json"), 400, "now")
    resumed = api.post(BASE, {"phase": "rem"}, format="json").json()
    assert resumed["dream_run_id"] == str(run.pk) and resumed["phase"] == "nrem"  # the interrupted one goes on


def test_bob_never_sees_nor_stops_alices_runs(user, bob_api):
    run = dream_trigger(actor=user, phase="nrem")
    _error(bob_api.get(f"{BASE}{run.pk}/"), 404, "dream_run_id")
    _error(bob_api.post(f"{BASE}{run.pk}/interrupt/", format="json"), 404, "dream_run_id")
    assert bob_api.get(BASE).json()["count"] == 0
    assert ConsolidationRun.objects.get(pk=run.pk).status == "queued"
    _error(bob_api.get(f"{BASE}not-a-uuid/"), 400, "dream_run_id")


def test_interrupt_stops_a_running_dream_after_its_batch_even_one_deaf_to_queries(user, api, monkeypatch):
    from apps.cognition.services.dream import runs

    chain = nodes(user, *[f"Station {index} of the northern line." for index in range(6)])
    talk = session(user)
    for a, b in zip(chain, chain[1:]):
        link(user, a, b, 0.5)
        item(talk, (a, 0.9), (b, 0.6))
    run = dream_trigger(actor=user, phase="nrem", batch_size=1, abort_on_query=False)
    replay = runs.BATCHES["nrem_replay"]

    def interrupted(ctx, cursor, size):
        work = replay(ctx, cursor, size)
        if cursor is None:  # the page's button, pressed while the first batch works
            assert api.post(f"{BASE}{run.pk}/interrupt/", format="json").status_code == 200
        return work

    monkeypatch.setitem(runs.BATCHES, "nrem_replay", interrupted)
    stopped = dream_execute(run_id=run.pk)
    assert (stopped.status, stopped.progress["stop_reason"], stopped.progress["batches"]) == \
        ("interrupted", "interrupt", 1)
    assert any("You interrupted the dream" in note for note in stopped.notes)
    detail = api.get(f"{BASE}{run.pk}/").json()
    assert detail["steps"][0] == {"step": "nrem_replay", "label": "NREM replay", "state": "next", "batches": 1,
                                  "items": 1}
    assert detail["was_interrupted"] is False  # by its owner, not by a query
    monkeypatch.setitem(runs.BATCHES, "nrem_replay", replay)
    done = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    assert done.status == "completed" and done.checkpoint["counters"]["items_replayed"] == 5
