"""The graph page's curation endpoints: boost, link, unlink. They call the services (curation.py,
lifecycle.py), publish after commit, name the field at fault, refuse other users' memories, work with
the page's session + CSRF token, and take a bounded number of queries."""
import pytest
from django.test import Client

from apps.cubes.models import CubeMembership
from apps.cubes.services import cube_ensure_personal
from apps.graph.models import GraphEvent
from apps.memories.models import MemoryLink
from apps.memories.services import memory_delete
from apps.memories.services.curation import memory_link, memory_unlink

pytestmark = pytest.mark.django_db
LINKS = "/api/v1/graph/links/"


def boost_url(memory_id) -> str:
    return f"/api/v1/graph/memories/{memory_id}/boost/"


def unlink_url(source, target) -> str:
    return f"/api/v1/graph/links/{source}/{target}/"


@pytest.fixture
def pair(user, store):
    """Two of alice's memories with no link between them."""
    a = store(user, "The backups run at 02:00 from the cron host.")
    b = store(user, "Quarterly tax filing is due at the end of April.")
    MemoryLink.objects.filter(source__in=[a, b], target__in=[a, b]).delete()
    return a, b


@pytest.fixture
def bobs(other_user, store):
    return store(other_user, "Bob's diary: the spare key is under the flowerpot.")


def test_boost_raises_importance_and_publishes_after_commit(api, pair, django_capture_on_commit_callbacks):
    memory = pair[0]
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(boost_url(memory.pk), {"amount": 0.25}, format="json")
    assert response.status_code == 200
    assert (response.json()["importance"], response.json()["salience"]) == (0.75, 0.625)
    event = GraphEvent.objects.latest("id")
    assert event.kind == "memory.boosted" and event.payload["node"]["importance"] == 0.75


