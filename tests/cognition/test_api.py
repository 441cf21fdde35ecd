"""Context Graph over REST (/api/v1/cognition/): each endpoint's status and shape, errors in the envelope naming the
field, another user's objects answering 404 (or an empty list), and lists whose query count does not grow."""
import uuid

import pytest

from apps.cognition.models import CgSession, CurationTask, Tombstone, UndoEntry
from apps.cognition.services.curation import node_forget
from apps.cognition.services.inbox import task_open
from apps.cognition.services.sessions import session_start
from tests.cognition.curation_support import link, nodes

pytestmark = pytest.mark.django_db

BASE = "/api/v1/cognition"
COGNITION_OPERATIONS = {
    f"{BASE}/sessions/": {"get"},
    f"{BASE}/sessions/{{session_id}}/": {"get"},
    f"{BASE}/tasks/": {"get"},
    f"{BASE}/tasks/{{task_id}}/approve/": {"post"},
    f"{BASE}/tasks/{{task_id}}/reject/": {"post"},
    f"{BASE}/nodes/": {"post"},
    f"{BASE}/nodes/search/": {"post"},
    f"{BASE}/nodes/merge/": {"post"},
    f"{BASE}/nodes/neighbourhood/": {"get"},
    f"{BASE}/nodes/recent/": {"get"},
    f"{BASE}/nodes/{{node_id}}/lineage/": {"get"},
    f"{BASE}/nodes/{{node_id}}/annotations/": {"post"},
    f"{BASE}/nodes/{{node_id}}/boost/": {"post"},
    f"{BASE}/nodes/{{node_id}}/forget/": {"post"},
    f"{BASE}/nodes/{{node_id}}/restore/": {"post"},
    f"{BASE}/tombstones/": {"get"},
    f"{BASE}/tombstones/search/": {"get"},
    f"{BASE}/undo/": {"get"},
    f"{BASE}/undo/{{reversal_hash}}/preview/": {"post"},
    f"{BASE}/undo/{{reversal_hash}}/apply/": {"post"},
    f"{BASE}/system-log/": {"get"},
    f"{BASE}/scratchpad/{{session_id}}/{{agent_id}}/": {"get", "post", "delete"},
    # Context Graph II (issue 20)
    f"{BASE}/sessions/{{session_id}}/utl/": {"get"},
    f"{BASE}/neuromodulation/": {"get"},
    f"{BASE}/homeostasis/": {"get"},
    f"{BASE}/causal/query/": {"get"},
    f"{BASE}/causal/path/": {"get"},
    f"{BASE}/causal/expand/": {"get"},
    f"{BASE}/nodes/{{node_id}}/entailment/": {"get"},
    f"{BASE}/adversarial/check/": {"post"},
    f"{BASE}/critique/": {"post"},
    f"{BASE}/quarantine/": {"get"},
    f"{BASE}/quarantine/{{node_id}}/release/": {"post"},
    f"{BASE}/plans/": {"post"},
    f"{BASE}/reflect/": {"post"},
    f"{BASE}/retrieval/compare/": {"post"},
    f"{BASE}/benchmarks/": {"post"},
    f"{BASE}/benchmarks/{{run_id}}/": {"get"},
    f"{BASE}/dreams/": {"get", "post"},
    f"{BASE}/dreams/{{dream_run_id}}/": {"get"},
    f"{BASE}/dreams/{{dream_run_id}}/interrupt/": {"post"},
    f"{BASE}/blind-spots/": {"get"},
    f"{BASE}/blind-spots/{{blind_spot_id}}/resolve/": {"post"},
    f"{BASE}/gardener/": {"get"},
    f"{BASE}/gardener/run/": {"post"},
}
RATIONALE = "The team's deployment constraint found while debugging the release"


