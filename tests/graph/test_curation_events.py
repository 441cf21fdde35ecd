"""Context Graph's curation on the live graph: a subscribed socket gets memories.merged, memory.forgotten and
undo.applied after their commits, in order, with the nodes and edges the graph page needs."""
import pytest

from apps.cognition.services.curation import node_forget, nodes_merge
from apps.cognition.services.undo import undo_apply
from tests.cognition.curation_support import link, nodes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_merge_forget_and_undo_arrive_on_the_socket(user, personal_cube, open_socket, bearer, db_call):
    a, b, x = await db_call(nodes, user, "The user prefers dark mode in every editor.",
                            "Dark mode is what the user wants in all their editors.", "Editors read the dotfiles.")
    await db_call(link, user, a, x, 0.6)
    connected, socket = await open_socket([await bearer(user)])
    assert connected and (await socket.subscribe(personal_cube))[0]["type"] == "subscribed"

    merged = await db_call(nodes_merge, actor=user, source_node_ids=[str(a.pk), str(b.pk)], target_name="dark mode")
    kinds = [(await socket.event()) for _ in range(4)]
    assert [event["kind"] for event in kinds] == ["memories.created", "memory.soft_deleted", "memory.soft_deleted",
                                                  "memories.merged"]
    payload = kinds[-1]["payload"]
    assert payload["node"]["id"] == str(merged.merged.pk) and sorted(payload["merged_from"]) == sorted(
        [str(a.pk), str(b.pk)])
    assert payload["edges"] == [{"source": str(merged.merged.pk), "target": str(x.pk), "type": "semantic",
                                 "weight": 0.6}]

    forgotten = await db_call(node_forget, actor=user, node_id=str(x.pk), reason="obsolete", cascade_edges=False)
    assert (await socket.event())["kind"] == "memory.soft_deleted"
    event = await socket.event()
    assert event["kind"] == "memory.forgotten"
    assert event["payload"] == {"id": str(x.pk), "reason": "obsolete",
                                "restore_deadline": forgotten.restore_deadline.isoformat()}

    await db_call(undo_apply, actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert (await socket.event())["kind"] == "memory.hard_deleted"
    applied = await socket.event()
    assert applied["kind"] == "undo.applied" and applied["payload"]["removed"] == [str(merged.merged.pk)]
    assert {node["id"] for node in applied["payload"]["nodes"]} == {str(a.pk), str(b.pk)}
    assert {(edge["source"], edge["target"]) for edge in applied["payload"]["edges"]} == {(str(a.pk), str(x.pk))}
    assert await socket.nothing_more()
