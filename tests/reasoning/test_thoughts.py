"""Thought sessions: the seed's four usage examples, session rules, validation, memory nodes, selectors,
soft delete and restore, and isolation between users."""
import pytest

from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.services import cube_ensure_personal
from apps.memories.models import Memory
from apps.reasoning.models import GENESIS, Thought, ThoughtSession
from apps.reasoning.selectors import (
    session_current, session_get, session_list, session_thoughts, session_tree,
)
from apps.reasoning.services.thoughts import session_delete, session_restore, thought_add
from tests.reasoning.thought_support import CLIENT, branched_session, think

pytestmark = pytest.mark.django_db


# The seed's usage examples

def test_forward_thinking_creates_a_titled_tagged_session_and_finishes_it(user):
    first = think(user, 1, "First, let me understand the problem...", session_title="Debugging memory leak",
                  session_tags=["project:myapp", "task:debugging", " Project:MyApp "])
    assert first.session_created and first.history_length == 1 and not first.is_final
    session = first.session
    assert session.title == "Debugging memory leak"
    assert session.tags == ["project:myapp", "task:debugging"]
    assert session.cube == cube_ensure_personal(actor=user) and session.client_key == CLIENT
    for number in (2, 3, 4):
        step = think(user, number)
        assert step.session == session and not step.session_created and step.history_length == number
    last = think(user, 5, "So the fix is an LRU bound.", more=False)
    assert last.session == session and last.is_final and last.history_length == 5
    session.refresh_from_db()
    assert session.completed_at == last.thought.created_at
    assert session_current(actor=user, client_key=CLIENT) is None
    assert [t.thought_number for t in session_thoughts(actor=user, session_id=session.pk)] == [1, 2, 3, 4, 5]


def test_backward_planning_starts_at_the_end_and_arrives_at_thought_1_in_the_same_session(user):
    start = think(user, 5, "The end state should be a fully tested feature...", total=5)
    assert start.session_created
    assert start.session.title == "The end state should be a fully tested feature..."
    for number in (4, 3, 2):
        assert think(user, number).session == start.session
    last = think(user, 1, "First step: write the failing test.", more=False)
    assert last.session == start.session and not last.session_created and last.history_length == 5
    assert [t.parent_hash for t in session_thoughts(actor=user, session_id=start.session.pk)][0] == GENESIS


def test_branching_forks_from_the_named_thought(user):
    think(user, 1)
    fork = think(user, 2).thought
    branch = think(user, 3, "Alternative approach: what if we use caching?", branch_from_thought=2,
                   branch_id="caching-approach")
    assert branch.branches == ["caching-approach"]
    assert branch.thought.branch_id == "caching-approach" and branch.thought.branch_from_thought == 2
    assert branch.thought.parent_hash == fork.content_hash
    more = think(user, 4, "Caching needs invalidation on writes.", branch_id="caching-approach")
    assert more.thought.parent_hash == branch.thought.content_hash
    main = think(user, 3, "Back on the main line: profile the heap.")
    assert main.thought.parent_hash == fork.content_hash and main.history_length == 5


def test_revision_records_what_it_revises(user):
    think(user, 1)
    think(user, 2)
    think(user, 3)
    revision = think(user, 4, "Actually, my earlier analysis missed a key factor...", is_revision=True,
                     revises_thought=2)
    assert revision.thought.is_revision and revision.thought.revises_thought == 2
    tree = session_tree(actor=user, session_id=revision.session.pk)
    revised = next(node for node in tree["main"] if node["number"] == 2)
    assert tree["main"][-1]["revisesNode"] == revised["id"]


# Session rules

def test_thought_1_while_a_session_is_current_starts_a_new_session(user):
    first = think(user, 1, session_title="Problem one")
    think(user, 2)
    second = think(user, 1, "A different problem entirely.", session_title="Problem two")
    assert second.session_created and second.session != first.session
    assert session_current(actor=user, client_key=CLIENT) == second.session
    assert think(user, 2).session == second.session


def test_each_client_has_its_own_current_session(user):
    mine = think(user, 1, client_key="client-a")
    theirs = think(user, 1, client_key="client-b")
    assert mine.session != theirs.session
    assert think(user, 2, client_key="client-a").session == mine.session
    assert think(user, 2, client_key="client-b").session == theirs.session


def test_after_a_final_thought_the_next_thought_starts_a_new_session(user):
    done = think(user, 1, more=False).session
    later = think(user, 2, "Picking the work up again.")
    assert later.session_created and later.session != done


def test_explicit_session_id_appends_and_reopens_a_completed_session(user):
    done = think(user, 1, more=False).session
    added = think(user, 2, "One more consideration.", client_key="dashboard", session_id=str(done.pk))
    assert added.session == done and not added.session_created
    done.refresh_from_db()
    assert done.completed_at is None


def test_title_and_tags_on_a_later_thought_are_ignored_and_the_result_says_so(user):
    think(user, 1, session_title="Original")
    step = think(user, 2, session_title="Renamed", session_tags=["other"])
    assert step.ignored == ("session_title", "session_tags")
    assert any("ignored" in notice for notice in step.notices)
    step.session.refresh_from_db()
    assert step.session.title == "Original" and step.session.tags == []
    assert think(user, 3).ignored == ()


