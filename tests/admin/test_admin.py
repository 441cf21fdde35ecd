"""The admin: every action calls its service as the curator, tokens are generated and shown once,
changelists stay at a bounded number of queries."""
import re

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from apps.accounts.models import ApiToken, token_digest
from apps.accounts.services import token_authenticate
from apps.cubes.models import Cube, CubeMembership
from apps.memories.models import Memory, MemoryLink, MemoryVector, ModelSwitch

pytestmark = pytest.mark.django_db
MEMORY_CHANGELIST = reverse("admin:memories_memory_changelist")


def run_action(client, action, memories):
    response = client.post(MEMORY_CHANGELIST, {"action": action, "_selected_action": [m.pk for m in memories]},
                           follow=True)
    assert response.redirect_chain[0][1] == 302
    return [str(message) for message in response.context["messages"]]


@pytest.fixture
def carols_memories(staff_user, store):
    return [store(staff_user, f"Curated fact number {i}: the archive lives in room B{i}.") for i in range(3)]


def test_soft_delete_and_restore_actions(admin_client_for_staff, carols_memories):
    messages = run_action(admin_client_for_staff, "soft_delete", carols_memories[:2])
    assert messages == ["Soft-deleted 2 memories."]
    deleted = Memory.objects.filter(deleted_at__isnull=False)
    assert set(deleted.values_list("pk", flat=True)) == {m.pk for m in carols_memories[:2]}
    assert set(deleted.values_list("strength", flat=True)) == {0.0}

    messages = run_action(admin_client_for_staff, "restore", carols_memories)
    assert messages == ["Restored 2 memories.", "1 failed: This memory is not deleted, so there is nothing to restore."]
    assert not Memory.objects.filter(deleted_at__isnull=False).exists()
    assert set(Memory.objects.values_list("strength", flat=True)) == {1.0}


def test_boost_action(admin_client_for_staff, carols_memories):
    messages = run_action(admin_client_for_staff, "boost_importance", carols_memories[:1])
    assert messages == ["Boosted 1 memory."]
    assert Memory.objects.get(pk=carols_memories[0].pk).importance == 0.6
    assert Memory.objects.get(pk=carols_memories[1].pk).importance == 0.5


def test_reembed_action_replaces_the_vectors(admin_client_for_staff, carols_memories):
    memory = carols_memories[0]
    right = MemoryVector.objects.get(memory=memory).embedding
    MemoryVector.objects.filter(memory=memory).update(embedding=[0.0] * (len(right) - 1) + [1.0], tokens=1)
    messages = run_action(admin_client_for_staff, "reembed", [memory])
    assert messages == ["Re-embedded 1 memory."]
    after = MemoryVector.objects.get(memory=memory)
    assert after.embedding == right and after.tokens > 1


def test_curators_reach_every_users_memories(admin_client_for_staff, staff_user, user, store):
    alices = store(user, "Alice's private memory.")
    run_action(admin_client_for_staff, "soft_delete", [alices])
    alices.refresh_from_db()
    assert alices.deleted_at is not None and alices.deleted_by == staff_user
    run_action(admin_client_for_staff, "restore", [alices])
    assert Memory.objects.get(pk=alices.pk).deleted_at is None


def test_staff_without_the_change_permission_cannot_curate(user, store):
    from apps.core.exceptions import PermissionDenied
    from apps.memories.services import memory_delete
    from tests.factories import UserFactory

    clerk = UserFactory(username="clerk", is_staff=True)
    alices = store(user, "Alice's private memory.")
    with pytest.raises(PermissionDenied):
        memory_delete(actor=clerk, memory_id=alices.pk, curator=True)
    assert Memory.objects.get(pk=alices.pk).deleted_at is None


def test_deleted_filter_and_search(admin_client_for_staff, staff_user, carols_memories, store):
    run_action(admin_client_for_staff, "soft_delete", carols_memories[:1])
    live = admin_client_for_staff.get(MEMORY_CHANGELIST, {"state": "live"})
    assert {m.pk for m in live.context["cl"].result_list} == {m.pk for m in carols_memories[1:]}
    deleted = admin_client_for_staff.get(MEMORY_CHANGELIST, {"state": "deleted"})
    assert [m.pk for m in deleted.context["cl"].result_list] == [carols_memories[0].pk]
    found = admin_client_for_staff.get(MEMORY_CHANGELIST, {"q": "room B2"})
    assert [m.pk for m in found.context["cl"].result_list] == [carols_memories[2].pk]
    by_sector = admin_client_for_staff.get(MEMORY_CHANGELIST, {"primary_sector__exact": "episodic"})
    assert list(by_sector.context["cl"].result_list) == []


def test_memory_changelist_queries_do_not_grow_with_rows(admin_client_for_staff, staff_user, user, store,
                                                         django_assert_max_num_queries):
    for i in range(4):
        store(staff_user, f"Row {i} of the changelist.")
        store(user, f"Alice's row {i}.")
    with django_assert_max_num_queries(12) as few:
        response = admin_client_for_staff.get(MEMORY_CHANGELIST)
    assert len(response.context["cl"].result_list) == 8
    for i in range(12):
        store(user, f"Another row {i}.")
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = admin_client_for_staff.get(MEMORY_CHANGELIST)
    assert len(response.context["cl"].result_list) == 20


