"""The gardener's edges: REST (status and run, in the error envelope naming the field), the page (status, waiting
reasons, last cycle with its undo link, run now), the admin's read-only state with its action through the service,
and the beat task run by Celery's own apply. Each shows the actor only their own gardener."""
from __future__ import annotations

from datetime import timedelta

import pytest
from celery import current_app
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from apps.cognition.models import ActivityState, UndoEntry
from apps.cognition.services.gardener.cycle import gardener_request, gardener_run
from apps.cognition.services.dream import dream_trigger
from apps.cognition.tasks import gardener_cycle, gardener_tick
from apps.core.exceptions import PermissionDenied
from apps.memories.models import MemoryLink
from tests.cognition.curation_support import link, nodes
from tests.cognition.gardener_support import age_link
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_close_broker_connections")]

BASE = "/api/v1/cognition/gardener"


def weak_idle_link(user) -> MemoryLink:
    a, b = nodes(user, f"{user.username} keeps bees on the roof.", "The harbour opens at six every morning.")
    return age_link(link(user, a, b, 0.05), hours=48)


def _error(response, status: int, field: str | None = None) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] and error["message"]
    if field is not None:
        assert field in error["details"] or error["details"].get("field") == field, error
    return error


# --- REST ---------------------------------------------------------------------------------------------------------

def test_rest_runs_a_cycle_and_reports_it_in_the_status(api, bob_api, user):
    weak = weak_idle_link(user)
    status = api.get(f"{BASE}/")
    assert status.status_code == 200, status.content
    body = status.json()
    assert (body["last_cycle"], body["nodes"], body["running"], body["rules"]["max_nodes"]) == (None, 2, False, 1000)
    ran = api.post(f"{BASE}/run/", {"batch_size": 50, "blocking": True}, format="json")
    assert ran.status_code == 200, ran.content
    cycle = ran.json()
    assert (cycle["status"], cycle["trigger"], cycle["counters"]["edges_pruned"]) == ("completed", "manual", 1)
    assert not MemoryLink.objects.filter(pk=weak.pk).exists()
    after = api.get(f"{BASE}/").json()
    assert after["last_cycle"]["reversal_hash"] == cycle["reversal_hash"] and after["undoable"] is True
    # Bob sees his own gardener only, and cannot undo alice's cycle.
    assert bob_api.get(f"{BASE}/").json()["last_cycle"] is None
    _error(bob_api.post(f"/api/v1/cognition/undo/{cycle['reversal_hash']}/apply/", format="json"), 404)
    applied = api.post(f"/api/v1/cognition/undo/{cycle['reversal_hash']}/apply/", format="json")
    assert applied.status_code == 200, applied.content
    assert MemoryLink.objects.filter(pk=weak.pk).exists()


def test_rest_queues_a_cycle_for_the_worker_by_default(api, bob_api, user):
    weak = weak_idle_link(user)
    queued = api.post(f"{BASE}/run/", {"batch_size": 50}, format="json")
    assert queued.status_code == 202, queued.content
    body = queued.json()
    assert (body["running"], body["last_cycle"]["status"], body["last_cycle"]["trigger"]) == (True, "queued", "manual")
    assert MemoryLink.objects.filter(pk=weak.pk).exists()  # nothing ran in the request
    _error(api.post(f"{BASE}/run/", {}, format="json"), 409, "trigger")  # one cycle at a time, queued ones too
    assert bob_api.get(f"{BASE}/").json()["running"] is False
    done = run_queued(user)
    assert (done["status"], done["counters"]["edges_pruned"]) == ("completed", 1)
    assert not MemoryLink.objects.filter(pk=weak.pk).exists()
    assert api.get(f"{BASE}/").json()["last_cycle"]["status"] == "completed"


def test_rest_bad_input_is_a_400_naming_the_field(api):
    _error(api.post(f"{BASE}/run/", {"batch_size": 0}, format="json"), 400, "batch_size")
    _error(api.post(f"{BASE}/run/", {"batch_size": 201}, format="json"), 400, "batch_size")
    _error(api.post(f"{BASE}/run/", {"batch_size": "many"}, format="json"), 400, "batch_size")
    _error(api.post(f"{BASE}/run/", {"force": True}, format="json"), 400, "force")
    _error(api.post(f"{BASE}/run/", {"blocking": "soon"}, format="json"), 400, "blocking")