def test_a_long_first_thought_gives_a_title_cut_at_a_word(user):
    text = "Investigate " + " ".join(f"word{i}" for i in range(40)) + "\nsecond line"
    title = think(user, 1, text).session.title
    assert title.endswith("…") and len(title) <= 80 and title.startswith("Investigate word0 word1")
    assert "second" not in title


def test_thought_number_above_total_raises_the_total(user):
    step = think(user, 7, total=5)
    assert step.thought.total_thoughts == 7
    assert any("total_thoughts raised from 5 to 7" in notice for notice in step.notices)


# Memory-graph nodes

def test_each_thought_is_a_memory_node_in_the_personal_cube(user):
    step = think(user, 1, "Heap snapshots show retained closures.", session_tags=["task:debugging"])
    node = Memory.objects.get(pk=step.thought.node_id)
    assert node.kind == Memory.Kind.THOUGHT and node.content == "Heap snapshots show retained closures."
    assert node.cube == cube_ensure_personal(actor=user) and node.owner == user
    assert node.primary_sector == "reflective" and node.category == "thought"
    assert node.tags == ["thoughtbox", "task:debugging"]
    assert node.metadata == {"thought_session_id": str(step.session.pk), "thought_number": 1, "branch_id": None}
    branch = think(user, 2, "Or retain less.", branch_from_thought=1, branch_id="lean")
    assert Memory.objects.get(pk=branch.thought.node_id).metadata["branch_id"] == "lean"


# Bad input

@pytest.mark.parametrize(("fields", "field"), [
    ({"thought_number": 0}, "thought_number"),
    ({"thought_number": -3}, "thought_number"),
    ({"thought_number": "2"}, "thought_number"),
    ({"total_thoughts": 0}, "total_thoughts"),
    ({"thought": "   "}, "thought"),
    ({"thought": 42}, "thought"),
    ({"thought": "bad\x00byte"}, "thought"),
    ({"next_thought_needed": "yes"}, "next_thought_needed"),
    ({"is_revision": True}, "revises_thought"),
    ({"revises_thought": 1}, "is_revision"),
    ({"branch_from_thought": 1}, "branch_id"),
    ({"branch_from_thought": 1, "branch_id": "has space"}, "branch_id"),
    ({"branch_from_thought": 1, "branch_id": "x" * 101}, "branch_id"),
    ({"branch_id": "never-started"}, "branch_from_thought"),
    ({"session_title": "t" * 301}, "session_title"),
    ({"session_tags": "not-a-list"}, "session_tags"),
    ({"session_tags": [f"tag{i}" for i in range(21)]}, "session_tags"),
])
def test_bad_input_names_the_field(user, fields, field):
    think(user, 1)
    arguments = {"thought": "A valid thought.", "thought_number": 2, "total_thoughts": 5, "next_thought_needed": True,
                 **fields}
    with pytest.raises(InvalidInput) as error:
        thought_add(actor=user, client_key=CLIENT, **arguments)
    assert error.value.field == field
    assert Thought.objects.count() == 1


def test_a_thought_over_the_content_limit_is_refused(user, settings):
    settings.ENGRAM_MAX_CONTENT_CHARS = 50
    with pytest.raises(InvalidInput) as error:
        think(user, 1, "x" * 51)
    assert error.value.field == "thought" and "limit is 50" in error.value.message
    assert not ThoughtSession.objects.exists()


def test_revising_a_thought_that_does_not_exist_is_thought_not_found(user):
    think(user, 1, session_title="Leak hunt")
    think(user, 2)
    with pytest.raises(NotFound) as error:
        think(user, 3, is_revision=True, revises_thought=7)
    assert error.value.code == "thought_not_found" and error.value.extra["field"] == "revises_thought"
    assert "Thought 7 does not exist in session 'Leak hunt'" in error.value.message
    assert "1, 2" in error.value.message
    with pytest.raises(NotFound) as error:
        think(user, 3, branch_from_thought=9, branch_id="alt")
    assert error.value.code == "thought_not_found" and error.value.extra["field"] == "branch_from_thought"
    assert Thought.objects.count() == 2


def test_a_first_thought_that_revises_is_thought_not_found_and_creates_nothing(user):
    with pytest.raises(NotFound) as error:
        think(user, 2, is_revision=True, revises_thought=1)
    assert error.value.code == "thought_not_found" and "no thoughts yet" in error.value.message
    assert not ThoughtSession.objects.exists()


@pytest.mark.parametrize("session_id", ["00000000-0000-0000-0000-000000000000", "not-a-uuid", 12])
def test_an_unknown_session_is_session_not_found(user, session_id):
    with pytest.raises(NotFound) as error:
        think(user, 1, session_id=session_id)
    assert error.value.code == "session_not_found"
    with pytest.raises(NotFound) as error:
        session_get(actor=user, session_id=session_id)
    assert error.value.code == "session_not_found"


