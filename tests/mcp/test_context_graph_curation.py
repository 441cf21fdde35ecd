"""Context Graph's curation tools through the SDK's own client, in process: schemas are the seed's (inputSchema, and
the outputSchema every answer is validated against by the client), the seed family's error codes with data.field,
and user A against user B on every tool."""
from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async

from apps.cognition.models import Annotation, NodeProfile, Tombstone, UndoEntry
from apps.cubes.services import cube_register, cube_share
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_store
from tests.cognition.curation_support import everything, link, nodes
from tests.contracts import contract
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.context_graph_calls import ok, refused
from tests.mcp.support import in_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PROFILE = "context-graph"
SEED = contract("context_graph")["tools"]
CURATION_TOOLS = ("merge_concepts", "annotate_node", "forget_concept", "restore_from_hash", "boost_importance",
                  "search_tombstones")
COMBINATORS = {"oneOf", "anyOf", "allOf"}


@pytest.fixture
def alice_nodes(user):
    a, b, x = nodes(user, "The user prefers dark mode in every editor.",
                    "Dark mode is what the user wants in all their editors.", "Editors read the dotfiles repository.")
    link(user, a, x, 0.4)
    link(user, b, x, 0.7)
    return {"a": str(a.pk), "b": str(b.pk), "x": str(x.pk)}


