import uuid

import pytest

from apps.core.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.projects.models import Project
from apps.projects.selectors import project_find, project_get, project_list
from apps.projects.services import (
    issue_add, issue_update, project_create, project_delete, project_restore, project_update,
)
from apps.projects.validation import MAX_NAME_CHARS, MAX_TEXT_CHARS


def test_create_puts_the_project_in_the_personal_cube(user, project):
    assert project.owner == user and project.cube.owner == user and project.cube.is_personal
    assert (project.name, project.status, project.stack) == ("spawner", "active", [])
    assert project_get(actor=user, project_id=str(project.pk)) == project


def test_create_in_a_given_writable_cube(user):
    cube = Cube.objects.create(id="team-x", name="Team", owner=user)
    project = project_create(actor=user, name="shared", cube_id="team-x", stack=["django", " django ", "pg"],
                             repo_path="/src/shared/")
    assert project.cube_id == cube.pk
    assert project.stack == ["django", "pg"] and project.repo_path == "/src/shared"


def test_create_in_someone_elses_cube_is_refused(user, other_user):
    Cube.objects.create(id="bobs", name="Bob's", owner=other_user)
    with pytest.raises(NotFound):
        project_create(actor=user, name="sneaky", cube_id="bobs")
    CubeMembership.objects.create(cube_id="bobs", user=user, role=CubeMembership.Role.READER)
    with pytest.raises(PermissionDenied):
        project_create(actor=user, name="sneaky", cube_id="bobs")
    assert not Project.objects.filter(name="sneaky").exists()


def test_name_is_unique_per_owner_ignoring_case(user, project):
    with pytest.raises(Conflict) as caught:
        project_create(actor=user, name="SPAWNER")
    assert caught.value.code == "project_name_taken" and caught.value.extra["field"] == "name"
    other = project_create(actor=user, name="other")
    with pytest.raises(Conflict):
        project_update(actor=user, project_id=other.pk, name="Spawner")


def test_two_users_may_share_a_name(user, project, other_project):
    assert project.name == other_project.name and project.owner != other_project.owner


def test_a_deleted_name_can_be_reused_and_restore_then_conflicts(user, project):
    project_delete(actor=user, project_id=project.pk)
    again = project_create(actor=user, name="Spawner")
    with pytest.raises(Conflict):
        project_restore(actor=user, project_id=project.pk)
    project_delete(actor=user, project_id=again.pk)
    assert project_restore(actor=user, project_id=project.pk).deleted_at is None


def test_update_changes_only_the_given_fields(user):
    project = project_create(actor=user, name="p", stack=["python"], current_goal="goal")
    updated = project_update(actor=user, project_id=str(project.pk), blocked_by=["review"], open_threads=["a", "b"],
                             add_to_stack=["django", "python"], status="paused")
    project.refresh_from_db()
    assert updated.stack == project.stack == ["python", "django"]
    assert (project.blocked_by, project.open_threads, project.status) == (["review"], ["a", "b"], "paused")
    assert project.current_goal == "goal" and project.name == "p"
    project_update(actor=user, project_id=project.pk, stack=["go"], add_to_stack=["grpc"], current_goal="",
                   name="renamed", repo_path="/src/p")
    project.refresh_from_db()
    assert (project.stack, project.current_goal, project.name, project.repo_path) == (["go", "grpc"], "", "renamed",
                                                                                       "/src/p")


@pytest.mark.parametrize(("fields", "field"), [
    ({"name": ""}, "name"), ({"name": "x" * (MAX_NAME_CHARS + 1)}, "name"), ({"status": "done"}, "status"),
    ({"current_goal": "g" * (MAX_TEXT_CHARS + 1)}, "current_goal"), ({"stack": "django"}, "stack"),
    ({"blocked_by": ["ok", 3]}, "blocked_by[1]"), ({"open_threads": ["t"] * 101}, "open_threads"),
    ({"add_to_stack": ["x" * 1001]}, "add_to_stack[0]"), ({"name": "bad\x00name"}, "name"),
])
def test_update_refuses_bad_input_and_changes_nothing(user, project, fields, field):
    with pytest.raises(InvalidInput) as caught:
        project_update(actor=user, project_id=project.pk, **fields)
    assert caught.value.field == field and field.split("[")[0] in caught.value.message
    project.refresh_from_db()
    assert project.name == "spawner" and project.status == "active" and project.stack == []


@pytest.mark.parametrize(("fields", "field"), [
    ({"name": None}, "name"), ({"name": "  "}, "name"), ({"name": "p", "status": "closed"}, "status"),
    ({"name": "p", "repo_path": "/" + "x" * 1000}, "repo_path"),
])
def test_create_refuses_bad_input(user, fields, field):
    with pytest.raises(InvalidInput) as caught:
        project_create(actor=user, **fields)
    assert caught.value.field == field
    assert not Project.objects.exists()


