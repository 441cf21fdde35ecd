"""The cube pages (/cubes/) through Django's test client: the list and each cube's page render for the people
who may read the cube and are the 404 page for anybody else; the forms register, edit and share through the
services and show the services' errors next to their field; a reader sees no controls and a reader's POST is
refused with a message; unregister, restore and delete work, and the list pages' queries are bounded."""
import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from apps.cubes.models import Cube, CubeMembership
from apps.cubes.services import cube_ensure_personal, cube_register, cube_share, cube_unregister
from apps.memories.models import Memory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def url(name, *args):
    return reverse(f"cubes:{name}", args=args)


def flashed(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


@pytest.fixture
def garden(user, store):
    """alice's cube "garden" with two memories."""
    cube = cube_register(actor=user, cube_id="garden", name="Garden notes", description="What grows where",
                         path="/srv/garden")
    store(user, "Tomatoes need full sun and deep watering.", cube_id=cube.pk)
    store(user, "The roses were pruned in March.", cube_id=cube.pk)
    return cube


@pytest.fixture
def reader(user, garden, other_user):
    """bob reads alice's garden."""
    cube_share(actor=user, cube_id=garden.pk, user="bob", role="reader")
    return other_user


# Login and isolation

def test_pages_require_login(client, garden):
    for address in (url("cube-list"), url("cube-detail", garden.pk), url("cube-edit", garden.pk)):
        response = client.get(address)
        assert response.status_code == 302 and response["Location"].startswith(reverse("dashboard:login"))


def test_a_strangers_cube_is_the_404_page_for_every_page_and_action(bob, garden):
    for address in (url("cube-detail", garden.pk), url("cube-edit", garden.pk), url("cube-unregister", garden.pk),
                    url("cube-delete", garden.pk)):
        assert bob.get(address).status_code == 404, address
    for address in (url("cube-share", garden.pk), url("cube-revoke", garden.pk), url("cube-edit", garden.pk),
                    url("cube-unregister", garden.pk), url("cube-restore", garden.pk), url("cube-delete", garden.pk)):
        assert bob.post(address, {"user": "bob", "role": "admin", "name": "mine"}).status_code == 404, address
    garden.refresh_from_db()
    assert garden.name == "Garden notes" and garden.deleted_at is None
    assert not CubeMembership.objects.filter(cube=garden).exists()
    assert "Garden notes" not in bob.get(url("cube-list")).content.decode()


def test_unknown_and_malformed_cube_ids_are_the_404_page(alice):
    assert alice.get(url("cube-detail", "nope")).status_code == 404
    assert alice.get(url("cube-detail", "bad id!")).status_code == 404


def test_an_unregistered_cube_is_its_owners_page_alone_and_the_404_page_for_its_members(alice, bob, reader, garden,
                                                                                         user):
    cube_unregister(actor=user, cube_id=garden.pk)
    page = alice.get(url("cube-detail", garden.pk)).content.decode()
    assert "This cube was unregistered on" in page and f'action="{url("cube-restore", garden.pk)}"' in page
    assert bob.get(url("cube-detail", garden.pk)).status_code == 404
    assert bob.post(url("cube-restore", garden.pk)).status_code == 404
    assert Cube.objects.get(pk=garden.pk).deleted_at is not None


# The list

def test_list_shows_name_id_owner_role_and_memory_count(alice, bob, reader, garden, user):
    response = alice.get(url("cube-list"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Garden notes" in html and "<code>garden</code>" in html
    assert f'href="{reverse("dashboard:memory-list")}?cube=garden"' in html
    rows = {cube.pk: cube for cube in response.context["cubes"]}
    assert rows["garden"].role == "owner" and rows["garden"].memory_count == 2

    shared = bob.get(url("cube-list"))
    row = {cube.pk: cube for cube in shared.context["cubes"]}["garden"]
    assert row.role == "reader" and row.memory_count == 2
    assert "alice" in shared.content.decode()


def test_list_queries_do_not_grow_with_cubes(alice, user, other_user, django_assert_max_num_queries):
    for index in range(6):
        cube_register(actor=user, cube_id=f"cube-{index}")
        cube_register(actor=other_user, cube_id=f"bobs-{index}")
        cube_share(actor=other_user, cube_id=f"bobs-{index}", user="alice", role="writer")
    # Session, user, and the cubes with their owners, roles and memory counts.
    with django_assert_max_num_queries(3):
        response = alice.get(url("cube-list"))
    assert len(response.context["cubes"]) == 12


def test_new_cube_form_registers_and_shows_field_errors(alice, user, garden):
    response = alice.post(url("cube-list"), {"cube_id": "recipes", "name": "Recipes", "description": "Cooking",
                                             "path": "/data/recipes"})
    assert response.status_code == 302 and response["Location"] == url("cube-detail", "recipes")
    cube = Cube.objects.get(pk="recipes")
    assert (cube.owner, cube.name, cube.description, cube.path) == (user, "Recipes", "Cooking", "/data/recipes")

    unnamed = alice.post(url("cube-list"), {"cube_id": "unnamed"})
    assert unnamed.status_code == 302 and Cube.objects.get(pk="unnamed").name == "unnamed"

    bad = alice.post(url("cube-list"), {"cube_id": "bad id!", "name": "Bad"})
    assert bad.status_code == 200
    assert "may hold only letters, digits" in bad.context["form"].errors["cube_id"][0]
    assert 'id="id_cube_id_error"' in bad.content.decode()

    taken = alice.post(url("cube-list"), {"cube_id": "garden"})
    assert "already exists" in taken.context["form"].errors["cube_id"][0]

    long_name = alice.post(url("cube-list"), {"cube_id": "long", "name": "x" * 201})
    assert "the limit is 200" in long_name.context["form"].errors["name"][0]
    assert not Cube.objects.filter(pk__in=["bad id!", "long"]).exists()


# The cube's page

def test_cube_page_shows_statistics_members_and_links(alice, reader, garden):
    response = alice.get(url("cube-detail", garden.pk))
    assert response.status_code == 200
    html = response.content.decode()
    stats = response.context["stats"]
    assert stats["total_memories"] == 2 and sum(stats["memories_by_kind"].values()) == 2
    assert stats["total_size_bytes"] > 0
    assert "What grows where" in html and "/srv/garden" in html
    assert f'href="{reverse("dashboard:memory-list")}?cube=garden"' in html
    assert f'href="{reverse("dashboard:graph")}?cube=garden"' in html
    assert [membership.user.username for membership in response.context["members"]] == ["bob"]
    assert 'id="share-form"' in html and "Revoke bob" in html
    assert url("cube-delete", garden.pk) in html and url("cube-unregister", garden.pk) in html


def test_cube_page_queries_are_bounded(alice, user, garden, store, django_assert_max_num_queries):
    for index in range(5):
        member = UserFactory(username=f"member{index}")
        cube_share(actor=user, cube_id=garden.pk, user=member.username, role="writer")
        store(user, f"Bed {index} gets compost in autumn.", cube_id=garden.pk)
    # Session, user, the cube with role and count, the statistics (lookup and aggregate), the members
    # (lookup and list).
    with django_assert_max_num_queries(8):
        response = alice.get(url("cube-detail", garden.pk))
    assert len(response.context["members"]) == 5


def test_a_reader_sees_no_controls_and_their_posts_are_refused_with_a_message(bob, reader, garden):
    response = bob.get(url("cube-detail", garden.pk))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="share-form"' not in html and "Revoke" not in html
    assert url("cube-delete", garden.pk) not in html and url("cube-edit", garden.pk) not in html

    for address, data in ((url("cube-share", garden.pk), {"user": "carol", "role": "admin"}),
                          (url("cube-revoke", garden.pk), {"user": "bob"}),
                          (url("cube-edit", garden.pk), {"name": "Bob's now"}),
                          (url("cube-unregister", garden.pk), {}),
                          (url("cube-delete", garden.pk), {})):
        refused = bob.post(address, data)
        assert refused.status_code == 302 and refused["Location"] == url("cube-detail", garden.pk), address
        assert any("You may read cube 'garden' but not" in text for text in flashed(refused)), address
    garden.refresh_from_db()
    assert garden.name == "Garden notes" and garden.deleted_at is None
    assert CubeMembership.objects.get(cube=garden).role == "reader"
    assert Memory.objects.filter(cube=garden).count() == 2


def test_an_admin_member_may_share_and_edit_but_not_delete(bob, reader, garden, user):
    cube_share(actor=user, cube_id=garden.pk, user="bob", role="admin")
    html = bob.get(url("cube-detail", garden.pk)).content.decode()
    assert 'id="share-form"' in html and url("cube-edit", garden.pk) in html
    assert url("cube-delete", garden.pk) not in html
    assert bob.get(url("cube-delete", garden.pk)).status_code == 302
    assert Cube.objects.filter(pk=garden.pk, deleted_at__isnull=True).exists()


# Sharing

def test_share_and_revoke(alice, user, garden, other_user):
    response = alice.post(url("cube-share", garden.pk), {"user": "bob", "role": "writer"})
    assert response.status_code == 302 and response["Location"] == url("cube-detail", garden.pk)
    assert "Cube shared with bob as writer." in flashed(response)
    assert CubeMembership.objects.get(cube=garden, user=other_user).role == "writer"

    alice.post(url("cube-share", garden.pk), {"user": "bob", "role": "reader"})
    assert CubeMembership.objects.get(cube=garden, user=other_user).role == "reader"

    revoked = alice.post(url("cube-revoke", garden.pk), {"user": "bob"})
    assert revoked.status_code == 302 and "bob no longer has access to this cube." in flashed(revoked)
    assert not CubeMembership.objects.filter(cube=garden).exists()

    again = alice.post(url("cube-revoke", garden.pk), {"user": "bob"})
    assert any("is not a member" in text for text in flashed(again))


def test_share_form_errors_go_next_to_their_field(alice, user, garden):
    unknown = alice.post(url("cube-share", garden.pk), {"user": "zed", "role": "reader"})
    assert unknown.status_code == 200
    assert unknown.context["share_form"].errors["user"] == ["User 'zed' not found."]
    assert 'id="id_user_error"' in unknown.content.decode()

    yourself = alice.post(url("cube-share", garden.pk), {"user": "alice", "role": "reader"})
    assert "cannot share a cube with yourself" in yourself.context["share_form"].errors["user"][0]

    bad_role = alice.post(url("cube-share", garden.pk), {"user": "bob", "role": "owner"})
    assert "role" in bad_role.context["share_form"].errors
    assert not CubeMembership.objects.filter(cube=garden).exists()


def test_share_and_revoke_are_post_only(alice, garden):
    assert alice.get(url("cube-share", garden.pk)).status_code == 405
    assert alice.get(url("cube-revoke", garden.pk)).status_code == 405
    assert alice.get(url("cube-restore", garden.pk)).status_code == 405


# Editing

def test_edit_renames_and_shows_field_errors(alice, garden):
    form = alice.get(url("cube-edit", garden.pk))
    assert form.status_code == 200 and form.context["form"]["name"].value() == "Garden notes"

    saved = alice.post(url("cube-edit", garden.pk), {"name": "Vegetable garden", "description": "Beds",
                                                     "path": ""})
    assert saved.status_code == 302
    garden.refresh_from_db()
    assert (garden.name, garden.description, garden.path) == ("Vegetable garden", "Beds", "")

    empty = alice.post(url("cube-edit", garden.pk), {"name": "  ", "description": ""})
    assert "cannot be empty" in empty.context["form"].errors["name"][0]


# Unregister, restore, delete

def test_unregister_asks_then_hides_the_cube_and_restore_brings_it_back(alice, bob, reader, user, garden):
    confirm = alice.get(url("cube-unregister", garden.pk))
    assert confirm.status_code == 200 and "hidden from everyone" in confirm.content.decode()
    assert Cube.objects.get(pk=garden.pk).deleted_at is None

    response = alice.post(url("cube-unregister", garden.pk))
    assert response.status_code == 302 and response["Location"] == url("cube-list")
    assert Cube.objects.get(pk=garden.pk).deleted_at is not None
    assert "garden" not in {cube.pk for cube in alice.get(url("cube-list")).context["cubes"]}

    listing = alice.get(url("cube-list"), {"unregistered": "1"})
    assert [cube.pk for cube in listing.context["unregistered"]] == ["garden"]
    assert url("cube-restore", garden.pk) in listing.content.decode()
    assert list(bob.get(url("cube-list"), {"unregistered": "1"}).context["unregistered"]) == []

    restored = alice.post(url("cube-restore", garden.pk))
    assert restored.status_code == 302 and restored["Location"] == url("cube-detail", garden.pk)
    assert Cube.objects.get(pk=garden.pk).deleted_at is None
    assert bob.get(url("cube-detail", garden.pk)).status_code == 200


def test_delete_asks_saying_the_memories_go_too_then_deletes_for_good(alice, garden):
    confirm = alice.get(url("cube-delete", garden.pk))
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "its 2 memories" in html and "cannot be undone" in html
    assert Cube.objects.filter(pk=garden.pk).exists()

    response = alice.post(url("cube-delete", garden.pk))
    assert response.status_code == 302 and response["Location"] == url("cube-list")
    assert not Cube.objects.filter(pk=garden.pk).exists()
    assert not Memory.objects.filter(cube_id=garden.pk).exists()


def test_an_unregistered_cube_can_be_deleted_for_good_from_the_list(alice, user, garden):
    cube_unregister(actor=user, cube_id=garden.pk)
    confirm = alice.get(url("cube-delete", garden.pk))
    assert confirm.status_code == 200 and "all its memories" in confirm.content.decode()
    alice.post(url("cube-delete", garden.pk))
    assert not Cube.objects.filter(pk=garden.pk).exists()


def test_the_personal_cube_cannot_be_unregistered_nor_deleted(alice, user):
    personal = cube_ensure_personal(actor=user)
    html = alice.get(url("cube-detail", personal.pk)).content.decode()
    assert "This is your personal cube" in html
    assert url("cube-delete", personal.pk) not in html
    refused = alice.post(url("cube-delete", personal.pk))
    assert refused.status_code == 302 and any("personal cube" in text for text in flashed(refused))
    assert Cube.objects.filter(pk=personal.pk, deleted_at__isnull=True).exists()