def test_rest_refuses_a_second_cycle_with_a_409(api, user):
    ActivityState.objects.create(owner=user, cycle_token="another", cycle_heartbeat_at=timezone.now())
    _error(api.post(f"{BASE}/run/", {}, format="json"), 409, "trigger")
    assert api.get(f"{BASE}/").json()["running"] is True


# --- the page -----------------------------------------------------------------------------------------------------

def test_the_page_shows_activity_why_it_waits_and_runs_a_cycle(alice, bob, user):
    weak = weak_idle_link(user)
    page = alice.get(reverse("dashboard:cognition-gardener"))
    assert page.status_code == 200
    body = page.content.decode()
    assert "Your activity" in body and "No cycle has run yet" in body
    assert 'aria-current="page">Gardener</a>' in body and "has not been measured yet" in body
    ActivityState.objects.create(owner=user, activity=0.4, last_tick_at=timezone.now())
    assert "You are active (activity 0.40" in alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    queued = alice.post(reverse("dashboard:cognition-gardener-run"), follow=True).content.decode()
    # The page does not wait for the cycle: it is queued for the worker, and the button stays disabled meanwhile.
    assert "A cycle is queued" in queued and 'id="gardener-run" disabled' in queued
    assert MemoryLink.objects.filter(pk=weak.pk).exists()
    run_queued(user)
    body = alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert 'message-success" id="gardener-outcome">The cycle completed: 1 change.' in body
    assert "1</span> weak idle link pruned" in body and "started by you" in body
    assert "Window 1 of about 1 in round 1: 2 of your 2 nodes" in body
    entry = UndoEntry.objects.get(owner=user, operation="gardener")
    assert f'#undo-{entry.pk[:12]}">Undo this cycle</a>' in body
    assert not MemoryLink.objects.filter(pk=weak.pk).exists()
    undo_page = alice.get(reverse("dashboard:cognition-undo")).content.decode()
    assert f'id="undo-{entry.pk[:12]}"' in undo_page and "Gardener cycle of 2 nodes" in undo_page
    # Bob's page shows nothing of alice's cycle.
    bobs = bob.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert "No cycle has run yet" in bobs and entry.pk[:12] not in bobs


def test_the_page_says_why_no_cycle_ran(alice, user):
    ActivityState.objects.create(owner=user, cycle_token="another", cycle_heartbeat_at=timezone.now())
    page = alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert "One cycle runs at a time." in page and "disabled" in page
    refused = alice.post(reverse("dashboard:cognition-gardener-run"), follow=True).content.decode()
    assert "No cycle ran: A gardener cycle of yours is under way" in refused


def test_pages_need_a_login(client):
    assert client.get(reverse("dashboard:cognition-gardener")).status_code == 302
    assert client.post(reverse("dashboard:cognition-gardener-run")).status_code == 302
    assert ActivityState.objects.count() == 0


# --- admin --------------------------------------------------------------------------------------------------------

def test_the_admin_runs_the_owners_cycle_through_the_service(client, staff_user, user, other_user):
    weak = weak_idle_link(user)
    bobs = weak_idle_link(other_user)
    ActivityState.objects.create(owner=user)
    client.force_login(staff_user)
    changelist = reverse("admin:cognition_activitystate_changelist")
    assert client.get(changelist).status_code == 200
    page = client.get(reverse("admin:cognition_activitystate_change", args=[user.pk]))
    assert page.status_code == 200 and b"Save" not in page.content
    response = client.post(changelist, {"action": "run_gardener", "_selected_action": [user.pk]}, follow=True)
    assert [str(message) for message in response.context["messages"]] == [
        "Queued a gardener cycle for 1 activity state."]
    assert MemoryLink.objects.filter(pk=weak.pk).exists()  # the worker runs it, not the admin's request
    run_queued(user)
    assert not MemoryLink.objects.filter(pk=weak.pk).exists()
    assert MemoryLink.objects.filter(pk=bobs.pk).exists()  # only the selected owner's graph
    state = ActivityState.objects.get(owner=user)
    assert state.last_cycle["trigger"] == "admin" and UndoEntry.objects.get(operation="gardener").owner == user


def test_running_another_users_gardener_needs_the_curators_permission(user, other_user):
    weak = weak_idle_link(user)
    ActivityState.objects.create(owner=user)
    other_user.is_staff = True
    other_user.save()
    with pytest.raises(PermissionDenied):
        gardener_run(actor=other_user, owner_id=user.pk, curator=True)
    with pytest.raises(PermissionDenied):
        gardener_request(actor=other_user, owner_id=user.pk, curator=True, trigger="admin")
    assert MemoryLink.objects.filter(pk=weak.pk).exists()
    assert ActivityState.objects.get(owner=user).cycle_token in ("", None)  # nothing queued either


