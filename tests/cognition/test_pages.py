"""The Context Graph pages: pulse and sessions, the curation inbox, the undo history, the trash, the scratchpad and the
lineage panel of a memory's page. Each renders empty and with data, its buttons call the services and say what
happened, another user's tasks, undos and nodes are the 404 page, and each list runs as many queries at 50 rows as
at 1."""
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.cognition.limits import LINEAGE_DEPTH
from apps.cognition.models import CgSession, Event, CurationTask, ScratchpadItem, SessionItem, Tombstone, UndoEntry
from apps.cognition.services.curation import annotation_add, node_forget
from apps.cognition.services.decisions import task_approve
from apps.cognition.services.inbox import task_open
from apps.memories.models import Memory
from apps.memories.services import memory_update
from tests.cognition.curation_support import nodes
from tests.cognition.support import new_session, record
from tests.query_counts import flat

pytestmark = pytest.mark.django_db

Types, Tools, Status = CurationTask.TaskType, CurationTask.SuggestedTool, CurationTask.Status
PAGES = ["cognition-pulse", "cognition-inbox", "cognition-undo", "cognition-trash", "cognition-scratchpad",
         "cognition-blind-spots", "cognition-homeostasis", "cognition-neuromodulation", "cognition-adversarial",
         "cognition-benchmarks", "cognition-gardener", "cognition-dreams"]


def text(response) -> str:
    return response.content.decode()


def merge_task(user, *contents):
    memories = nodes(user, *(contents or ("The user prefers dark mode in every editor.",
                                          "Dark mode in all editors, says the user.")))
    return task_open(owner=user, task_type=Types.POTENTIAL_MERGE, node_ids=[m.pk for m in memories],
                     reason="These say the same thing.", suggested_tool=Tools.MERGE_CONCEPTS), memories


@pytest.mark.parametrize("name", PAGES)
def test_each_page_says_what_it_is_for_when_empty(alice, name):
    page = alice.get(reverse(f"dashboard:{name}"))
    assert page.status_code == 200
    body = text(page)
    assert 'aria-label="Cognition sections"' in body and ">Cognition</a>" in body
    if name in ("cognition-pulse", "cognition-inbox", "cognition-scratchpad"):
        assert "/mcp/context-graph/" in body


def test_pages_need_a_login(client):
    for name in PAGES:
        assert client.get(reverse(f"dashboard:{name}")).status_code == 302


def test_the_pulse_lists_sessions_latest_first_and_a_session_shows_its_items(alice, user):
    kube, helm = nodes(user, "The staging cluster runs Kubernetes 1.30.", "Helm deploys to staging.")
    older = new_session(user)
    record(older, "an older question", [])
    latest = new_session(user, uuid.uuid4())
    record(latest, "what runs on the staging cluster", [(kube, 0.9), (helm, 0.7)])
    body = text(alice.get(reverse("dashboard:cognition-pulse")))
    assert body.index(str(latest.pk)) < body.index(str(older.pk))
    assert "Entropy" in body and "Coherence" in body and "Learning" in body and "Infancy" in body

    detail = alice.get(reverse("dashboard:cognition-session", args=[latest.pk]))
    body = text(detail)
    assert "what runs on the staging cluster" in body and "ΔS" in body
    assert reverse("dashboard:memory-detail", args=[kube.pk]) in body
    assert "2 nodes activated" in body


def test_another_users_session_is_not_found(alice, other_user):
    session = new_session(other_user)
    assert alice.get(reverse("dashboard:cognition-session", args=[session.pk])).status_code == 404


def test_the_inbox_shows_a_task_with_its_nodes_and_approving_merges_them_with_a_link_to_the_undo(alice, user):
    task, memories = merge_task(user)
    body = text(alice.get(reverse("dashboard:cognition-inbox")))
    assert "Potential merge" in body and "These say the same thing." in body and "merge_concepts" in body
    assert reverse("dashboard:memory-detail", args=[memories[0].pk]) in body

    response = alice.post(reverse("dashboard:cognition-task-approve", args=[task.pk]), follow=True)
    task.refresh_from_db()
    assert task.status == Status.APPROVED
    entry = UndoEntry.objects.get(owner=user)
    body = text(response)
    assert "Merged 2 nodes into" in body
    assert f'{reverse("dashboard:cognition-undo")}#undo-{entry.reversal_hash[:12]}' in body
    assert "Closed <span" in body and "Approved" in body


