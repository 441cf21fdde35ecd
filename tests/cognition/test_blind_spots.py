"""Blind spots (what a dream's REM found thin or disconnected) for people: resolving one through the service, REST
(/api/v1/cognition/blind-spots/), the Cognition page and the admin; another user's are never listed nor resolvable,
bad input names its field, and the lists run as many queries at 50 rows as at 1."""
import uuid

import pytest
from django.urls import reverse

from apps.cognition.models import BlindSpot
from apps.cognition.selectors.blind_spots import blind_spot_rows, blind_spots_list
from apps.cognition.services.blind_spots import blind_spot_resolve
from apps.core.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from tests.cognition.curation_support import nodes
from tests.query_counts import flat

pytestmark = pytest.mark.django_db

BASE = "/api/v1/cognition"


def spot(owner, walk, hits=(), kind=BlindSpot.Kind.THIN, query="lighthouse lamp maintenance schedule"):
    return BlindSpot.objects.create(owner=owner, kind=kind, query=query, node_ids=[node.pk for node in walk],
                                    best_score=hits[0][1] if hits else 0.0,
                                    hits=[{"node_id": str(node.pk), "score": score, "dense": score}
                                          for node, score in hits])


@pytest.fixture
def graph(user):
    return nodes(user, "The lighthouse lamp is serviced in spring.", "Keepers log the lamp's hours nightly.",
                 "The harbour master schedules the ferries.")


def _error(response, status, field):
    assert response.status_code == status, response.content
    details = response.json()["error"]["details"]
    assert details.get("field") == field if "field" in details else field in details, response.content


def test_resolving_takes_it_off_the_open_list_once(user, graph):
    found = spot(user, graph[:2], [(graph[2], 0.21)])
    assert list(blind_spots_list(actor=user)) == [found]
    resolved = blind_spot_resolve(actor=user, blind_spot_id=found.pk)
    assert resolved.resolved_at is not None
    assert list(blind_spots_list(actor=user)) == []
    assert list(blind_spots_list(actor=user, status="resolved")) == [found]
    with pytest.raises(Conflict):
        blind_spot_resolve(actor=user, blind_spot_id=found.pk)
    with pytest.raises(InvalidInput) as error:
        blind_spots_list(actor=user, status="closed")
    assert error.value.extra["field"] == "status"


def test_another_users_blind_spot_is_not_found_and_not_listed(user, other_user, graph):
    found = spot(user, graph[:2])
    assert list(blind_spots_list(actor=other_user, status="all")) == []
    for wrong in (found.pk, uuid.uuid4(), "not-a-uuid"):
        with pytest.raises(NotFound) as error:
            blind_spot_resolve(actor=other_user, blind_spot_id=wrong)
        assert error.value.extra["field"] == "blind_spot_id"
    assert BlindSpot.objects.get(pk=found.pk).resolved_at is None


def test_rows_name_the_walk_and_hits_only_as_far_as_the_reader_may_read(user, other_user, graph):
    found = spot(user, graph[:2], [(graph[2], 0.3)])
    [row] = blind_spot_rows(actor=user, spots=[found])
    assert row.region.excerpt.startswith("Keepers log") and row.hits[0].node.excerpt.startswith("The harbour")
    [theirs] = blind_spot_rows(actor=other_user, spots=[found])
    assert theirs.region.excerpt is None and theirs.hits[0].node.excerpt is None


# --- REST ----------------------------------------------------------------------------------------------------------