async def test_the_curation_tools_have_the_seeds_schemas(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in CURATION_TOOLS:
        tool = tools[name]
        assert_seed_schema(tool.input_schema, SEED[name]["inputSchema"], name)
        assert tool.output_schema == SEED[name]["outputSchema"], name
        assert tool.description.startswith(SEED[name]["description"]), name
    restore = tools["restore_concept"]
    assert restore.input_schema["required"] == ["node_id"]
    assert restore.input_schema["properties"]["node_id"] == {
        "type": "string", "format": "uuid", "description": restore.input_schema["properties"]["node_id"]["description"]}
    for tool in tools.values():
        assert not COMBINATORS & set(tool.input_schema), tool.name


async def test_annotate_and_boost(alice_token, alice_nodes):
    async with in_process(alice_token, PROFILE) as client:
        note = await ok(client, "annotate_node", {
            "node_id": alice_nodes["a"], "annotation": "Also in the terminal.", "annotation_type": "reference",
            "reference_node_id": alice_nodes["x"]})
        boosted = await ok(client, "boost_importance", {"node_id": alice_nodes["a"], "boost_factor": 1.5,
                                                        "reason": "asked twice"})
        again = await ok(client, "boost_importance", {"node_id": alice_nodes["a"]})
    assert note["node_id"] == alice_nodes["a"]
    annotation = await database_sync_to_async(Annotation.objects.get)(pk=note["annotation_id"])
    assert (annotation.annotation_type, str(annotation.reference_id)) == ("reference", alice_nodes["x"])
    assert (boosted["previous_importance"], boosted["new_importance"]) == (0.5, 0.75)
    assert (again["previous_importance"], again["new_importance"]) == (0.75, 1.0)


async def test_merge_preview_and_undo_by_hash(alice_token, alice_nodes):
    async with in_process(alice_token, PROFILE) as client:
        merged = await ok(client, "merge_concepts", {"source_node_ids": [alice_nodes["a"], alice_nodes["b"]],
                                                     "target_name": "Dark mode", "merge_strategy": "concatenate"})
        assert (merged["nodes_merged"], merged["edges_redirected"], merged["priors_compatible"]) == (2, 1, True)
        assert merged["relational_edge_created"] is False and len(merged["reversal_hash"]) == 64
        preview = await ok(client, "restore_from_hash", {"reversal_hash": merged["reversal_hash"]})
        assert (preview["preview"], preview["original_operation"], preview["restored_edges"]) == (True, "merge", 2)
        assert sorted(preview["restored_nodes"]) == sorted([alice_nodes["a"], alice_nodes["b"]])
        assert preview["plan"]["removes"]["nodes"] == [merged["merged_node_id"]]
        done = await ok(client, "restore_from_hash", {"reversal_hash": merged["reversal_hash"], "preview": False})
        assert done["preview"] is False and done["success"] is True
        await refused(client, "restore_from_hash", {"reversal_hash": merged["reversal_hash"], "preview": False},
                      -32602, "reversal_hash")
    assert not await database_sync_to_async(Memory.objects.filter(pk=merged["merged_node_id"]).exists)()
    assert await database_sync_to_async(MemoryLink.objects.count)() == 2


async def test_an_undo_changed_since_its_preview_is_refused_with_32001(alice_token, alice_nodes):
    async with in_process(alice_token, PROFILE) as client:
        merged = await ok(client, "merge_concepts", {"source_node_ids": [alice_nodes["a"], alice_nodes["b"]],
                                                     "target_name": "Dark mode"})
        await ok(client, "restore_from_hash", {"reversal_hash": merged["reversal_hash"]})
        await ok(client, "annotate_node", {"node_id": merged["merged_node_id"], "annotation": "Written since."})
        await refused(client, "restore_from_hash", {"reversal_hash": merged["reversal_hash"], "preview": False},
                      -32001, "reversal_hash")


async def test_priors_that_disagree_give_a_relational_edge(user, alice_token, alice_nodes):
    await database_sync_to_async(NodeProfile.objects.create)(memory_id=alice_nodes["a"], domain="code")
    await database_sync_to_async(NodeProfile.objects.create)(memory_id=alice_nodes["b"], domain="medical")
    async with in_process(alice_token, PROFILE) as client:
        related = await ok(client, "merge_concepts", {"source_node_ids": [alice_nodes["a"], alice_nodes["b"]],
                                                      "target_name": "Dark mode"})
    assert (related["priors_compatible"], related["relational_edge_created"]) == (False, True)
    assert "code" in related["relational_note"] and "merged_node_id" not in related
    async with in_process(alice_token, PROFILE) as client:
        undone = await ok(client, "restore_from_hash", {"reversal_hash": related["reversal_hash"], "preview": False})
    # The seed knows merges and forgets: the link was this merge_concepts call's doing.
    assert (undone["original_operation"], undone["restored_nodes"]) == ("merge", [])


async def test_forget_search_the_trash_and_restore_the_concept(alice_token, alice_nodes):
    async with in_process(alice_token, PROFILE) as client:
        forgotten = await ok(client, "forget_concept", {"node_id": alice_nodes["a"], "reason": "obsolete"})
        assert (forgotten["deleted"], forgotten["soft_deleted"], forgotten["edges_removed"]) == (True, True, 1)
        assert forgotten["restore_deadline"] and forgotten["reversal_hash"]
        found = await ok(client, "search_tombstones", {"query": "which color theme does the user like in editors"})
        [hit] = found["tombstones"]
        assert (hit["node_id"], hit["deletion_reason"], hit["recoverable"]) == (alice_nodes["a"], "obsolete", True)
        assert hit["deleted_by"] == "alice" and "obsolete" in hit["explanation"]
        assert "restore_concept" in found["recovery_instructions"]
        assert (await ok(client, "search_tombstones", {"query": "dark mode", "deletion_reason": "adversarial"}
                         ))["tombstones"] == []
        assert (await ok(client, "search_tombstones", {"query": "dark mode", "deleted_after": "2999-01-01T00:00:00Z"}
                         ))["tombstones"] == []
        restored = await ok(client, "restore_concept", {"node_id": alice_nodes["a"]})
        assert restored["restored_nodes"] == [alice_nodes["a"]] and restored["original_operation"] == "forget"
        assert (await ok(client, "search_tombstones", {"query": "dark mode"}))["tombstones"] == []
        hard = await ok(client, "forget_concept", {"node_id": alice_nodes["b"], "reason": "user_requested",
                                                   "soft_delete": False})
        assert hard["soft_deleted"] is False and hard["reversal_hash"] is None and "restore_deadline" not in hard
    assert not await database_sync_to_async(Memory.objects.filter(pk=alice_nodes["b"]).exists)()


async def test_bad_input_names_the_field(alice_token, alice_nodes):
    node = alice_nodes["a"]
    async with in_process(alice_token, PROFILE) as client:
        for tool, arguments, field in (
            ("annotate_node", {"annotation": "x"}, "node_id"),
            ("annotate_node", {"node_id": "not-a-uuid", "annotation": "x"}, "node_id"),
            ("annotate_node", {"node_id": node, "annotation": "x" * 1025}, "annotation"),
            ("annotate_node", {"node_id": node, "annotation": "x", "annotation_type": "gossip"}, "annotation_type"),
            ("boost_importance", {"node_id": node, "boost_factor": 3}, "boost_factor"),
            ("boost_importance", {"node_id": node, "boost_factor": "2"}, "boost_factor"),
            ("boost_importance", {"node_id": node, "colour": "red"}, "colour"),
            ("boost_importance", {"node_id": str(uuid.uuid4())}, "node_id"),
            ("merge_concepts", {"source_node_ids": [node], "target_name": "x"}, "source_node_ids"),
            ("merge_concepts", {"source_node_ids": [node, node], "target_name": "x"}, "source_node_ids"),
            ("merge_concepts", {"source_node_ids": [node, alice_nodes["b"]], "target_name": "x",
                                "merge_strategy": "average"}, "merge_strategy"),
            ("forget_concept", {"node_id": node}, "reason"),
            ("forget_concept", {"node_id": node, "reason": "obsolete", "soft_delete": False}, "soft_delete"),
            ("restore_from_hash", {"reversal_hash": "0" * 64}, "reversal_hash"),
            ("restore_concept", {"node_id": node}, "node_id"),
            ("search_tombstones", {"query": "x", "top_k": 0}, "top_k"),
            ("search_tombstones", {"query": "x", "deleted_after": "yesterday"}, "deleted_after"),
            ("search_tombstones", {"query": "x", "deletion_reason": "merged"}, "deletion_reason"),
        ):
            await refused(client, tool, arguments, -32602, field)


async def test_a_node_of_another_kind_is_refused_naming_its_profile(user, alice_token, alice_nodes):
    decision = await database_sync_to_async(memory_store)(actor=user, content="Decision: use Postgres.",
                                                          kind="decision")
    async with in_process(alice_token, PROFILE) as client:
        error = await refused(client, "merge_concepts", {"source_node_ids": [alice_nodes["a"], str(decision.memory.pk)],
                                                         "target_name": "x"}, -32602, "source_node_ids")
    assert "mind" in error["message"]


async def test_bob_can_neither_see_nor_change_alices_curation(user, alice_token, bob_token, alice_nodes):
    async with in_process(alice_token, PROFILE) as alice:
        forgotten = await ok(alice, "forget_concept", {"node_id": alice_nodes["x"], "reason": "obsolete"})
    before = await database_sync_to_async(everything)()
    undo = await database_sync_to_async(UndoEntry.objects.get)()
    node = alice_nodes["a"]
    async with in_process(bob_token, PROFILE) as bob:
        for tool, arguments, field in (
            ("annotate_node", {"node_id": node, "annotation": "mine now"}, "node_id"),
            ("annotate_node", {"node_id": str(uuid.uuid4()), "annotation": "x", "reference_node_id": node}, "node_id"),
            ("boost_importance", {"node_id": node}, "node_id"),
            ("merge_concepts", {"source_node_ids": [node, alice_nodes["b"]], "target_name": "x"}, "source_node_ids"),
            ("forget_concept", {"node_id": node, "reason": "obsolete"}, "node_id"),
            ("restore_from_hash", {"reversal_hash": forgotten["reversal_hash"], "preview": False}, "reversal_hash"),
            ("restore_from_hash", {"reversal_hash": forgotten["reversal_hash"]}, "reversal_hash"),
            ("restore_concept", {"node_id": alice_nodes["x"]}, "node_id"),
        ):
            await refused(bob, tool, arguments, -32602, field)
        assert (await ok(bob, "search_tombstones", {"query": "dotfiles repository"}))["tombstones"] == []
    assert await database_sync_to_async(everything)() == before
    undo_after = await database_sync_to_async(UndoEntry.objects.get)()
    assert (undo_after.used_at, undo_after.previewed_digest) == (undo.used_at, undo.previewed_digest)
    assert await database_sync_to_async(Tombstone.objects.count)() == 1


async def test_a_reader_of_a_shared_cube_is_refused_with_32001(user, other_user, bob_token):
    def shared():
        cube = cube_register(actor=user, cube_id="alice-shared")
        cube_share(actor=user, cube_id=cube.pk, user=other_user.username, role="reader")
        return [str(node.pk) for node in nodes(user, "Shared dark mode note.", "Shared dark mode memo.",
                                               cube_id=cube.pk)]

    first, second = await database_sync_to_async(shared)()
    async with in_process(bob_token, PROFILE) as bob:
        for tool, arguments, field in (
            ("annotate_node", {"node_id": first, "annotation": "reader's note"}, "node_id"),
            ("boost_importance", {"node_id": first}, "node_id"),
            ("merge_concepts", {"source_node_ids": [first, second], "target_name": "x"}, "source_node_ids"),
            ("forget_concept", {"node_id": first, "reason": "obsolete"}, "node_id"),
        ):
            await refused(bob, tool, arguments, -32001, field)
    assert await database_sync_to_async(Memory.objects.filter(deleted_at__isnull=True).count)() == 2