# --- the beat task ------------------------------------------------------------------------------------------------

def test_the_beat_schedule_ticks_every_30_seconds():
    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule["cognition.gardener_tick"] == 30


def test_the_tick_task_starts_the_cycle_of_an_idle_user(user, other_user):
    weak = weak_idle_link(user)
    bobs = weak_idle_link(other_user)
    now = timezone.now()
    ActivityState.objects.create(owner=user, low_since=now - timedelta(minutes=3), last_tick_at=now - timedelta(
        seconds=30))
    ActivityState.objects.create(owner=other_user, activity=0.9, last_tick_at=now - timedelta(seconds=30))
    current_app.conf.task_always_eager = True
    try:
        outcome = gardener_tick.apply().get()
    finally:
        current_app.conf.task_always_eager = False
    assert outcome["cycles"] == [user.pk] and outcome["dreams"] == []
    assert not MemoryLink.objects.filter(pk=weak.pk).exists()
    assert MemoryLink.objects.filter(pk=bobs.pk).exists()
    state = ActivityState.objects.get(owner=user)
    assert (state.last_cycle["status"], state.last_cycle["trigger"]) == ("completed", "auto")
    assert ActivityState.objects.get(owner=other_user).activity == pytest.approx(0.63)  # bob's EWMA decays


def run_queued(user) -> dict:
    """What the worker does with the cycle the page queued: the task, through Celery's own apply, with its token."""
    token = ActivityState.objects.get(owner=user).cycle_token
    assert token and ActivityState.objects.get(owner=user).last_cycle["status"] == "queued"
    return gardener_cycle.apply(args=[user.pk], kwargs={"token": token}).get()


def test_a_cycle_stopped_early_is_a_warning_and_one_that_failed_an_error(alice, user):
    stopped = {"status": "interrupted", "trigger": "manual", "started_at": timezone.now().isoformat(),
               "stop_reason": "query", "counters": {"edges_pruned": 2}, "notes": []}
    ActivityState.objects.create(owner=user, last_cycle=stopped)
    body = alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert 'message-warning" id="gardener-outcome">The cycle stopped before it finished (a query of yours came in) ' \
           'after 2 changes' in body
    assert "message-success" not in body
    ActivityState.objects.filter(owner=user).update(last_cycle={**stopped, "status": "failed", "stop_reason": "error"})
    body = alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert 'message-error" id="gardener-outcome" role="alert">The cycle failed after 2 changes' in body
    assert ">failed</span>" in body and "message-warning" not in body


def test_a_queued_cycle_that_cannot_start_is_shown_as_failed(alice, bob, user):
    weak = weak_idle_link(user)
    alice.post(reverse("dashboard:cognition-gardener-run"))
    refused = alice.post(reverse("dashboard:cognition-gardener-run"), follow=True).content.decode()
    assert "No cycle ran: A gardener cycle of yours is under way" in refused  # one at a time, queued included
    assert "A cycle is queued" not in bob.get(reverse("dashboard:cognition-gardener")).content.decode()
    run = dream_trigger(actor=user, phase="nrem")  # a dream started before the worker took the cycle
    outcome = run_queued(user)
    assert outcome["status"] == "skipped" and "dream" in outcome["reason"]
    state = ActivityState.objects.get(owner=user)
    assert (state.last_cycle["status"], state.last_cycle["stop_reason"], state.cycle_token) == ("failed", "refused", "")
    body = alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert f"The cycle did not start: A dream of yours is under way (dream_run_id {run.pk})" in body
    assert MemoryLink.objects.filter(pk=weak.pk).exists()
    # The same task delivered twice does nothing the second time: its token is spent.
    assert gardener_cycle.apply(args=[user.pk], kwargs={"token": "spent"}).get()["status"] == "skipped"


def test_a_queued_cycle_no_worker_took_is_shown_as_failed(alice, user):
    alice.post(reverse("dashboard:cognition-gardener-run"))
    ActivityState.objects.filter(owner=user).update(cycle_heartbeat_at=timezone.now() - timedelta(minutes=5))
    body = alice.get(reverse("dashboard:cognition-gardener")).content.decode()
    assert "The cycle you asked for did not start: no worker took it" in body
    assert 'id="gardener-run" disabled' not in body  # it may be asked for again