def test_link_and_token_changelists_query_count_is_bounded(admin_client_for_staff, staff_user, make_token, store,
                                                           django_assert_max_num_queries):
    related = {"session_id": "s", "tags": ["archive"], "category": "facts"}
    for i in range(5):
        store(staff_user, f"The archive in room B{i} keeps the 19{i}0s ledgers.", **related)
        make_token(staff_user, name=f"token {i}")
    assert MemoryLink.objects.count() >= 4
    with django_assert_max_num_queries(10):
        response = admin_client_for_staff.get(reverse("admin:memories_memorylink_changelist"))
    assert response.status_code == 200
    with django_assert_max_num_queries(10):
        response = admin_client_for_staff.get(reverse("admin:accounts_apitoken_changelist"))
    assert len(response.context["cl"].result_list) == 5


def test_memory_change_page_shows_fields_and_links_but_no_vectors(admin_client_for_staff, staff_user, store):
    related = {"session_id": "s", "tags": ["t"], "category": "c"}
    first = store(staff_user, "The heating engineer comes on Tuesday.", **related)
    second = store(staff_user, "The heating engineer needs the boiler cupboard cleared.", **related)
    response = admin_client_for_staff.get(reverse("admin:memories_memory_change", args=[second.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "needs the boiler cupboard cleared" in html
    assert "outgoing links" in html.lower() and first.content[:40] in html
    assert "search_vector" not in html and "embedding" not in html.lower()
    assert not re.search(r"(-?\d\.\d+, ){20}", html), "no vector should be rendered"


def test_memory_delete_page_hard_deletes_through_the_service(admin_client_for_staff, staff_user, user, store):
    memory = store(staff_user, "Delete me for good.")
    url = reverse("admin:memories_memory_delete", args=[memory.pk])
    assert admin_client_for_staff.get(url).status_code == 200
    admin_client_for_staff.post(url, {"post": "yes"})
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryVector.objects.filter(memory_id=memory.pk).exists()

    alices = store(user, "Another user's memory, curated from the admin.")
    admin_client_for_staff.post(reverse("admin:memories_memory_delete", args=[alices.pk]), {"post": "yes"})
    assert not Memory.objects.filter(pk=alices.pk).exists()


def test_token_add_generates_it_and_shows_it_once(admin_client_for_staff, user):
    add_url = reverse("admin:accounts_apitoken_add")
    page = admin_client_for_staff.get(add_url)
    assert page.status_code == 200
    assert "digest" not in page.content.decode()

    response = admin_client_for_staff.post(add_url, {"user": user.pk, "name": "alice's agent", "scopes": ["read"]},
                                           follow=True)
    html = response.content.decode()
    raw = re.search(r"<code>(eng_[\w-]+)</code>", html).group(1)
    token = ApiToken.objects.get(user=user)
    assert token.digest == token_digest(raw) and token.name == "alice's agent" and token.scopes == ["read"]
    assert token_authenticate(raw=raw).user == user
    assert raw not in admin_client_for_staff.get(reverse("admin:accounts_apitoken_changelist")).content.decode()
    change = admin_client_for_staff.get(reverse("admin:accounts_apitoken_change", args=[token.pk])).content.decode()
    assert raw not in change and token.digest not in change


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "agent", "scopes": ["admin"]}, "scopes", "Only staff users may hold the admin scope"),
        ({"name": "agent", "scopes": []}, "scopes", "at least one scope"),
        ({"name": "", "scopes": ["read"]}, "name", "Give the token a name"),
        ({"name": "agent", "scopes": ["read"], "expires_at_0": "2001-01-01", "expires_at_1": "10:00"}, "expires_at",
         "The expiry must be in the future"),
    ],
)
def test_token_add_errors_are_shown_on_their_field(admin_client_for_staff, user, data, field, message):
    response = admin_client_for_staff.post(reverse("admin:accounts_apitoken_add"), {"user": user.pk, **data})
    assert response.status_code == 200
    assert message in response.context["form"].errors[field][0]
    assert message in response.content.decode()
    assert not ApiToken.objects.exists()


def test_revoke_token_action(admin_client_for_staff, user, make_token):
    raw = make_token(user)
    token = ApiToken.objects.get(user=user)
    response = admin_client_for_staff.post(reverse("admin:accounts_apitoken_changelist"),
                                           {"action": "revoke", "_selected_action": [token.pk]})
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Revoked 1 token(s)."]
    token.refresh_from_db()
    assert token.revoked_at is not None and token_authenticate(raw=raw) is None


def test_user_and_cube_pages(admin_client_for_staff, user, other_user):
    cube = Cube.objects.create(id="team", name="Team", owner=user)
    CubeMembership.objects.create(cube=cube, user=other_user, role="writer")
    assert admin_client_for_staff.get(reverse("admin:accounts_user_changelist")).status_code == 200
    assert admin_client_for_staff.get(reverse("admin:accounts_user_change", args=[user.pk])).status_code == 200
    response = admin_client_for_staff.get(reverse("admin:cubes_cube_change", args=["team"]))
    assert response.status_code == 200
    assert "bob" in response.content.decode()
    assert admin_client_for_staff.get(reverse("admin:cubes_cube_changelist")).status_code == 200


def test_model_switches_are_listed_read_only(admin_client_for_staff):
    ModelSwitch.objects.create(model="all-mpnet-base-v2", dimensions=768, status=ModelSwitch.Status.STAGING,
                               total=200, done=50)
    response = admin_client_for_staff.get(reverse("admin:memories_modelswitch_changelist"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "all-mpnet-base-v2" in page and "Embedding with the new model" in page
    assert admin_client_for_staff.get(reverse("admin:memories_modelswitch_add")).status_code == 403
