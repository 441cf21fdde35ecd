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
from apps.cognition.services.gardener.cycle import gardener_run
from apps.cognition.tasks import gardener_tick
from apps.core.exceptions import PermissionDenied
from apps.memories.models import MemoryLink
from tests.cognition.curation_support import link, nodes
from tests.cognition.gardener_support import age_link

pytestmark = pytest.mark.django_db

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
    ran = api.post(f"{BASE}/run/", {"batch_size": 50}, format="json")
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


def test_rest_bad_input_is_a_400_naming_the_field(api):
    _error(api.post(f"{BASE}/run/", {"batch_size": 0}, format="json"), 400, "batch_size")
    _error(api.post(f"{BASE}/run/", {"batch_size": 201}, format="json"), 400, "batch_size")
    _error(api.post(f"{BASE}/run/", {"batch_size": "many"}, format="json"), 400, "batch_size")
    _error(api.post(f"{BASE}/run/", {"force": True}, format="json"), 400, "force")


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
    ran = alice.post(reverse("dashboard:cognition-gardener-run"), follow=True)
    body = ran.content.decode()
    assert "The cycle completed: 1 change." in body
    assert "1</span> weak idle link pruned" in body and "started by you" in body
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
    assert [str(message) for message in response.context["messages"]] == ["Ran a gardener cycle for 1 activity state."]
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
    assert MemoryLink.objects.filter(pk=weak.pk).exists()


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


def test_a_cycle_stopped_early_is_a_warning_not_a_success(alice, user, monkeypatch):
    from apps.cognition import views
    from apps.cognition.services.gardener.cycle import CycleReport

    stopped = CycleReport(status="interrupted", trigger="manual", started_at="", finished_at="", stop_reason="query",
                          counters={"edges_pruned": 2}, steps_done=["prune"], reversal_hash=None, notes=[],
                          dedupe_since=None)
    monkeypatch.setattr(views, "gardener_run", lambda **_: stopped)
    body = alice.post(reverse("dashboard:cognition-gardener-run"), follow=True).content.decode()
    assert 'message-warning">The cycle stopped before it finished (a query of yours came in) after 2 changes' in body
    assert "message-success" not in body