def test_boost_defaults_to_a_tenth_and_names_a_bad_field(api, pair):
    assert api.post(boost_url(pair[0].pk), {}, format="json").json()["importance"] == 0.6
    for body, field in (({"amount": 2}, "amount"), ({"amount": "0.1"}, "amount"), ({"amount": True}, "amount"),
                        ({"amont": 0.1}, "amont")):
        response = api.post(boost_url(pair[0].pk), body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "invalid_input"
        assert field in response.json()["error"]["details"], body


def test_link_creates_then_updates_and_publishes_relinked(api, pair, django_capture_on_commit_callbacks):
    a, b = pair
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(LINKS, {"source": str(a.pk), "target": str(b.pk), "type": "causal"}, format="json")
    assert response.status_code == 201
    assert response.json() == {"source": str(a.pk), "target": str(b.pk), "type": "causal", "weight": 0.8,
                               "created": True}
    event = GraphEvent.objects.latest("id")
    assert event.kind == "memory.relinked" and event.payload["id"] == str(a.pk)
    assert {"source": str(a.pk), "target": str(b.pk), "type": "causal", "weight": 0.8} in event.payload["outgoing_edges"]
    again = api.post(LINKS, {"source": str(a.pk), "target": str(b.pk), "type": "temporal", "weight": 0.3},
                     format="json")
    assert again.status_code == 200 and again.json()["created"] is False
    assert MemoryLink.objects.filter(source=a, target=b).values_list("link_type", "weight").get() == ("temporal", 0.3)


def test_unlink_removes_both_directions_and_publishes_for_each_source(api, pair, django_capture_on_commit_callbacks):
    a, b = pair
    MemoryLink.objects.create(source=a, target=b)
    MemoryLink.objects.create(source=b, target=a)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete(unlink_url(b.pk, a.pk))
    assert response.status_code == 200 and response.json() == {"removed": 2}
    assert not MemoryLink.objects.filter(source__in=pair, target__in=pair).exists()
    events = list(GraphEvent.objects.order_by("-id")[:2])
    assert {event.payload["id"] for event in events} == {str(a.pk), str(b.pk)}
    assert all(event.payload["outgoing_edges"] == [] for event in events)
    missing = api.delete(unlink_url(a.pk, b.pk))
    assert missing.status_code == 404 and missing.json()["error"]["details"]["field"] == "target"


@pytest.mark.parametrize("body, field", [
    ({"target": "00000000-0000-0000-0000-000000000001"}, "source"),
    ({"source": "not-a-uuid", "target": "00000000-0000-0000-0000-000000000001"}, "source"),
    ({"source": "SAME", "target": "SAME"}, "target"),
    ({"source": "A", "target": "B", "type": "friendly"}, "type"),
    ({"source": "A", "target": "B", "weight": 1.5}, "weight"),
    ({"source": "A", "target": "B", "weight": "0.5"}, "weight"),
    ({"source": "A", "target": "B", "colour": "red"}, "colour"),
])
def test_link_names_the_field_at_fault(api, pair, body, field):
    ids = {"A": str(pair[0].pk), "B": str(pair[1].pk), "SAME": str(pair[0].pk)}
    body = {key: ids.get(value, value) for key, value in body.items()}
    response = api.post(LINKS, body, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert field in error["details"] or error["details"].get("field") == field, error
    assert not MemoryLink.objects.filter(source__in=pair, target__in=pair).exists()


def test_a_deleted_memory_cannot_be_linked(api, user, pair):
    memory_delete(actor=user, memory_id=pair[1].pk)
    response = api.post(LINKS, {"source": str(pair[0].pk), "target": str(pair[1].pk)}, format="json")
    assert response.status_code == 404 and response.json()["error"]["details"]["field"] == "target"


def test_bob_cannot_boost_link_or_unlink_alices_memories(api_client_for, other_user, pair, bobs):
    bob = api_client_for(other_user)
    a, b = pair
    before = GraphEvent.objects.count()
    response = bob.post(boost_url(a.pk), {}, format="json")
    assert response.status_code == 404 and "backups" not in response.content.decode()
    assert bob.post(LINKS, {"source": str(bobs.pk), "target": str(a.pk)}, format="json").json()["error"][
        "details"]["field"] == "target"
    assert bob.post(LINKS, {"source": str(a.pk), "target": str(bobs.pk)}, format="json").status_code == 404
    MemoryLink.objects.create(source=a, target=b)
    assert bob.delete(unlink_url(a.pk, b.pk)).status_code == 404
    a.refresh_from_db()
    assert a.importance == 0.5 and MemoryLink.objects.filter(source=a, target=b).exists()
    assert not MemoryLink.objects.filter(source=bobs).exclude(target__owner=other_user).exists()
    assert GraphEvent.objects.count() == before


def test_a_reader_of_a_shared_cube_may_not_curate_it(api_client_for, user, other_user, pair):
    CubeMembership.objects.create(cube=cube_ensure_personal(actor=user), user=other_user, role="reader")
    bob = api_client_for(other_user)
    response = bob.post(boost_url(pair[0].pk), {}, format="json")
    assert response.status_code == 403 and response.json()["error"]["code"] == "permission_denied"
    response = bob.post(LINKS, {"source": str(pair[0].pk), "target": str(pair[1].pk)}, format="json")
    assert response.status_code == 403 and response.json()["error"]["details"]["field"] == "source"


def test_a_read_only_token_cannot_curate(api_client_for, user, pair):
    reader = api_client_for(user, scopes=("read",))
    assert reader.post(boost_url(pair[0].pk), {}, format="json").status_code == 403
    assert reader.post(LINKS, {"source": str(pair[0].pk), "target": str(pair[1].pk)}, format="json").status_code == 403


def test_the_page_session_needs_its_csrf_token(user, pair):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    refused = browser.post(boost_url(pair[0].pk), "{}", content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]["message"]
    page = browser.get("/graph/")
    token = page.cookies["csrftoken"].value
    allowed = browser.post(boost_url(pair[0].pk), "{}", content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert allowed.status_code == 200 and allowed.json()["importance"] == 0.6


def test_curation_takes_a_bounded_number_of_queries(api, pair, django_assert_max_num_queries):
    a, b = pair
    # Token auth, the memory and its cube's write check, the update and its lineage record (the live event is
    # stored after commit).
    with django_assert_max_num_queries(8):
        assert api.post(boost_url(a.pk), {}, format="json").status_code == 200
    with django_assert_max_num_queries(15):
        assert api.post(LINKS, {"source": str(a.pk), "target": str(b.pk)}, format="json").status_code == 201
    with django_assert_max_num_queries(11):
        assert api.delete(unlink_url(a.pk, b.pk)).status_code == 200


def test_the_services_refuse_a_self_link_and_an_unknown_type(user, pair):
    from apps.core.exceptions import InvalidInput

    with pytest.raises(InvalidInput) as self_link:
        memory_link(actor=user, source_id=pair[0].pk, target_id=str(pair[0].pk))
    assert self_link.value.field == "target_id"
    with pytest.raises(InvalidInput) as bad_type:
        memory_link(actor=user, source_id=pair[0].pk, target_id=pair[1].pk, link_type="friendly")
    assert bad_type.value.field == "link_type"
    assert memory_link(actor=user, source_id=pair[0].pk, target_id=pair[1].pk).created
    assert memory_unlink(actor=user, source_id=pair[1].pk, target_id=pair[0].pk) == 1
