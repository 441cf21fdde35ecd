"""A dream on the live graph, through the whole ASGI application: its dream.progress (run, step, batch, counters: each
phase's first and last batch, at most one a second between) reaches the owner's cubes, each batch's dream.changed carries the nodes it made and the outgoing edges it
changed to the cube they are in, and another user's socket hears nothing of it."""
import pytest

from apps.cognition.services.dream import dream_execute, dream_trigger
from apps.cubes.services import cube_ensure_personal
from apps.memories.services import memory_store_many

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

STAGING = ("The staging cluster runs Kubernetes 1.30 on three nodes.",
           "Staging uses Kubernetes version 1.30 with three worker nodes.",
           "Our staging Kubernetes cluster has three nodes running 1.30.")


def _members(user) -> list[str]:
    return [str(result.memory.pk) for result in memory_store_many(
        actor=user, items=[{"content": text} for text in STAGING], link=False)]


def _dream(user):
    return dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2).pk)


async def test_a_dream_publishes_its_progress_and_each_batchs_changes_to_the_owners_cube(
        user, other_user, personal_cube, open_socket, bearer, db_call):
    members = await db_call(_members, user)
    bobs_cube = (await db_call(cube_ensure_personal, actor=other_user)).pk
    connected, socket = await open_socket([await bearer(user)])
    assert connected and (await socket.subscribe(personal_cube))[-1]["type"] == "subscribed"
    _, bobs = await open_socket([await bearer(other_user)])
    assert (await bobs.subscribe(bobs_cube))[-1]["type"] == "subscribed"

    run = await db_call(_dream, user)
    assert run.status == "completed", run.notes
    progress, changed = [], []
    while not progress or progress[-1]["payload"]["status"] == "running":
        event = await socket.event()
        assert event["cube"] == personal_cube
        if event["kind"] == "dream.progress":
            progress.append(event)
        elif event["kind"] == "dream.changed":
            changed.append(event)
    counters = run.checkpoint["counters"]
    # Each phase's first and last batch tell where the run stands, and the batches between at most once a second.
    batches = [event["payload"]["batch"] for event in progress[:-1]]
    assert batches[0] == 1 and batches[-1] == counters["batches"] and batches == sorted(set(batches))
    assert list(dict.fromkeys(event["payload"]["phase"] for event in progress[:-1])) == run.checkpoint["phases_done"]
    assert {event["payload"]["dream_run_id"] for event in progress} == {str(run.pk)}
    assert [event["payload"]["phase"] for event in progress[:2]] == ["nrem_replay", "nrem_link"]
    assert progress[-2]["payload"]["counters"] == progress[-1]["payload"]["counters"] == counters
    assert progress[-1]["payload"]["status"] == "completed"

    [made] = changed  # only the summarising batch changed the graph
    payload = made["payload"]
    [summary] = payload["nodes"]
    assert (payload["dream_run_id"], payload["phase"], summary["kind"]) == (str(run.pk), "nrem_summarise", "summary")
    outgoing = {entry["id"]: entry["outgoing_edges"] for entry in payload["relinked"]}
    assert set(outgoing) == {*members, summary["id"]}
    for member in members:
        [edge] = outgoing[member]
        assert (edge["source"], edge["target"], edge["type"]) == (member, summary["id"], "hierarchical")
        assert 0.75 <= edge["weight"] <= 1
    assert await bobs.nothing_more()

