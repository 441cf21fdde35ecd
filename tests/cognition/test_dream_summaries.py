"""NREM summarise and commit on the owner's real graph (PostgreSQL, pgvector, MiniLM): a cluster of close nodes gets an
extractive summary with hierarchical edges member -> summary that entailment_query walks, a grown cluster rewrites its
summary in place, scratchpad thoughts over their threshold are committed; counters equal the rows changed, and the
run's undo puts every row back exactly."""
from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from apps.cognition.models import DreamList, Event, NodeProfile, ScratchpadItem
from apps.cognition.selectors.entailment import node_entailment
from apps.cognition.services.dream import clusters, dream_execute, dream_trigger
from apps.cognition.services.scratchpad import scratchpad_store
from apps.cognition.services.undo import undo_apply
from apps.cubes.services import cube_register, cube_share
from apps.memories.models import Memory, MemoryLink, MemoryVector
from tests.cognition.curation_support import everything, graph_state, nodes
from tests.cognition.dream_support import graph_of

pytestmark = pytest.mark.django_db

STAGING = ("The staging cluster runs Kubernetes 1.30 on three nodes.",
           "Staging uses Kubernetes version 1.30 with three worker nodes.",
           "Our staging Kubernetes cluster has three nodes running 1.30.")
UPGRADE = "The staging Kubernetes cluster is upgraded to 1.31 next week."  # cosine 0.77 to the first only
APART = ("The user prefers dark mode in every editor.", "Grandma bakes apple pie on Sundays.")


def dream(user, **options):
    return dream_execute(run_id=dream_trigger(actor=user, phase="nrem", **options).pk)


def summaries(user):
    return list(Memory.objects.filter(owner=user, kind="summary", deleted_at__isnull=True))


def vector(memory) -> np.ndarray:
    return np.asarray(MemoryVector.objects.get(memory=memory).embedding, dtype=np.float64)


def cosine(a, b) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_cluster_gets_an_extractive_summary_that_entailment_walks_and_the_undo_removes(user):
    members = nodes(user, *STAGING)
    nodes(user, *APART)
    before = everything()
    run = dream(user, batch_size=2)
    assert run.status == "completed", run.notes
    [summary] = summaries(user)
    # Extractive: every line is one of the members' sentences.
    lines = [line.removeprefix("- ") for line in summary.content.splitlines() if line]
    assert lines and set(lines) <= set(STAGING)
    assert summary.metadata["dream_summary"] == {"dream_run_id": str(run.pk), "members": 3}
    edges = MemoryLink.objects.filter(target=summary)
    assert sorted(str(pk) for pk in edges.values_list("source_id", flat=True)) == sorted(str(m.pk) for m in members)
    for edge in edges:
        assert (edge.link_type, edge.origin) == ("hierarchical", "nrem")
        assert edge.weight == pytest.approx(cosine(vector(edge.source), vector(summary)), abs=1e-6)
    assert not MemoryLink.objects.filter(source=summary).exists()  # stored without nearest-neighbour links
    counters = run.checkpoint["counters"]
    assert (counters["summaries_created"], counters["summary_edges_created"], counters["summaries_updated"]) == \
        (1, 3, 0)
    assert counters["nodes_clustered"] == 5
    entailed = node_entailment(actor=user, node_id=members[1].pk, direction="ancestors")
    assert [entry.node_id for entry in entailed.ancestors] == [str(summary.pk)]
    # Lineage: the summary's Event names the nodes it was derived from.
    [told] = Event.objects.filter(detail__has_key="derived_from")
    assert told.node_ids[0] == summary.pk and sorted(told.detail["derived_from"]) == sorted(str(m.pk) for m in members)
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    assert everything() == before


def test_a_grown_cluster_rewrites_its_summary_in_place_and_the_undo_restores_it_exactly(user):
    members = nodes(user, *STAGING)
    first = dream(user)
    [summary] = summaries(user)
    grown = nodes(user, UPGRADE)[0]
    before = graph_state([summary.pk, *(m.pk for m in members), grown.pk])
    second = dream(user)
    assert second.status == "completed", second.notes
    [rewritten] = summaries(user)
    assert rewritten.pk == summary.pk  # members overlap 3/4 >= 0.6: updated, not added
    assert rewritten.metadata["dream_summary"] == {"dream_run_id": str(second.pk), "members": 4}
    assert "Staging uses Kubernetes version 1.30" in rewritten.content != summary.content
    sources = set(MemoryLink.objects.filter(target=summary, link_type="hierarchical").values_list("source_id",
                                                                                                  flat=True))
    assert sources == {m.pk for m in [*members, grown]}
    counters = second.checkpoint["counters"]
    assert (counters["summaries_created"], counters["summaries_updated"], counters["summary_edges_created"]) == \
        (0, 1, 1)
    assert counters["summary_edges_reweighted"] == 3  # a new text, a new vector: each stayer's cosine moved
    assert first.checkpoint["counters"]["summaries_created"] == 1
    undo_apply(actor=user, reversal_hash=second.reversal_hash, preview=False)
    assert graph_state([summary.pk, *(m.pk for m in members), grown.pk]) == before
    # Nothing new to say a third time: the summary stands as it is.
    third = dream(user)
    assert third.checkpoint["counters"]["summaries_updated"] == 1  # the undone rewrite is done again
    fourth = dream(user)
    assert (fourth.checkpoint["counters"]["summaries_updated"], fourth.checkpoint["counters"]["summaries_unchanged"]) \
        == (0, 1)


