"""The trash's selectors and services: every kind listed newest first with its expiry, restored and deleted forever
through its own service, nothing live ever reachable, one user's trash never another's, two queries a page."""
from pathlib import Path

import pytest

from apps.cognition.models import Tombstone, UndoEntry
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.cubes.services import cube_share
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_delete
from apps.projects.models import Decision
from apps.reasoning.models import CellRun, Notebook, Thought
from apps.reasoning.services.notebooks import notebook_directory
from apps.trash import selectors
from apps.trash.selectors import trash_get, trash_list, trash_page
from apps.trash.services import trash_purge, trash_restore
from tests.cognition.curation_support import nodes
from tests.trash.conftest import KINDS, MODELS

pytestmark = pytest.mark.django_db

def listed(actor, kind=None) -> list[tuple[str, str]]:
    return [(row["trash_kind"], row["trash_id"]) for row in trash_list(actor=actor, kind=kind)]


def test_the_trash_lists_one_item_of_every_kind_newest_first_with_when_each_goes(user, deleted):
    page = trash_page(actor=user)
    assert [(item.kind, item.item_id) for item in page] == [(kind, deleted.item_id(kind)) for kind in reversed(KINDS)]
    items = {item.kind: item for item in page}
    # Only a forgotten node has a purge deadline: its tombstone's. Nothing else expires.
    assert items["forgotten"].expires_at == Tombstone.objects.get(memory=deleted.forgotten).deadline
    assert all(item.expires_at is None for kind, item in items.items() if kind != "forgotten")
    assert items["memory"].title == "The spare key is under the blue flowerpot."
    assert items["decision"].place == "orchard" and items["decision"].parent_id == str(deleted.live_project.pk)
    assert items["sharp_edge"].parent_id is None  # global: in no project
    assert items["project"].title == "greenhouse" and items["cube"].title == "Garden notes"
    assert items["thought_session"].title == "Bed planning" and items["notebook"].title == "Rainfall sums"


def test_nodes_and_entities_come_back_with_what_they_belong_to_so_they_are_not_listed_twice(user, deleted):
    ids = {item_id for _, item_id in listed(user)}
    # The deleted decision's node, the thought's node and the deleted project's (live) decision are not items.
    assert str(deleted.decision.node_id) not in ids
    assert not ids & {str(pk) for pk in Thought.objects.values_list("node_id", flat=True)}
    assert str(deleted.project_decision.pk) not in ids


def test_a_kind_filters_the_list_and_an_unknown_kind_is_invalid_input_naming_it(user, deleted):
    assert listed(user, "notebook") == [("notebook", deleted.item_id("notebook"))]
    with pytest.raises(InvalidInput) as error:
        trash_page(actor=user, kind="photos")
    assert error.value.extra["field"] == "kind"


def test_pages_hold_page_size_items_newest_first(user, deleted, monkeypatch):
    monkeypatch.setattr(selectors, "PAGE_SIZE", 4)
    first, third = trash_page(actor=user, page=1), trash_page(actor=user, page=3)
    assert first.paginator.count == len(KINDS) and first.paginator.num_pages == 3
    assert [item.kind for item in first] == list(reversed(KINDS))[:4]
    assert [item.kind for item in third] == ["memory"]
    assert [item.kind for item in trash_page(actor=user, page="nonsense")] == [item.kind for item in first]


def test_a_page_is_two_queries_whatever_the_kinds_and_the_items(user, deleted, django_assert_num_queries):
    with django_assert_num_queries(2):  # the count, and the page's rows: one UNION ALL over every kind
        assert len(trash_page(actor=user).object_list) == len(KINDS)
    for memory in nodes(user, *[f"Seed packet {n} for the spring beds." for n in range(selectors.PAGE_SIZE)]):
        memory_delete(actor=user, memory_id=memory.pk)
    with django_assert_num_queries(2):
        page = trash_page(actor=user)
        assert len(page.object_list) == selectors.PAGE_SIZE and page.paginator.count == len(KINDS) + selectors.PAGE_SIZE


@pytest.mark.parametrize("kind", KINDS)
def test_restore_brings_each_kind_back_and_out_of_the_trash(user, deleted, kind):
    item = trash_restore(actor=user, kind=kind, item_id=deleted.item_id(kind))
    assert item.kind == kind
    assert MODELS[kind].objects.get(pk=deleted.item_id(kind)).deleted_at is None
    assert (kind, deleted.item_id(kind)) not in listed(user)
    with pytest.raises(NotFound):
        trash_get(actor=user, kind=kind, item_id=deleted.item_id(kind))


def test_restoring_a_project_brings_back_its_decisions_with_their_nodes(user, deleted):
    trash_restore(actor=user, kind="project", item_id=deleted.item_id("project"))
    decision = Decision.objects.get(pk=deleted.project_decision.pk)
    assert decision.deleted_at is None and Memory.objects.get(pk=decision.node_id).deleted_at is None