def test_an_ambiguity_needs_a_note_next_to_its_field_then_writes_it(alice, user):
    x, y = nodes(user, "The limit is 100 requests a minute.", "The limit is 1000 requests a minute.")
    task = task_open(owner=user, task_type=Types.AMBIGUITY_DETECTED, node_ids=[x.pk, y.pk], reason="They disagree.",
                     suggested_tool=Tools.ANNOTATE_NODE)
    url = reverse("dashboard:cognition-task-approve", args=[task.pk])
    response = alice.post(url, {"note": "  "})
    assert response.status_code == 200
    assert 'class="field field-invalid"' in text(response) and "Write the correction" in text(response)
    task.refresh_from_db()
    assert task.status == Status.OPEN

    too_long = alice.post(url, {"note": "x" * 1025})
    assert "at most 1024 characters" in text(too_long) and 'class="field field-invalid"' in text(too_long)

    response = alice.post(url, {"note": "The gateway's limit is 1000."}, follow=True)
    assert "Wrote the correction on 2 nodes." in text(response)
    assert x.annotations.get().text == "The gateway's limit is 1000."


def test_rejecting_closes_the_task_and_a_decided_task_cannot_be_decided_again(alice, user):
    task, _ = merge_task(user)
    response = alice.post(reverse("dashboard:cognition-task-reject", args=[task.pk]), follow=True)
    assert "Task rejected" in text(response)
    task.refresh_from_db()
    assert task.status == Status.REJECTED
    again = alice.post(reverse("dashboard:cognition-task-approve", args=[task.pk]), follow=True)
    assert "rejected already" in text(again)
    assert not UndoEntry.objects.exists()


def test_forgetting_through_the_inbox_says_where_the_node_went(alice, user):
    old, = nodes(user, "Deploys go out on Fridays.")
    task = task_open(owner=user, task_type=Types.OBSOLETE_INFO, node_ids=[old.pk], reason="Replaced.",
                     suggested_tool=Tools.FORGET_CONCEPT)
    response = alice.post(reverse("dashboard:cognition-task-approve", args=[task.pk]), follow=True)
    assert "Moved 1 node to the trash, restorable until" in text(response)
    assert Tombstone.objects.get(memory=old).reason == "obsolete"


def test_another_users_task_is_not_found_and_stays_open(alice, other_user):
    task, _ = merge_task(other_user)
    assert alice.post(reverse("dashboard:cognition-task-approve", args=[task.pk])).status_code == 404
    assert alice.post(reverse("dashboard:cognition-task-reject", args=[task.pk])).status_code == 404
    assert "These say the same thing." not in text(alice.get(reverse("dashboard:cognition-inbox")))
    task.refresh_from_db()
    assert task.status == Status.OPEN


def test_undo_history_previews_then_undoes_a_merge(alice, user):
    task, memories = merge_task(user)
    task_approve(actor=user, task_id=task.pk)
    entry = UndoEntry.objects.get(owner=user)
    body = text(alice.get(reverse("dashboard:cognition-undo")))
    assert "Merge of 2 nodes" in body and "undo until" in body

    preview = alice.post(reverse("dashboard:cognition-undo-preview"), {"reversal_hash": entry.reversal_hash})
    body = text(preview)
    assert preview.status_code == 200
    assert "This undo would" in body and "bring back 2 nodes" in body and "remove the merged node it made" in body
    assert Memory.objects.filter(pk__in=[m.pk for m in memories], deleted_at__isnull=True).count() == 0

    response = alice.post(reverse("dashboard:cognition-undo-execute"), {"reversal_hash": entry.reversal_hash},
                          follow=True)
    assert "Undone: the merge is reversed. 2 nodes back as they were" in text(response)
    assert Memory.objects.filter(pk__in=[m.pk for m in memories], deleted_at__isnull=True).count() == 2
    assert "undone" in text(response) and 'action="/cognition/undo/execute/"' not in text(response)


def test_an_undo_whose_plan_changed_since_its_preview_is_refused_with_a_clear_message(alice, user):
    task, memories = merge_task(user)
    merged = task_approve(actor=user, task_id=task.pk).outcome
    alice.post(reverse("dashboard:cognition-undo-preview"), {"reversal_hash": merged.reversal_hash})
    annotation_add(actor=user, node_id=str(merged.merged.pk), text="Written after the preview.")
    response = alice.post(reverse("dashboard:cognition-undo-execute"), {"reversal_hash": merged.reversal_hash},
                          follow=True)
    assert "Not undone: the graph has changed since you previewed this undo" in text(response)
    assert Memory.objects.get(pk=memories[0].pk).deleted_at is not None