# Isolation

def test_bob_cannot_see_or_touch_alices_sessions(user, other_user):
    alice_session = think(user, 1, "Alice's private plan.", session_title="Alice plan").session
    for read in (session_get, session_thoughts, session_tree, session_delete, session_restore):
        with pytest.raises(NotFound) as error:
            read(actor=other_user, session_id=alice_session.pk)
        assert error.value.code == "session_not_found"
    with pytest.raises(NotFound):
        think(other_user, 2, "Bob tries to append.", session_id=alice_session.pk)
    assert list(session_list(actor=other_user)) == []
    assert list(session_list(actor=other_user, query="Alice")) == []
    # The same client key under another user names another client.
    assert session_current(actor=other_user, client_key=CLIENT) is None
    bobs = think(other_user, 2, "Bob's own thought.")
    assert bobs.session_created and bobs.session.owner == other_user
    assert Thought.objects.filter(session=alice_session).count() == 1
    assert Memory.objects.filter(owner=user, kind=Memory.Kind.THOUGHT).count() == 1


# Selectors

def test_session_list_counts_thoughts_without_a_query_per_session(user, django_assert_num_queries):
    for index in range(4):
        think(user, 1, f"Problem {index} first step.", session_title=f"Problem {index}",
              session_tags=["even" if index % 2 == 0 else "odd"])
        for number in range(2, index + 2):
            think(user, number)
    with django_assert_num_queries(1):
        sessions = list(session_list(actor=user))
        counts = {s.title: s.thought_count for s in sessions}
        assert all(s.last_thought_at is not None for s in sessions)
    assert counts == {"Problem 0": 1, "Problem 1": 2, "Problem 2": 3, "Problem 3": 4}
    assert [s.title for s in sessions] == ["Problem 3", "Problem 2", "Problem 1", "Problem 0"]
    assert {s.title for s in session_list(actor=user, tag="odd")} == {"Problem 1", "Problem 3"}
    assert {s.title for s in session_list(actor=user, query="problem 2")} == {"Problem 2"}
    assert {s.title for s in session_list(actor=user, query="EVEN")} == {"Problem 0", "Problem 2"}


def test_session_tree_has_the_main_line_branches_and_revisions(user):
    steps = branched_session(user)
    tree = session_tree(actor=user, session_id=steps[0].session.pk)
    ids = [str(step.thought.pk) for step in steps]
    assert tree["session"]["title"] == "Debugging memory leak" and tree["count"] == 5
    assert [node["id"] for node in tree["main"]] == [ids[0], ids[1], ids[3], ids[4]]
    [branch] = tree["branches"]
    assert branch["branchId"] == "caching-approach" and branch["fromThought"] == 2 and branch["origin"] == ids[1]
    assert [node["id"] for node in branch["thoughts"]] == [ids[2]]
    second = tree["main"][1]
    assert set(second["next"]) == {ids[2], ids[3]}
    assert tree["main"][2]["revisesNode"] == ids[1] and tree["main"][2]["prev"] == ids[1]
    assert tree["main"][0]["prev"] is None and tree["main"][0]["parentHash"] == GENESIS


# Soft delete and restore

def test_delete_hides_the_session_and_its_nodes_and_restore_brings_them_back(user):
    steps = branched_session(user)
    session = steps[0].session
    node_ids = [step.thought.node_id for step in steps]
    think(user, 1, "Another session that stays.", client_key="other-client")
    session_delete(actor=user, session_id=session.pk)
    assert Memory.objects.filter(pk__in=node_ids, deleted_at__isnull=False).count() == 5
    assert [s.title for s in session_list(actor=user)] == ["Another session that stays."]
    assert session in session_list(actor=user, include_deleted=True)
    with pytest.raises(NotFound):
        session_get(actor=user, session_id=session.pk)
    with pytest.raises(NotFound):
        think(user, 6, session_id=session.pk)
    restored = session_restore(actor=user, session_id=session.pk)
    assert restored.deleted_at is None
    assert Memory.objects.filter(pk__in=node_ids, deleted_at__isnull=True).count() == 5
    assert session_get(actor=user, session_id=session.pk) == session
    with pytest.raises(InvalidInput) as error:
        session_restore(actor=user, session_id=session.pk)
    assert error.value.field == "session_id"


def test_restore_stores_a_node_that_was_removed_for_good(user):
    step = think(user, 1, "A thought whose node gets purged.")
    session_delete(actor=user, session_id=step.session.pk)
    Memory.objects.filter(pk=step.thought.node_id).delete()
    session_restore(actor=user, session_id=step.session.pk)
    thought = Thought.objects.get(pk=step.thought.pk)
    assert thought.node is not None and thought.node.deleted_at is None
    assert thought.node.content == "A thought whose node gets purged."


def test_a_deleted_session_is_not_current(user):
    session = think(user, 1).session
    session_delete(actor=user, session_id=session.pk)
    assert session_current(actor=user, client_key=CLIENT) is None
    assert think(user, 2).session_created