def test_restoring_a_forgotten_node_with_its_undo_brings_its_edges_back(user, deleted):
    assert not MemoryLink.objects.filter(source=deleted.forgotten).exists()  # the forget removed the edge
    undo = Tombstone.objects.get(memory=deleted.forgotten).undo_id
    trash_restore(actor=user, kind="forgotten", item_id=deleted.item_id("forgotten"))
    assert MemoryLink.objects.filter(source=deleted.forgotten, target=deleted.neighbour).exists()
    assert UndoEntry.objects.get(pk=undo).used_at is not None


def test_a_writer_restores_a_node_someone_else_forgot_without_their_undo(user, other_user, deleted):
    """bob may write alice's personal cube: the node is in his trash too, and comes back as memory_restore brings a
    memory back (the edge the forget removed stays in alice's undo, which only she may run)."""
    cube_share(actor=user, cube_id=deleted.forgotten.cube_id, user=other_user.username, role="writer")
    assert ("forgotten", deleted.item_id("forgotten")) in listed(other_user)
    trash_restore(actor=other_user, kind="forgotten", item_id=deleted.item_id("forgotten"))
    assert Memory.objects.get(pk=deleted.forgotten.pk).deleted_at is None
    assert not MemoryLink.objects.filter(source=deleted.forgotten).exists()


@pytest.mark.parametrize("kind", KINDS)
def test_delete_forever_removes_each_kind(user, deleted, kind):
    trash_purge(actor=user, kind=kind, item_id=deleted.item_id(kind))
    assert not MODELS[kind].objects.filter(pk=deleted.item_id(kind)).exists()
    assert (kind, deleted.item_id(kind)) not in listed(user)


def test_delete_forever_takes_what_hangs_on_the_item_with_it(user, deleted, django_capture_on_commit_callbacks):
    decision_node, thought_nodes = deleted.project_decision.node_id, list(
        Thought.objects.filter(session=deleted.thought_session).values_list("node_id", flat=True))
    forget_undo = Tombstone.objects.get(memory=deleted.forgotten).undo_id
    folder = Path(notebook_directory(deleted.notebook))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sum.js").write_text("console.log(1 + 1);")
    with django_capture_on_commit_callbacks(execute=True):  # the notebook's folder goes once the rows are gone
        for kind in ("project", "thought_session", "notebook", "forgotten", "decision"):
            trash_purge(actor=user, kind=kind, item_id=deleted.item_id(kind))
    assert not Decision.objects.filter(pk=deleted.project_decision.pk).exists()
    assert not Memory.objects.filter(pk__in=[decision_node, *thought_nodes, deleted.decision.node_id]).exists()
    assert not folder.exists()
    # The forget's undo held only this node: no undo can bring it back now.
    assert not UndoEntry.objects.filter(pk=forget_undo).exists()
    assert Memory.objects.filter(pk=deleted.neighbour.pk).exists()


def test_a_notebook_with_a_running_cell_is_not_deleted_forever(user, deleted):
    cell = deleted.notebook.cells.get()
    CellRun.objects.create(owner=user, notebook=deleted.notebook, cell=cell, status=CellRun.Status.RUNNING)
    with pytest.raises(Conflict, match="still running"):
        trash_purge(actor=user, kind="notebook", item_id=deleted.item_id("notebook"))
    assert Notebook.objects.filter(pk=deleted.notebook.pk).exists()


@pytest.mark.parametrize("kind", KINDS)
def test_nothing_live_is_in_the_trash_so_nothing_live_is_deleted_forever(user, deleted, kind):
    trash_restore(actor=user, kind=kind, item_id=deleted.item_id(kind))
    with pytest.raises(NotFound):
        trash_purge(actor=user, kind=kind, item_id=deleted.item_id(kind))
    assert MODELS[kind].objects.filter(pk=deleted.item_id(kind), deleted_at__isnull=True).exists()


@pytest.mark.parametrize("item_id", ["not-an-id", "00000000-0000-0000-0000-000000000000", ""])
def test_unknown_and_malformed_ids_are_not_found(user, deleted, item_id):
    with pytest.raises(NotFound):
        trash_restore(actor=user, kind="project", item_id=item_id)
    with pytest.raises(NotFound):
        trash_purge(actor=user, kind="cube", item_id=item_id or "no such cube!")


@pytest.mark.parametrize("kind", KINDS)
def test_bob_neither_sees_nor_restores_nor_deletes_alices_trash(user, other_user, deleted, kind):
    assert listed(other_user) == []
    for service in (trash_restore, trash_purge, trash_get):
        with pytest.raises(NotFound):
            service(actor=other_user, kind=kind, item_id=deleted.item_id(kind))
    assert MODELS[kind].objects.get(pk=deleted.item_id(kind)).deleted_at is not None


def test_a_reader_of_a_shared_cube_has_none_of_its_deleted_things_in_the_trash(user, other_user, deleted):
    cube_share(actor=user, cube_id=deleted.memory.cube_id, user=other_user.username, role="reader")
    assert listed(other_user) == []
    cube_share(actor=user, cube_id=deleted.memory.cube_id, user=other_user.username, role="writer")
    # A writer may restore what is in the cube: its memories, forgotten nodes and project items; cubes, sessions and
    # notebooks stay their owner's.
    assert {kind for kind, _ in listed(other_user)} == {"memory", "forgotten", "project", "decision", "issue",
                                                        "sharp_edge"}
