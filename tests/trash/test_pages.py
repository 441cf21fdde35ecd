"""The trash page, the pages of deleted things (read only, with a Restore banner, for whoever may restore them) and
the Undo button every delete in the dashboard flashes."""
import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from apps.cubes.models import Cube
from apps.cubes.services import cube_register, cube_share
from apps.memories.models import Memory
from apps.memories.services import memory_delete
from apps.projects.models import Decision, Project
from apps.projects.services import decision_add, project_create
from apps.reasoning.models import Notebook, ThoughtSession
from apps.reasoning.services.notebooks import notebook_create, notebook_delete
from apps.trash import selectors
from tests.cognition.curation_support import nodes
from tests.query_counts import flat
from tests.reasoning.thought_support import think
from tests.trash.conftest import KINDS, MODELS

pytestmark = pytest.mark.django_db

TRASH = reverse("trash:index")


def html(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def undo_action(response) -> str:
    """The URL the flashed message's Undo button posts to."""
    found = re.search(r'<li class="message message-success message-undo">.*?<form method="post" action="([^"]+)"',
                      html(response), re.S)
    assert found, "no Undo button in the messages"
    return found.group(1)


# The trash page

def test_the_trash_lists_everything_with_when_it_was_deleted_its_expiry_restore_and_delete_forever(alice, deleted):
    page = html(alice.get(TRASH))
    for kind in KINDS:
        assert reverse("trash:restore", args=[kind, deleted.item_id(kind)]) in page
        assert reverse("trash:purge", args=[kind, deleted.item_id(kind)]) in page
    assert page.count("Kept until you delete it forever") == len(KINDS) - 1
    assert page.count("Deleted for good on") == 1  # the forgotten node, at its tombstone's deadline
    order = [page.index(f'data-kind="{kind}"') for kind in reversed(KINDS)]
    assert order == sorted(order), "newest first"
    # Each item links to its own page, which shows it deleted; an entity to its project's page with deleted items.
    assert reverse("projects:project-detail", args=[deleted.project.pk]) in page
    assert reverse("projects:project-detail", args=[deleted.live_project.pk]) + "?deleted=1" in page
    assert reverse("reasoning:notebook-detail", args=[deleted.notebook.pk]) in page


def test_the_trash_filters_by_kind_and_says_what_is_wrong_with_a_bad_kind(alice, deleted):
    notebooks = html(alice.get(TRASH, {"kind": "notebook"}))
    assert "Rainfall sums" in notebooks and "greenhouse" not in notebooks
    bad = html(alice.get(TRASH, {"kind": "photos"}))
    assert "Select a valid choice" in bad and "Rainfall sums" in bad


def test_the_pages_of_a_filtered_trash_keep_the_filter(alice, user, deleted, monkeypatch):
    monkeypatch.setattr(selectors, "PAGE_SIZE", 1)
    notebook_delete(actor=user, notebook_id=notebook_create(actor=user, title="Honey yield").pk)
    first = html(alice.get(TRASH, {"kind": "notebook"}))
    assert "Honey yield" in first and "Rainfall sums" not in first
    assert 'href="?kind=notebook&amp;page=2" rel="next"' in first
    assert "Rainfall sums" in html(alice.get(TRASH, {"kind": "notebook", "page": "2"}))


def test_an_empty_trash_says_so(alice, user):
    assert "The trash is empty" in html(alice.get(TRASH))
    assert "No notebook in the trash" in html(alice.get(TRASH, {"kind": "notebook"}))


def test_the_trash_needs_a_login_and_is_in_the_navigation(client, alice):
    assert client.get(TRASH).status_code == 302
    assert f'<a href="{TRASH}" aria-current="page">Trash</a>' in html(alice.get(TRASH))


def test_the_trash_page_runs_no_more_queries_with_more_items(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        for memory in nodes(user, *[f"Seed packet {n} for the spring beds." for n in range(start, start + count)]):
            memory_delete(actor=user, memory_id=memory.pk)

    grow(0, 1)
    flat(lambda: alice.get(TRASH), grow, lambda response: len(response.context["rows"]), django_assert_max_num_queries,
         shown_at_fifty=25)


def test_restore_from_the_trash_goes_back_to_the_page_it_was_on(alice, deleted):
    back = TRASH + "?kind=project"
    response = alice.post(reverse("trash:restore", args=["project", deleted.project.pk]), {"next": back})
    assert response.status_code == 302 and response.url == back
    assert Project.objects.get(pk=deleted.project.pk).deleted_at is None
    followed = html(alice.get(back))
    assert "Restored the project “greenhouse” (<a href=" in followed
    elsewhere = alice.post(reverse("trash:restore", args=["notebook", deleted.notebook.pk]),
                           {"next": "https://evil.example/"})
    assert elsewhere.url == TRASH


def test_restoring_what_is_not_in_the_trash_says_so(alice, deleted):
    url = reverse("trash:restore", args=["notebook", deleted.notebook.pk])
    alice.post(url)
    again = alice.post(url, follow=True)
    assert "is not in your trash" in html(again)
    assert alice.post(reverse("trash:restore", args=["photos", deleted.notebook.pk])).status_code == 404
    assert alice.get(url).status_code == 405


def test_delete_forever_asks_first_then_deletes(alice, deleted):
    url = reverse("trash:purge", args=["project", deleted.project.pk])
    confirm = html(alice.get(url))
    assert "Delete this project forever?" in confirm and "This cannot be undone." in confirm
    assert "its decisions, issues, sharp edges, episodes and sessions" in confirm
    assert Project.objects.filter(pk=deleted.project.pk).exists()
    done = alice.post(url, {"next": TRASH}, follow=True)
    assert "Deleted the project “greenhouse” forever." in html(done)
    assert not Project.objects.filter(pk=deleted.project.pk).exists()
    assert alice.get(url).status_code == 404


@pytest.mark.parametrize("kind", KINDS)
def test_bob_gets_the_404_page_for_alices_trash_and_changes_nothing(bob, deleted, kind):
    assert deleted.item_id(kind) not in html(bob.get(TRASH))
    assert bob.get(reverse("trash:purge", args=[kind, deleted.item_id(kind)])).status_code == 404
    assert bob.post(reverse("trash:purge", args=[kind, deleted.item_id(kind)])).status_code == 404
    assert "is not in your trash" in html(bob.post(reverse("trash:restore", args=[kind, deleted.item_id(kind)]),
                                                   follow=True))
    assert MODELS[kind].objects.get(pk=deleted.item_id(kind)).deleted_at is not None


# A deleted thing's own page

def test_a_deleted_projects_page_is_its_owners_read_only_with_a_restore_banner(alice, bob, other_user, user, deleted):
    url = reverse("projects:project-detail", args=[deleted.project.pk])
    page = html(alice.get(url))
    assert "This project was deleted on" in page and "Automate the watering" in page
    assert f'action="{reverse("projects:project-restore", args=[deleted.project.pk])}"' in page
    assert reverse("projects:project-edit", args=[deleted.project.pk]) not in page
    assert bob.get(url).status_code == 404
    cube_share(actor=user, cube_id=deleted.project.cube_id, user=other_user.username, role="reader")
    assert bob.get(url).status_code == 404  # a reader may not restore it: for them it is gone
    restored = alice.post(reverse("projects:project-restore", args=[deleted.project.pk]), follow=True)
    assert "Record a decision" in html(restored)


def test_deleted_sessions_notebooks_and_memories_show_their_page_with_the_banner(alice, bob, deleted):
    for url in (reverse("reasoning:session-detail", args=[deleted.thought_session.pk]),
                reverse("reasoning:notebook-detail", args=[deleted.notebook.pk]),
                reverse("dashboard:memory-detail", args=[deleted.memory.pk])):
        assert "was deleted on" in html(alice.get(url)), url
        assert bob.get(url).status_code == 404, url
    forgotten = html(alice.get(reverse("dashboard:memory-detail", args=[deleted.forgotten.pk])))
    assert "This memory was forgotten on" in forgotten and "It is deleted for good on" in forgotten
    restore = reverse("trash:restore", args=["forgotten", deleted.forgotten.pk])
    assert escape(restore + "?next=") in forgotten
    alice.post(restore + "?next=" + reverse("dashboard:memory-detail", args=[deleted.forgotten.pk]))
    assert Memory.objects.get(pk=deleted.forgotten.pk).deleted_at is None


def test_the_cognition_trash_points_to_the_main_trash(alice):
    assert f'href="{TRASH}?kind=forgotten"' in html(alice.get(reverse("dashboard:cognition-trash")))


# Undo after a delete

def test_deleting_a_project_flashes_undo_and_a_link_to_the_trash(alice, user):
    project = project_create(actor=user, name="beehive")
    response = alice.post(reverse("projects:project-delete", args=[project.pk]), follow=True)
    assert f'Project “beehive” moved to the <a href="{TRASH}">trash</a>.' in html(response)
    undo = undo_action(response)
    assert undo == reverse("projects:project-restore", args=[project.pk])
    back = alice.post(undo, follow=True)
    assert Project.objects.get(pk=project.pk).deleted_at is None and "Project “beehive” restored." in html(back)


def test_deleting_a_decision_flashes_undo_back_to_its_project(alice, user):
    project = project_create(actor=user, name="beehive")
    decision = decision_add(actor=user, project_id=project.pk, title="Paint the hive white").decision
    response = alice.post(reverse("projects:decision-delete", args=[decision.pk]), {"project": project.pk}, follow=True)
    undo = undo_action(response)
    assert alice.post(undo).url == reverse("projects:project-detail", args=[project.pk])
    assert Decision.objects.get(pk=decision.pk).deleted_at is None


def test_unregistering_a_cube_deleting_a_session_a_notebook_and_a_memory_flash_undo(alice, user, store):
    cube = cube_register(actor=user, cube_id="bees", name="Bees")
    session = think(user, 1, "How many frames per hive?", session_title="Frames").session
    notebook = notebook_create(actor=user, title="Honey yield")
    memory = store(user, "The queen was marked blue this year.")
    for delete, model, pk in ((reverse("cubes:cube-unregister", args=[cube.pk]), Cube, cube.pk),
                              (reverse("reasoning:session-delete", args=[session.pk]), ThoughtSession, session.pk),
                              (reverse("reasoning:notebook-delete", args=[notebook.pk]), Notebook, notebook.pk),
                              (reverse("dashboard:memory-delete", args=[memory.pk]), Memory, memory.pk)):
        undo = undo_action(alice.post(delete, follow=True))
        assert model.objects.get(pk=pk).deleted_at is not None
        assert alice.post(undo).status_code == 302
        assert model.objects.get(pk=pk).deleted_at is None, delete


def test_an_undo_button_posts_only_to_a_local_path():
    from apps.core.undo_messages import undo_tags, undo_url_of

    assert undo_url_of(undo_tags("/projects/1/restore/")) == "/projects/1/restore/"
    assert undo_url_of(undo_tags("https://evil.example/")) == ""
    assert undo_url_of(undo_tags("//evil.example/")) == ""
    assert undo_url_of("") == undo_url_of(None) == undo_url_of("success") == ""
