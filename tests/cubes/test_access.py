import pytest

from apps.core.exceptions import NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.selectors import cube_get_readable, cube_get_writable, cube_list
from apps.cubes.services import cube_ensure_personal
from tests.factories import UserFactory


def test_every_user_gets_one_personal_cube_on_first_use(user):
    cube = cube_ensure_personal(actor=user)
    assert cube.is_personal and cube.owner == user
    assert cube_ensure_personal(actor=user) == cube
    assert Cube.objects.filter(owner=user).count() == 1


def test_personal_cube_ids_are_valid_slugs_for_any_username(db):
    user = UserFactory(username="dana.o'neil+work@example.com")
    cube = cube_ensure_personal(actor=user)
    assert cube.id == f"dana-o-neil-work-example-com-{user.pk}"
    cube.full_clean()


def test_roles_decide_read_and_write(user, other_user):
    cube = Cube.objects.create(id="team", name="Team", owner=user)
    with pytest.raises(NotFound):
        cube_get_readable(actor=other_user, cube_id="team")
    CubeMembership.objects.create(cube=cube, user=other_user, role="reader")
    assert cube_get_readable(actor=other_user, cube_id="team") == cube
    with pytest.raises(PermissionDenied):
        cube_get_writable(actor=other_user, cube_id="team")
    CubeMembership.objects.filter(cube=cube).update(role="writer")
    assert cube_get_writable(actor=other_user, cube_id="team") == cube


def test_cube_list_shows_own_and_shared_cubes_only(user, other_user, django_assert_num_queries):
    cube_ensure_personal(actor=user)
    cube_ensure_personal(actor=other_user)
    shared = Cube.objects.create(id="shared", name="Shared", owner=other_user)
    CubeMembership.objects.create(cube=shared, user=user, role="reader")
    Cube.objects.create(id="private", name="Private", owner=other_user)
    with django_assert_num_queries(1):
        cubes = list(cube_list(actor=user))
        owners = [cube.owner.username for cube in cubes]
    assert [cube.id for cube in cubes][0].startswith("alice")
    assert {cube.id for cube in cubes} == {cubes[0].id, "shared"}
    assert owners == ["alice", "bob"]


@pytest.mark.parametrize("cube_id", ["../etc", "a b", "x\x00", ""])
def test_malformed_cube_ids_are_simply_not_found(user, cube_id):
    with pytest.raises(NotFound):
        cube_get_readable(actor=user, cube_id=cube_id)