def test_another_users_undo_is_not_found_and_not_shown(alice, bob, other_user):
    memory, = nodes(other_user, "Bob's private note about his orchard.")
    forgotten = node_forget(actor=other_user, node_id=memory.pk, reason="obsolete")
    for name in ("cognition-undo-preview", "cognition-undo-execute"):
        assert alice.post(reverse(f"dashboard:{name}"), {"reversal_hash": forgotten.reversal_hash}).status_code == 404
    assert "orchard" not in text(alice.get(reverse("dashboard:cognition-undo")))
    assert "orchard" in text(bob.get(reverse("dashboard:cognition-undo")))
    assert UndoEntry.objects.get().used_at is None


def test_the_trash_lists_searches_and_restores(alice, user):
    soup, kube = nodes(user, "Grandma's tomato soup needs a pinch of sugar.", "The staging cluster runs Kubernetes.")
    node_forget(actor=user, node_id=soup.pk, reason="obsolete")
    node_forget(actor=user, node_id=kube.pk, reason="user_requested")
    body = text(alice.get(reverse("dashboard:cognition-trash")))
    assert "tomato soup" in body and "Obsolete" in body and "removed by alice" in body and "Purged in 4" in body

    found = text(alice.get(reverse("dashboard:cognition-trash"), {"q": "soup recipe"}))
    assert found.index("tomato soup") < found.index("Kubernetes") and "similarity" in found
    empty = alice.get(reverse("dashboard:cognition-trash"), {"q": "\x00"})
    assert empty.status_code == 200

    response = alice.post(reverse("dashboard:cognition-restore", args=[soup.pk]), follow=True)
    assert "Restored" in text(response)
    soup.refresh_from_db()
    assert soup.deleted_at is None
    assert "tomato soup" not in text(alice.get(reverse("dashboard:cognition-trash")))


def test_another_users_trash_is_not_shown_nor_restorable(alice, other_user):
    memory, = nodes(other_user, "Bob's private note about his orchard.")
    node_forget(actor=other_user, node_id=memory.pk, reason="obsolete")
    assert "private note" not in text(alice.get(reverse("dashboard:cognition-trash")))
    assert "private note" not in text(alice.get(reverse("dashboard:cognition-trash"), {"q": "garden"}))
    assert alice.post(reverse("dashboard:cognition-restore", args=[memory.pk])).status_code == 404
    memory.refresh_from_db()
    assert memory.deleted_at is not None


def _pad_item(user, session_id, agent_id, content, **fields):
    return ScratchpadItem.objects.create(owner=user, session_id=session_id, agent_id=agent_id, content=content,
                                         delta_s=0.42, expires_at=timezone.now() + timedelta(minutes=30), **fields)


def test_the_scratchpad_shows_live_items_by_agent_and_clears_one_pad(alice, user, other_user):
    session = uuid.uuid4()
    _pad_item(user, session, "planner", "Check the deploy window first.", privacy="team", tags=["deploy"])
    _pad_item(user, session, "coder", "The flaky test is in test_sync.")
    ScratchpadItem.objects.create(owner=user, session_id=session, agent_id="coder", content="An expired thought.",
                                  delta_s=0.1, expires_at=timezone.now() - timedelta(minutes=1))
    _pad_item(other_user, session, "planner", "Bob's plan.")
    body = text(alice.get(reverse("dashboard:cognition-scratchpad")))
    assert "Check the deploy window first." in body and "Team" in body and "ΔS 0.42" in body and "#deploy" in body
    assert "An expired thought." not in body and "Bob's plan." not in body

    response = alice.post(reverse("dashboard:cognition-scratchpad-clear"),
                          {"session_id": str(session), "agent_id": "planner"}, follow=True)
    assert "Cleared 1 item of planner&#x27;s scratchpad." in text(response)
    assert "Check the deploy window first." not in text(response) and "The flaky test" in text(response)
    assert ScratchpadItem.objects.filter(owner=other_user).count() == 1


def test_a_memory_page_shows_its_lineage_and_annotations(alice, user):
    memory, = nodes(user, "Deploys go out on Tuesdays.")
    memory_update(actor=user, memory_id=memory.pk, content="Deploys go out on Wednesdays.")
    annotation_add(actor=user, node_id=memory.pk, text="Moved after the freeze.", annotation_type="correction")
    body = text(alice.get(reverse("dashboard:memory-detail", args=[memory.pk])))
    assert 'id="lineage"' in body
    assert "Created" in body and "Updated" in body and "Annotated" in body
    assert "Moved after the freeze." in body and "Correction" in body


def test_a_merged_node_names_where_it_came_from(alice, user):
    task, memories = merge_task(user)
    merged = task_approve(actor=user, task_id=task.pk).outcome.merged
    body = text(alice.get(reverse("dashboard:memory-detail", args=[merged.pk])))
    assert "Merged from" in body and reverse("dashboard:memory-detail", args=[memories[0].pk]) in body