def _store(api, content, **fields):
    response = api.post(f"{BASE}/nodes/", {"content": content, "rationale": RATIONALE, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _error(response, status, field=None):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] and error["message"]
    if field is not None:
        details = error["details"]  # a domain error's names the field; a serializer's is keyed by it
        assert details.get("field") == field if "field" in details else field in details, error
    return error


# --- nodes: store, search, navigation --------------------------------------------------------------------------

def test_store_search_neighbourhood_recent_and_lineage(api, user):
    first = _store(api, "Releases are deployed with blue-green switching behind the load balancer.")
    assert first["modality"] == "text" and "dopamine_signal" in first["steering_reward"]
    second = _store(api, "Database migrations must run before the blue-green switch.", link_to=[first["node_id"]],
                    importance=0.8)
    assert second["session_id"] == first["session_id"] and first["node_id"] in second["linked_to"]

    found = api.post(f"{BASE}/nodes/search/", {"query": "blue-green deployment", "top_k": 5}, format="json")
    assert found.status_code == 200, found.content
    assert {hit["node_id"] for hit in found.json()["results"]} >= {first["node_id"], second["node_id"]}

    around = api.get(f"{BASE}/nodes/neighbourhood/", {"focal_node_id": first["node_id"], "max_hops": 1})
    assert around.status_code == 200, around.content
    assert second["node_id"] in {node["node_id"] for node in around.json()["nodes"]}
    assert around.json()["focal_point"] == [first["node_id"]]

    recent = api.get(f"{BASE}/nodes/recent/", {"lookback_minutes": 10, "sort_by": "importance"})
    assert recent.status_code == 200 and recent.json()["nodes"][0]["node_id"] == second["node_id"]
    assert set(recent.json()["time_range"]) == {"start", "end"}

    lineage = api.get(f"{BASE}/nodes/{second['node_id']}/lineage/", {"depth": 3})
    assert lineage.status_code == 200, lineage.content
    assert lineage.json()["changes"][-1]["action"] == "created" and lineage.json()["deleted"] is False


def test_bad_input_names_the_field(api):
    _error(api.post(f"{BASE}/nodes/", {"content": "x", "rationale": "short"}, format="json"), 400, "rationale")
    _error(api.post(f"{BASE}/nodes/search/", {"query": "x", "top_k": 1000}, format="json"), 400, "top_k")
    _error(api.post(f"{BASE}/nodes/search/", {"query": "x", "colour": "red"}, format="json"), 400, "colour")
    _error(api.get(f"{BASE}/nodes/neighbourhood/", {"max_hops": 9}), 400, "max_hops")
    _error(api.get(f"{BASE}/system-log/", {"since": "yesterday-ish"}), 400, "since")
    _error(api.get(f"{BASE}/tasks/", {"status": "pending"}), 400, "status")
    _error(api.post(f"{BASE}/nodes/{uuid.uuid4()}/boost/", {"boost_factor": 5}, format="json"), 400, "boost_factor")
    # The service's own rule, reported under the REST name: a store needs one form of content.
    _error(api.post(f"{BASE}/nodes/", {"rationale": RATIONALE}, format="json"), 400)


# --- sessions ----------------------------------------------------------------------------------------------------

def test_sessions_list_and_detail_with_pulse_and_recent_items(api, user):
    stored = _store(api, "The staging cluster runs on three nodes in one region.")
    api.post(f"{BASE}/nodes/search/", {"query": "staging cluster"}, format="json")
    listed = api.get(f"{BASE}/sessions/")
    assert listed.status_code == 200
    [session] = listed.json()["results"]
    assert session["id"] == stored["session_id"] and session["interactions"] == 2
    assert set(session["pulse"]) == {"entropy", "coherence", "suggested"}
    detail = api.get(f"{BASE}/sessions/{stored['session_id']}/")
    assert detail.status_code == 200, detail.content
    items = detail.json()["recent_items"]
    assert [item["kind"] for item in items] == ["query", "store"]
    assert items[0]["activated"][0]["node_id"] == stored["node_id"]
    _error(api.get(f"{BASE}/sessions/not-a-uuid/"), 400, "session_id")
    _error(api.get(f"{BASE}/sessions/{uuid.uuid4()}/"), 404, "session_id")


def _query_count(django_assert_max_num_queries, api, url, expected):
    with django_assert_max_num_queries(expected):
        response = api.get(url)
    assert response.status_code == 200, response.content
    return response.json()


def test_session_list_queries_do_not_grow(api, user, django_assert_max_num_queries):
    session_start(actor=user)
    one = _query_count(django_assert_max_num_queries, api, f"{BASE}/sessions/", 4)
    CgSession.objects.bulk_create([CgSession(owner=user, interactions=3) for _ in range(49)])
    many = _query_count(django_assert_max_num_queries, api, f"{BASE}/sessions/?limit=50", 4)
    assert one["count"] == 1 and len(many["results"]) == 50


# --- curation tasks ----------------------------------------------------------------------------------------------

def _task(user, memories, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED,
          tool=CurationTask.SuggestedTool.ANNOTATE_NODE):
    return task_open(owner=user, task_type=task_type, node_ids=[m.pk for m in memories], reason="found by a test",
                     suggested_tool=tool)


def test_tasks_list_filter_approve_and_reject(api, user):
    x, y = nodes(user, "The limit is 100 requests a minute.", "The limit is 1000 requests a minute.")
    ambiguity = _task(user, [x, y])
    old, = nodes(user, "Deploys go out on Fridays.")
    obsolete = _task(user, [old], CurationTask.TaskType.OBSOLETE_INFO, CurationTask.SuggestedTool.FORGET_CONCEPT)
    listed = api.get(f"{BASE}/tasks/", {"status": "open"}).json()
    assert {task["id"] for task in listed["results"]} == {str(ambiguity.pk), str(obsolete.pk)}

    _error(api.post(f"{BASE}/tasks/{ambiguity.pk}/approve/", {}, format="json"), 400, "note")
    approved = api.post(f"{BASE}/tasks/{ambiguity.pk}/approve/", {"note": "It is 100 since March."}, format="json")
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    assert approved.json()["closed_by"] == user.username
    _error(api.post(f"{BASE}/tasks/{ambiguity.pk}/approve/", {"note": "again"}, format="json"), 409, "task_id")

    rejected = api.post(f"{BASE}/tasks/{obsolete.pk}/reject/", {}, format="json")
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert [task["id"] for task in api.get(f"{BASE}/tasks/", {"status": "rejected"}).json()["results"]] == [
        str(obsolete.pk)]
    assert api.get(f"{BASE}/tasks/", {"status": "open"}).json()["count"] == 0
    _error(api.post(f"{BASE}/tasks/{obsolete.pk}/reject/", {"note": "x"}, format="json"), 400, "note")


def test_task_list_queries_do_not_grow(api, user, django_assert_max_num_queries):
    memories = nodes(user, *(f"Note number {index} about the build cache." for index in range(50)))
    _task(user, memories[:1])
    one = _query_count(django_assert_max_num_queries, api, f"{BASE}/tasks/", 4)
    for memory in memories[1:]:
        _task(user, [memory])
    many = _query_count(django_assert_max_num_queries, api, f"{BASE}/tasks/?limit=50", 4)
    assert one["count"] == 1 and len(many["results"]) == 50


# --- curation, trash and undo ------------------------------------------------------------------------------------

def test_annotate_boost_merge_forget_restore_and_the_undo_log(api, user):
    a, b, c = nodes(user, "The user prefers dark mode in every editor.", "Dark mode in all editors, says the user.",
                    "Builds are cached in the CI's object store.", importance=0.4)
    link(user, a, c, 0.5)
    note = api.post(f"{BASE}/nodes/{a.pk}/annotations/", {"text": "Confirmed in the March survey."}, format="json")
    assert note.status_code == 201 and note.json()["node_id"] == str(a.pk)
    boosted = api.post(f"{BASE}/nodes/{c.pk}/boost/", {"boost_factor": 2.0, "reason": "CI speed"}, format="json")
    assert boosted.status_code == 200 and boosted.json()["new_importance"] == pytest.approx(0.8)

    merged = api.post(f"{BASE}/nodes/merge/", {"source_node_ids": [str(a.pk), str(b.pk)],
                                               "target_name": "Dark mode"}, format="json")
    assert merged.status_code == 200, merged.content
    merge_hash = merged.json()["reversal_hash"]
    assert merged.json()["nodes_merged"] == 2 and merged.json()["merged_node_id"]

    forgotten = api.post(f"{BASE}/nodes/{c.pk}/forget/", {"reason": "obsolete"}, format="json")
    assert forgotten.status_code == 200 and forgotten.json()["soft_deleted"] is True

    trash = api.get(f"{BASE}/tombstones/").json()
    assert {row["node_id"] for row in trash["results"]} == {str(a.pk), str(b.pk), str(c.pk)}
    assert all(row["recoverable"] for row in trash["results"])
    assert [row["node_id"] for row in api.get(f"{BASE}/tombstones/", {"deletion_reason": "obsolete"})
            .json()["results"]] == [str(c.pk)]
    hits = api.get(f"{BASE}/tombstones/search/", {"query": "CI build cache", "top_k": 1})
    assert hits.status_code == 200 and hits.json()["tombstones"][0]["node_id"] == str(c.pk)

    undo = api.get(f"{BASE}/undo/").json()
    assert [entry["operation"] for entry in undo["results"]] == ["forget", "merge"]
    assert all(entry["usable"] for entry in undo["results"])

    preview = api.post(f"{BASE}/nodes/{c.pk}/restore/", {"preview": True}, format="json")
    assert preview.status_code == 200 and preview.json()["executed"] is False
    assert Tombstone.objects.filter(memory=c).exists()
    restored = api.post(f"{BASE}/nodes/{c.pk}/restore/", {}, format="json")
    assert restored.status_code == 200 and restored.json()["restored_nodes"] == [str(c.pk)]
    assert restored.json()["plan"]["adds"]["edges"] == 1

    previewed = api.post(f"{BASE}/undo/{merge_hash}/preview/", format="json")
    assert previewed.status_code == 200 and previewed.json()["original_operation"] == "merge"
    applied = api.post(f"{BASE}/undo/{merge_hash}/apply/", format="json")
    assert applied.status_code == 200 and applied.json()["executed"] is True
    _error(api.post(f"{BASE}/undo/{merge_hash}/apply/", format="json"), 400, "reversal_hash")
    assert api.get(f"{BASE}/undo/", {"usable": "true"}).json()["count"] == 0
    assert api.get(f"{BASE}/tombstones/").json()["count"] == 0

    log = api.get(f"{BASE}/system-log/", {"since": "-1h"})
    assert log.status_code == 200, log.content
    assert {"merge", "prune", "restore"} <= {entry["action"] for entry in log.json()["entries"]}


def test_trash_and_undo_lists_queries_do_not_grow(api, user, django_assert_max_num_queries):
    memories = nodes(user, *(f"Obsolete note {index} about the old build server." for index in range(50)))
    node_forget(actor=user, node_id=memories[0].pk, reason="obsolete")
    tombstones = _query_count(django_assert_max_num_queries, api, f"{BASE}/tombstones/", 4)
    entries = _query_count(django_assert_max_num_queries, api, f"{BASE}/undo/", 3)
    for memory in memories[1:]:
        node_forget(actor=user, node_id=memory.pk, reason="obsolete")
    assert len(_query_count(django_assert_max_num_queries, api, f"{BASE}/tombstones/?limit=50", 4)["results"]) == 50
    assert len(_query_count(django_assert_max_num_queries, api, f"{BASE}/undo/?limit=50", 3)["results"]) == 50
    assert tombstones["count"] == entries["count"] == 1


# --- scratchpad --------------------------------------------------------------------------------------------------

def test_scratchpad_store_read_and_clear(api):
    pad = f"{BASE}/scratchpad/{uuid.uuid4()}/planner/"
    stored = api.post(pad, {"content": "Try the cache key without the lockfile hash.", "tags": ["ci"]},
                      format="json")
    assert stored.status_code == 201, stored.content
    assert stored.json()["items_count"] == 1 and stored.json()["stored_id"] == stored.json()["items"][0]["id"]
    read = api.get(pad).json()
    assert read["items"][0]["content"].startswith("Try the cache key") and read["pad_id"] == stored.json()["pad_id"]
    cleared = api.delete(pad)
    assert cleared.status_code == 200 and cleared.json()["cleared"] == 1 and cleared.json()["items"] == []
    _error(api.post(pad, {"content": "x", "privacy": "public"}, format="json"), 400, "privacy")
    _error(api.get(f"{BASE}/scratchpad/not-a-uuid/planner/"), 400, "session_id")


# --- isolation ---------------------------------------------------------------------------------------------------

def test_another_users_objects_are_not_found_and_not_listed(api, bob_api, user):
    stored = _store(api, "Alice's private note: the vault unseals with three of five keys.")
    node = stored["node_id"]
    x, y = nodes(user, "The quota is 10 GB.", "The quota is 100 GB.")
    task = _task(user, [x, y])
    gone, = nodes(user, "Alice's obsolete runbook for the old vault.")
    undo_hash = node_forget(actor=user, node_id=gone.pk, reason="obsolete").reversal_hash
    session = stored["session_id"]
    api.post(f"{BASE}/scratchpad/{session}/planner/", {"content": "Alice's thought."}, format="json")

    for url in (f"{BASE}/sessions/", f"{BASE}/tasks/", f"{BASE}/tombstones/", f"{BASE}/undo/"):
        assert bob_api.get(url).json()["count"] == 0, url
    _error(bob_api.get(f"{BASE}/sessions/{session}/"), 404, "session_id")
    _error(bob_api.post(f"{BASE}/tasks/{task.pk}/approve/", {"note": "mine now"}, format="json"), 404, "task_id")
    _error(bob_api.post(f"{BASE}/tasks/{task.pk}/reject/", format="json"), 404, "task_id")
    _error(bob_api.get(f"{BASE}/nodes/{node}/lineage/"), 404, "node_id")
    _error(bob_api.post(f"{BASE}/nodes/{node}/annotations/", {"text": "Bob was here."}, format="json"), 404,
           "node_id")
    _error(bob_api.post(f"{BASE}/nodes/{node}/boost/", {}, format="json"), 404, "node_id")
    _error(bob_api.post(f"{BASE}/nodes/{node}/forget/", {"reason": "obsolete"}, format="json"), 404, "node_id")
    _error(bob_api.post(f"{BASE}/nodes/merge/", {"source_node_ids": [node, str(x.pk)], "target_name": "Bob's"},
                        format="json"), 404)
    _error(bob_api.post(f"{BASE}/nodes/{gone.pk}/restore/", {}, format="json"), 404, "node_id")
    _error(bob_api.post(f"{BASE}/undo/{undo_hash}/preview/", format="json"), 404, "reversal_hash")
    _error(bob_api.post(f"{BASE}/undo/{undo_hash}/apply/", format="json"), 404, "reversal_hash")
    _error(bob_api.get(f"{BASE}/nodes/neighbourhood/", {"focal_node_id": node}), 404, "focal_node_id")
    _error(bob_api.get(f"{BASE}/nodes/recent/", {"session_id": session}), 404, "session_id")
    _error(bob_api.post(f"{BASE}/scratchpad/{session}/planner/", {"content": "Bob's thought."}, format="json"),
           404, "session_id")
    assert bob_api.get(f"{BASE}/scratchpad/{session}/planner/").json()["items"] == []
    assert bob_api.delete(f"{BASE}/scratchpad/{session}/planner/").json()["cleared"] == 0
    assert bob_api.post(f"{BASE}/nodes/search/", {"query": "vault unseals keys"}, format="json").json()[
        "results"] == []
    assert bob_api.get(f"{BASE}/tombstones/search/", {"query": "old vault runbook"}).json()["tombstones"] == []
    assert bob_api.get(f"{BASE}/system-log/").json()["entries"] == []
    assert bob_api.get(f"{BASE}/nodes/recent/").json()["nodes"] == []
    # Nothing of Alice's changed.
    assert CurationTask.objects.get(pk=task.pk).status == "open"
    assert UndoEntry.objects.get(pk=undo_hash).used_at is None and api.get(
        f"{BASE}/scratchpad/{session}/planner/").json()["items_count"] == 1


def test_a_read_token_may_search_but_not_write(user, api_client_for):
    reader = api_client_for(user, scopes=("read",))
    assert reader.post(f"{BASE}/nodes/search/", {"query": "anything"}, format="json").status_code == 200
    assert reader.post(f"{BASE}/nodes/", {"content": "x", "rationale": RATIONALE}, format="json").status_code == 403