def test_a_dream_summarises_only_its_owners_nodes(user, other_user):
    cube_register(actor=other_user, cube_id="bob-notes")
    cube_share(actor=other_user, cube_id="bob-notes", user=user.username, role="writer")
    theirs = nodes(other_user, *STAGING, cube_id="bob-notes")
    before = graph_state([node.pk for node in theirs])
    run = dream(user)
    assert run.checkpoint["counters"]["summaries_created"] == 0
    assert graph_state([node.pk for node in theirs]) == before
    assert any("no cluster was summarised" in note for note in run.notes)


def test_surprising_scratchpad_thoughts_are_committed_and_the_undo_puts_them_back(user, other_user):
    session_id = "6f0c7a4e-1b2d-4c3e-8f9a-0b1c2d3e4f5a"
    nodes(user, "The release train leaves every second Tuesday.")
    kept = scratchpad_store(actor=user, session_id=session_id, agent_id="planner",
                            content="Penguins nest on the ice shelf through the winter.",
                            auto_commit_threshold=0.3).stored
    # Told already (the graph holds it): no surprise.
    timid = scratchpad_store(actor=user, session_id=session_id, agent_id="planner",
                             content="The release train leaves every second Tuesday.",
                             auto_commit_threshold=0.3).stored
    theirs = scratchpad_store(actor=other_user, session_id="7f0c7a4e-1b2d-4c3e-8f9a-0b1c2d3e4f5a",
                              agent_id="planner", content="Bob's thought about ferries.",
                              auto_commit_threshold=0.3).stored
    stale = scratchpad_store(actor=user, session_id=session_id, agent_id="planner", content="An old thought.",
                             auto_commit_threshold=0.3).stored
    ScratchpadItem.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert kept.delta_s > kept.auto_commit_threshold and timid.delta_s <= timid.auto_commit_threshold
    items_before = {row.pk: row for row in ScratchpadItem.objects.all()}
    run = dream(user)
    assert run.status == "completed", run.notes
    counters = run.checkpoint["counters"]
    assert (counters["thoughts_examined"], counters["thoughts_committed"]) == (1, 1)
    [node] = Memory.objects.filter(owner=user, content=kept.content)
    profile = NodeProfile.objects.get(memory=node)
    assert "scratchpad" in profile.rationale and profile.source == "scratchpad"
    assert node.importance == pytest.approx(min(1.0, kept.delta_s))
    assert set(ScratchpadItem.objects.values_list("pk", flat=True)) == set(items_before) - {kept.pk}
    assert not Memory.objects.filter(content=theirs.content).exists()
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    assert not Memory.objects.filter(pk=node.pk).exists()
    restored = ScratchpadItem.objects.get(pk=kept.pk)
    assert [(f.attname, getattr(restored, f.attname)) for f in ScratchpadItem._meta.concrete_fields] == \
        [(f.attname, getattr(items_before[kept.pk], f.attname)) for f in ScratchpadItem._meta.concrete_fields]


def test_the_summarise_lists_live_beside_the_run_and_a_resumed_run_summarises_as_a_whole_one(user, other_user):
    billing = ("The billing service retries a failed payment three times.",
               "Failed payments are retried three times by the billing service.",
               "Our billing service tries a failed card payment again, up to three times.")
    for owner in (user, other_user):
        nodes(owner, *STAGING)
        nodes(owner, *billing)
        nodes(owner, *APART)
    assert dream(user).status == "completed"
    # The other copy: one item per execution, so each stop is mid-step with its lists beside the run.
    seen = set()
    for _ in range(40):
        run = dream(other_user, batch_size=1, max_items=1)
        if run.status == "completed":
            break
        state, lengths = run.checkpoint["state"], run.checkpoint.get("lists", {})
        assert not any(isinstance(value, (list, dict)) for value in state.values()), state  # small, whatever the graph
        assert {key: DreamList.objects.filter(run=run, key=key).count() for key in lengths} == lengths
        seen |= {(run.checkpoint["phase"], state.get("stage"), key) for key, length in lengths.items() if length}
    assert run.status == "completed"
    assert {("nrem_summarise", "knn", "pairs"), ("nrem_summarise", "summarise", "clusters")} <= seen
    assert not DreamList.objects.filter(run=run).exists()  # deleted as each step ended
    assert graph_of(other_user) == graph_of(user)
    assert sorted(summary.metadata["dream_summary"]["members"] for summary in summaries(other_user)) == [3, 3]


def test_the_knn_stage_ends_when_its_pairs_reach_the_cap(user, monkeypatch):
    monkeypatch.setattr(clusters, "CLUSTER_PAIRS_MAX", 4)
    nodes(user, *STAGING)
    nodes(user, "The billing service retries a failed payment three times.",
          "Failed payments are retried three times by the billing service.",
          "Our billing service tries a failed card payment again, up to three times.")
    run = dream(user, batch_size=1)
    assert run.status == "completed", run.notes
    # Each node finds its two cluster mates: the fourth pair comes with the second node read, so the rest are not.
    assert run.checkpoint["counters"]["nodes_clustered"] == 2
    assert any("4 close pairs were found before every node was read" in note for note in run.notes)
    # The two nodes read (in id order) are of one cluster or of both: each cluster found is whole.
    assert [summary.metadata["dream_summary"]["members"] for summary in summaries(user)] in ([3], [3, 3])