# --- query counts: as many at 50 rows as at 1 ------------------------------------------------------------------

def _count_of(marker):
    return lambda response: text(response).count(marker)


def test_pulse_queries_are_flat(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        CgSession.objects.bulk_create([CgSession(owner=user, interactions=n, entropy=0.5, coherence=0.5)
                                       for n in range(count)])
    CgSession.objects.create(owner=user)
    flat(lambda: alice.get(reverse("dashboard:cognition-pulse")), grow, _count_of('class="card cg-item"'),
         django_assert_max_num_queries, shown_at_fifty=25)


def test_session_items_queries_are_flat(alice, user, django_assert_max_num_queries):
    kube, helm = nodes(user, "The staging cluster runs Kubernetes 1.30.", "Helm deploys to staging.")
    session = new_session(user)
    record(session, "first question", [(kube, 0.9)])
    item = SessionItem.objects.get(session=session)

    def grow(start, count):
        SessionItem.objects.bulk_create([SessionItem(session=session, kind="query", text=f"question {n}",
                                                     vector=item.vector, delta_s=0.3,
                                                     activated=[{"node_id": str(helm.pk), "score": 0.5}])
                                         for n in range(count)])
    flat(lambda: alice.get(reverse("dashboard:cognition-session", args=[session.pk])), grow,
         _count_of('<span class="badge">Query</span>'), django_assert_max_num_queries)


def test_inbox_queries_are_flat(alice, user, django_assert_max_num_queries):
    memories = nodes(user, *[f"Lighthouse log {n}: the lamp was checked." for n in range(51)])

    def open_tasks(start, count):
        CurationTask.objects.bulk_create([
            CurationTask(owner=user, task_type=Types.OBSOLETE_INFO, node_ids=[memories[n].pk], reason="old",
                         suggested_tool=Tools.FORGET_CONCEPT) for n in range(start, start + count)])
    open_tasks(0, 1)
    flat(lambda: alice.get(reverse("dashboard:cognition-inbox")), open_tasks, _count_of('id="task-'),
         django_assert_max_num_queries, shown_at_fifty=25)


def test_undo_and_trash_queries_are_flat(alice, user, django_assert_max_num_queries):
    memories = nodes(user, *[f"Lighthouse log {n}: the lamp was checked." for n in range(50)])

    def forget(start, count):
        for memory in memories[start:start + count]:
            node_forget(actor=user, node_id=memory.pk, reason="obsolete")
    forget(0, 1)
    at_one = {}
    for name in ("cognition-undo", "cognition-trash"):
        alice.get(reverse(f"dashboard:{name}"))
        with CaptureQueriesContext(connection) as queries:
            alice.get(reverse(f"dashboard:{name}"))
        at_one[name] = len(queries)
    forget(1, 49)
    for name, marker in (("cognition-undo", 'id="undo-'), ("cognition-trash", "Restore</button>")):
        with django_assert_max_num_queries(at_one[name]):
            response = alice.get(reverse(f"dashboard:{name}"))
        assert text(response).count(marker) == 25


def test_scratchpad_queries_are_flat(alice, user, django_assert_max_num_queries):
    session = uuid.uuid4()

    def grow(start, count):
        ScratchpadItem.objects.bulk_create([
            ScratchpadItem(owner=user, session_id=session, agent_id=f"agent-{n % 3}", content=f"thought {n}",
                           delta_s=0.2, expires_at=timezone.now() + timedelta(minutes=30)) for n in range(count)])
    _pad_item(user, session, "agent-0", "thought")
    flat(lambda: alice.get(reverse("dashboard:cognition-scratchpad")), grow, _count_of('<p class="cg-text">'),
         django_assert_max_num_queries, shown_at_fifty=25)


def test_memory_page_lineage_queries_are_flat(alice, user, django_assert_max_num_queries):
    memory, = nodes(user, "Deploys go out on Tuesdays.")
    # More changes than the panel shows from the start, so that both sizes count the rest the same way.
    Event.objects.bulk_create([Event(owner=user, actor=user, action=Event.Action.UPDATED, node_ids=[memory.pk])
                               for _ in range(LINEAGE_DEPTH.high)])

    def annotate(start, count):
        for n in range(start, start + count):
            annotation_add(actor=user, node_id=memory.pk, text=f"note {n}")
    annotate(0, 1)
    flat(lambda: alice.get(reverse("dashboard:memory-detail", args=[memory.pk])), annotate,
         _count_of('<p class="cg-text">'), django_assert_max_num_queries)
