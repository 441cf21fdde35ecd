"""Every page renders for a logged-in user, and none but the login page for anybody else."""
import pytest
from django.urls import reverse

from apps.memories.models import Memory

pytestmark = pytest.mark.django_db


def test_every_page_but_login_requires_login(client, user, store):
    memory = store(user, "A memory behind the login page.")
    urls = [
        reverse("dashboard:home"), reverse("dashboard:search"), reverse("dashboard:memory-list"),
        reverse("dashboard:memory-create"), reverse("dashboard:memory-detail", args=[memory.pk]),
        reverse("dashboard:memory-edit", args=[memory.pk]), reverse("dashboard:memory-destroy", args=[memory.pk]),
        reverse("dashboard:tokens"), reverse("dashboard:token-create"),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("dashboard:login")), url
    for action in ("memory-boost", "memory-delete", "memory-restore"):
        response = client.post(reverse(f"dashboard:{action}", args=[memory.pk]))
        assert response.status_code == 302 and response["Location"].startswith(reverse("dashboard:login"))
    assert Memory.objects.get(pk=memory.pk).deleted_at is None


def test_login_then_logout_by_post(client, user):
    page = client.get(reverse("dashboard:login"))
    assert page.status_code == 200
    assert b'name="username"' in page.content

    wrong = client.post(reverse("dashboard:login"), {"username": "alice", "password": "wrong"})
    assert wrong.status_code == 200
    assert wrong.context["form"].non_field_errors()

    response = client.post(reverse("dashboard:login"), {"username": "alice", "password": "correct-horse-battery"})
    assert response.status_code == 302 and response["Location"] == reverse("dashboard:home")
    assert client.get(reverse("dashboard:home")).status_code == 200

    assert client.get(reverse("dashboard:logout")).status_code == 405
    response = client.post(reverse("dashboard:logout"))
    assert response["Location"] == reverse("dashboard:login")
    assert client.get(reverse("dashboard:home")).status_code == 302


def test_home_for_a_new_user_explains_how_to_start(alice):
    response = alice.get(reverse("dashboard:home"))
    assert response.status_code == 200
    assert response.context["is_new"] is True
    html = response.content.decode()
    assert "Store your first memory" in html
    assert "http://testserver/mcp/thoughtmcp/" in html
    assert reverse("dashboard:tokens") in html


def test_home_shows_counts_and_the_ten_most_recent(alice, user, store):
    memories = [store(user, f"Note number {i} about the garden shed.") for i in range(11)]
    store(user, "Something I deleted later.")
    alice.post(reverse("dashboard:memory-delete", args=[Memory.objects.get(content__startswith="Something").pk]))

    response = alice.get(reverse("dashboard:home"))
    assert response.context["is_new"] is False
    assert response.context["counts"]["total"] == 11
    assert response.context["counts"]["deleted"] == 1
    assert response.context["cube_count"] == 1
    recent = list(response.context["recent"])
    assert [m.pk for m in recent] == [m.pk for m in reversed(memories[1:])]
    assert "Note number 10" in response.content.decode()
    assert "Store your first memory" not in response.content.decode()


def test_nav_shows_admin_only_to_staff(alice, client_for, staff_user):
    assert reverse("admin:index") not in alice.get(reverse("dashboard:home")).content.decode()
    assert reverse("admin:index") in client_for(staff_user).get(reverse("dashboard:home")).content.decode()


def test_browse_lists_by_cube_and_deleted(alice, user, store):
    live = store(user, "The boiler needs servicing every October.")
    gone = store(user, "The old wifi password was hunter2.")
    alice.post(reverse("dashboard:memory-delete", args=[gone.pk]))

    page = alice.get(reverse("dashboard:memory-list"))
    assert [m.pk for m in page.context["page"].object_list] == [live.pk]

    deleted = alice.get(reverse("dashboard:memory-list"), {"deleted": "1"})
    assert [m.pk for m in deleted.context["page"].object_list] == [gone.pk]
    assert "Deleted memories" in deleted.content.decode()

    by_cube = alice.get(reverse("dashboard:memory-list"), {"cube": live.cube_id})
    assert [m.pk for m in by_cube.context["page"].object_list] == [live.pk]
    assert alice.get(reverse("dashboard:memory-list"), {"cube": "no-such-cube"}).status_code == 404


def test_detail_shows_fields_links_and_neighbours(alice, user, store):
    # Same session, tags and category: the store service links them (see apps/memories/services/linking.py).
    related = {"session_id": "ops-1", "tags": ["infra"], "category": "ops"}
    first = store(user, "Our staging server runs PostgreSQL 16 on Debian.", **related)
    second = store(user, "The staging server's PostgreSQL is backed up nightly to S3.", **related)
    response = alice.get(reverse("dashboard:memory-detail", args=[second.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "backed up nightly" in html
    links = response.context["links"]
    assert links, "two close memories should be linked by the store service"
    neighbour = links[0]["neighbour"]
    assert neighbour.pk == first.pk
    assert "runs PostgreSQL 16 on Debian" in html
    assert links[0]["link"].get_link_type_display() in html
    assert reverse("dashboard:memory-edit", args=[second.pk]) in html
    assert reverse("dashboard:memory-destroy", args=[second.pk]) in html


def test_detail_shows_unlinked_neighbours_by_meaning(alice, user, other_user, store):
    memory = store(user, "Water the tomatoes every other evening", session_id="a")
    store(user, "The quarterly tax return is due in April", session_id="b")
    store(other_user, "Water the tomatoes every evening")
    response = alice.get(reverse("dashboard:memory-detail", args=[memory.pk]))
    neighbours = response.context["neighbours"]
    linked = {entry["neighbour"].pk for entry in response.context["links"]}
    assert [entry["memory"].content for entry in neighbours] == ["The quarterly tax return is due in April"]
    assert not linked & {entry["memory"].pk for entry in neighbours}
    assert "Neighbours" in response.content.decode()


def test_detail_of_a_deleted_memory_offers_restore_not_edit(alice, user, store):
    memory = store(user, "A memory that will be soft deleted.")
    alice.post(reverse("dashboard:memory-delete", args=[memory.pk]))
    html = alice.get(reverse("dashboard:memory-detail", args=[memory.pk])).content.decode()
    assert reverse("dashboard:memory-restore", args=[memory.pk]) in html
    assert reverse("dashboard:memory-edit", args=[memory.pk]) not in html
    assert alice.get(reverse("dashboard:memory-edit", args=[memory.pk])).status_code == 404


def test_static_assets_are_served_locally(alice):
    html = alice.get(reverse("dashboard:home")).content.decode()
    assert "/static/css/engram.css" in html and "/static/js/engram.js" in html
    assert "http://" not in html.split("<body")[0].replace("http://testserver", "")