def test_rest_lists_and_resolves(api, bob_api, user, graph):
    found = spot(user, graph[:2], [(graph[2], 0.21)], kind=BlindSpot.Kind.DISCONNECTED)
    listed = api.get(f"{BASE}/blind-spots/")
    assert listed.status_code == 200, listed.content
    [row] = listed.json()["results"]
    assert row["id"] == str(found.pk) and row["kind"] == "disconnected" and row["resolved_at"] is None
    assert row["node_ids"] == [str(node.pk) for node in graph[:2]] and row["hits"][0]["node_id"] == str(graph[2].pk)
    assert bob_api.get(f"{BASE}/blind-spots/?status=all").json()["results"] == []
    _error(bob_api.post(f"{BASE}/blind-spots/{found.pk}/resolve/", format="json"), 404, "blind_spot_id")
    resolved = api.post(f"{BASE}/blind-spots/{found.pk}/resolve/", format="json")
    assert resolved.status_code == 200 and resolved.json()["resolved_at"], resolved.content
    assert api.get(f"{BASE}/blind-spots/").json()["results"] == []
    assert len(api.get(f"{BASE}/blind-spots/?status=resolved").json()["results"]) == 1
    _error(api.post(f"{BASE}/blind-spots/{found.pk}/resolve/", format="json"), 409, "blind_spot_id")
    _error(api.post(f"{BASE}/blind-spots/not-a-uuid/resolve/", format="json"), 404, "blind_spot_id")
    _error(api.get(f"{BASE}/blind-spots/?status=closed"), 400, "status")
    _error(api.get(f"{BASE}/blind-spots/?limit=0"), 400, "limit")


def test_rest_list_queries_are_flat(api, user, graph, django_assert_max_num_queries):
    spot(user, graph[:2])
    flat(lambda: api.get(f"{BASE}/blind-spots/?limit=50"),
         lambda start, count: [spot(user, graph[:2]) for _ in range(count)],
         lambda response: len(response.json()["results"]), django_assert_max_num_queries)


# --- the page ------------------------------------------------------------------------------------------------------

def test_the_page_lists_explains_and_resolves(alice, bob, user, graph):
    empty = alice.get(reverse("dashboard:cognition-blind-spots")).content.decode()
    assert "No open blind spots" in empty and "trigger_dream" in empty
    found = spot(user, graph[:2], [(graph[2], 0.21)])
    body = alice.get(reverse("dashboard:cognition-blind-spots")).content.decode()
    assert "Nothing answers it well" in body and "lighthouse lamp maintenance schedule" in body
    for node in graph:
        assert reverse("dashboard:memory-detail", args=[node.pk]) in body
    assert "No open blind spots" in bob.get(reverse("dashboard:cognition-blind-spots")).content.decode()
    url = reverse("dashboard:cognition-blind-spot-resolve", args=[found.pk])
    assert bob.post(url).status_code == 404
    done = alice.post(url, follow=True).content.decode()
    assert "Blind spot resolved" in done and "No open blind spots" in done
    again = alice.post(url, follow=True).content.decode()
    assert "resolved already" in again
    assert "lighthouse lamp" in alice.get(reverse("dashboard:cognition-blind-spots") + "?show=resolved").content.decode()
    assert alice.get(url).status_code == 405


def test_the_page_needs_a_login(client):
    response = client.get(reverse("dashboard:cognition-blind-spots"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_the_page_queries_are_flat(alice, user, graph, django_assert_max_num_queries):
    spot(user, graph[:2], [(graph[2], 0.2)])
    flat(lambda: alice.get(reverse("dashboard:cognition-blind-spots")),
         lambda start, count: [spot(user, graph[:2], [(graph[2], 0.2)]) for _ in range(count)],
         lambda response: response.content.decode().count('id="blind-spot-'), django_assert_max_num_queries,
         shown_at_fifty=25)


# --- admin ---------------------------------------------------------------------------------------------------------

def test_the_admin_resolves_through_the_service(client, staff_user, user, other_user, graph):
    found = spot(user, graph[:2])
    changelist = reverse("admin:cognition_blindspot_changelist")
    client.force_login(staff_user)
    assert client.get(changelist).status_code == 200
    assert client.get(reverse("admin:cognition_blindspot_change", args=[found.pk])).status_code == 200
    response = client.post(changelist, {"action": "resolve", "_selected_action": [found.pk]}, follow=True)
    assert [str(message) for message in response.context["messages"]] == ["Resolved 1 blind spot."]
    assert BlindSpot.objects.get(pk=found.pk).resolved_at is not None
    other_user.is_staff = True
    other_user.save()
    with pytest.raises(PermissionDenied):
        blind_spot_resolve(actor=other_user, blind_spot_id=spot(user, graph[:1]).pk, curator=True)


def test_the_benchmark_run_admin_is_read_only(client, staff_user):
    client.force_login(staff_user)
    assert client.get(reverse("admin:cognition_benchmarkrun_changelist")).status_code == 200
    assert client.get(reverse("admin:cognition_benchmarkrun_add")).status_code == 403