@pytest.mark.parametrize("bad_id", [str(uuid.uuid4()), "not-a-uuid", None, 42])
def test_unknown_project_ids_are_not_found(user, bad_id):
    for call in (lambda: project_get(actor=user, project_id=bad_id),
                 lambda: project_update(actor=user, project_id=bad_id, status="paused"),
                 lambda: project_delete(actor=user, project_id=bad_id)):
        with pytest.raises(NotFound) as caught:
            call()
        assert caught.value.code == "project_not_found" and caught.value.extra["field"] == "project_id"


def test_bob_cannot_get_update_delete_or_find_alices_project(user, other_user, project):
    for call in (lambda: project_get(actor=other_user, project_id=project.pk),
                 lambda: project_update(actor=other_user, project_id=project.pk, current_goal="mine"),
                 lambda: project_delete(actor=other_user, project_id=project.pk),
                 lambda: project_restore(actor=other_user, project_id=project.pk)):
        with pytest.raises(NotFound):
            call()
    assert project_find(actor=other_user, name="spawner") is None
    assert list(project_list(actor=other_user)) == []
    project.refresh_from_db()
    assert project.current_goal == "Implement memory MCP" and project.deleted_at is None


def test_a_reader_of_a_shared_cube_sees_but_cannot_change(user, other_user):
    Cube.objects.create(id="team", name="Team", owner=user)
    CubeMembership.objects.create(cube_id="team", user=other_user, role=CubeMembership.Role.READER)
    project = project_create(actor=user, name="shared", cube_id="team")
    assert project_get(actor=other_user, project_id=project.pk) == project
    with pytest.raises(PermissionDenied):
        project_update(actor=other_user, project_id=project.pk, status="paused")


def test_delete_hides_and_restore_brings_back(user, project):
    project_delete(actor=user, project_id=project.pk)
    with pytest.raises(NotFound):
        project_get(actor=user, project_id=project.pk)
    assert project_get(actor=user, project_id=project.pk, include_deleted=True).deleted_at is not None
    assert list(project_list(actor=user)) == [] and len(project_list(actor=user, include_deleted=True)) == 1
    assert project_find(actor=user, name="spawner") is None
    project_restore(actor=user, project_id=project.pk)
    assert project_get(actor=user, project_id=project.pk).deleted_at is None


def test_find_by_name_ignores_case_and_prefers_own_projects(user, other_user, project):
    Cube.objects.create(id="bob-team", name="Team", owner=other_user)
    CubeMembership.objects.create(cube_id="bob-team", user=user, role=CubeMembership.Role.WRITER)
    project_create(actor=other_user, name="Spawner", cube_id="bob-team")
    assert project_find(actor=user, name=" SPAWNER ") == project
    assert project_find(actor=user, name="nothing") is None
    assert project_find(actor=user) is None


def test_find_by_repo_path_takes_the_deepest_containing_repo(user):
    outer = project_create(actor=user, name="outer", repo_path="/src/mono")
    inner = project_create(actor=user, name="inner", repo_path="/src/mono/packages/web")
    assert project_find(actor=user, repo_path="/src/mono") == outer
    assert project_find(actor=user, repo_path="/src/mono/") == outer
    assert project_find(actor=user, repo_path="/src/mono/tools/x.py") == outer
    assert project_find(actor=user, repo_path="/src/mono/packages/web/src") == inner
    assert project_find(actor=user, repo_path="/src/monolith") is None
    assert project_find(actor=user, repo_path="/src/mono_%") is None
    project_create(actor=user, name="wild", repo_path="/src/a_c%")
    assert project_find(actor=user, repo_path="/src/abcd/x") is None  # stored paths are not LIKE patterns


def test_list_counts_open_issues_in_one_query(user, project, django_assert_num_queries):
    quiet = project_create(actor=user, name="quiet")
    project_update(actor=user, project_id=quiet.pk, status="paused")
    issue_add(actor=user, project_id=project.pk, title="Blocking bug", severity="blocking")
    issue_add(actor=user, project_id=project.pk, title="Minor bug", severity="minor")
    closed = issue_add(actor=user, project_id=project.pk, title="Fixed bug")
    issue_update(actor=user, issue_id=closed.pk, status="resolved", resolution="fixed")
    with django_assert_num_queries(1):
        counts = {p.name: (p.open_issue_count, p.owner.username) for p in project_list(actor=user)}
    assert counts == {"spawner": (2, "alice"), "quiet": (0, "alice")}
    assert [p.name for p in project_list(actor=user, status="paused")] == ["quiet"]
    with pytest.raises(InvalidInput):
        project_list(actor=user, status="gone")
