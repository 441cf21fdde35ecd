"""The Django admin for cubes and memberships: lists, filters, search, the inline, and deleting cubes that
hold memories."""
import pytest
from django.utils import timezone

from apps.cubes.models import Cube, CubeMembership
from apps.memories.models import CubeLexeme, Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(staff_user, client_for):
    return client_for(staff_user)


@pytest.fixture
def cubes(user, other_user):
    team = Cube.objects.create(id="team", name="Team notes", owner=user)
    Cube.objects.create(id="old", name="Old", owner=user, deleted_at=timezone.now())
    Cube.objects.create(id="bobs", name="Bob's", owner=other_user)
    CubeMembership.objects.create(cube=team, user=other_user, role="writer")
    return team


def listed(response) -> list[str]:
    assert response.status_code == 200
    return sorted(cube.pk for cube in response.context["cl"].result_list)


@pytest.mark.parametrize(("query", "expected"), [
    ("", ["bobs", "old", "team"]),
    ("?unregistered=yes", ["old"]),
    ("?unregistered=no", ["bobs", "team"]),
    ("?q=bob", ["bobs"]),  # by owner: the membership of bob in "team" is not a match
    ("?q=notes", ["team"]),
    ("?is_personal__exact=1", []),
])
def test_cube_changelist_filters_and_search(curator, cubes, query, expected):
    assert listed(curator.get(f"/admin/cubes/cube/{query}")) == expected


def test_cube_changelist_filters_by_owner(curator, cubes, user):
    assert listed(curator.get(f"/admin/cubes/cube/?owner__id__exact={user.pk}")) == ["old", "team"]


def test_change_page_shows_memberships_inline(curator, cubes):
    response = curator.get("/admin/cubes/cube/team/change/")
    assert response.status_code == 200
    assert "bob" in response.content.decode() and "memberships" in response.content.decode()


def test_membership_admin_lists_and_searches(curator, cubes):
    response = curator.get("/admin/cubes/cubemembership/?q=team")
    assert response.status_code == 200
    assert [(m.cube_id, m.user.username) for m in response.context["cl"].result_list] == [("team", "bob")]
    assert curator.get("/admin/cubes/cubemembership/?role__exact=reader").context["cl"].result_count == 0


def test_deleting_cubes_with_memories_from_the_admin(curator, cubes, user, store):
    memory = store(user, "A note the curator deletes with its cube.", cube_id="team")
    assert CubeLexeme.objects.filter(cube_id="team").exists()
    response = curator.post("/admin/cubes/cube/", {"action": "delete_selected", "_selected_action": ["team", "old"],
                                                   "post": "yes"})
    assert response.status_code == 302
    assert not Cube.objects.filter(pk__in=["team", "old"]).exists()
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not CubeLexeme.objects.filter(cube_id="team").exists()
    assert Cube.objects.filter(pk="bobs").exists()


def test_deleting_one_cube_from_its_page(curator, cubes, user, store):
    store(user, "Another note.", cube_id="team")
    response = curator.post("/admin/cubes/cube/team/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Cube.objects.filter(pk="team").exists()


def test_non_staff_cannot_reach_the_cube_admin(alice, cubes):
    assert alice.get("/admin/cubes/cube/").status_code == 302
