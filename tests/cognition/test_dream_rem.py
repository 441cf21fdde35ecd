"""REM on the owner's real graph: walks from sparse regions with a recorded seed, real retrieval (nothing reinforced),
leaps between similar unlinked nodes, blind spots, shortcuts for paths walked often, the same walks again with the
same seed, and the run's undo taking all of it back."""
from __future__ import annotations

import pytest

from apps.cognition.models import BlindSpot
from apps.cognition.services.dream import dream_execute, dream_trigger
from apps.cognition.services.undo import undo_apply
from apps.memories.models import Memory, MemoryLink
from tests.cognition.curation_support import everything, link, nodes

pytestmark = pytest.mark.django_db


def rem(user, *, seed: int = 7, walks: int = 10):
    run = dream_trigger(actor=user, phase="rem", synthetic_query_count=walks, seed=seed)
    return dream_execute(run_id=run.pk)


def outcome(user) -> tuple:
    made = sorted(MemoryLink.objects.filter(source__owner=user).exclude(origin__in=["store", "manual"])
                  .values_list("source_id", "target_id", "link_type", "origin", "weight"))
    spots = sorted(BlindSpot.objects.filter(owner=user).values_list("kind", "node_ids", "best_score"))
    return made, spots


def test_similar_unlinked_nodes_get_a_leap_and_a_lonely_one_is_a_blind_spot(user):
    backup, backup_again, soup = nodes(user, "The backup job copies the database to S3 every night.",
                                       "Every night the backup job copies the database to S3.",
                                       "Grandma's tomato soup needs a pinch of sugar.")
    before = Memory.objects.filter(owner=user).values_list("pk", "access_count", "last_accessed_at")
    run = rem(user, walks=10)
    assert run.status == "completed", run.notes
    [leap] = MemoryLink.objects.filter(origin="rem")
    assert {leap.source_id, leap.target_id} == {backup.pk, backup_again.pk}
    assert (leap.link_type, leap.weight) == ("semantic", 0.3)
    spots = {spot.node_ids[-1]: spot for spot in BlindSpot.objects.filter(owner=user)}
    spot = spots[soup.pk]  # nothing else speaks of soup
    assert (spot.kind, spot.node_ids, spot.run_id) == ("thin", [soup.pk], run.pk)
    assert spot.best_score < 0.35 and spot.hits
    assert all(spot.kind == "thin" for spot in spots.values())  # nor of backups, past the two linked nodes
    counters = run.checkpoint["counters"]
    assert (counters["walks"], counters["leaps_linked"], counters["blind_spots_discovered"]) == (10, 1, len(spots))
    assert list(before) == list(Memory.objects.filter(owner=user).values_list(
        "pk", "access_count", "last_accessed_at"))  # the dream's queries reinforce nothing


def test_a_path_walked_five_times_gets_a_shortcut_causal_when_every_step_is(user):
    a, b, c, d = nodes(user, "Rain soaks the pitch.", "A soaked pitch delays the kickoff.",
                       "A delayed kickoff shifts the broadcast.", "A shifted broadcast loses viewers.")
    for source, target in ((a, b), (b, c), (c, d)):
        link(user, source, target, 0.8, link_type="causal")
    run = rem(user, walks=40)
    shortcut = MemoryLink.objects.get(origin="shortcut")
    assert (shortcut.source_id, shortcut.target_id, shortcut.link_type) == (a.pk, d.pk, "causal")
    assert shortcut.weight == pytest.approx(min(0.9, 1.5 * 0.8 ** 3))
    assert run.checkpoint["counters"]["shortcuts_created"] == 1


def test_the_same_seed_walks_the_same_way_and_the_undo_takes_everything_back(user):
    nodes(user, "The backup job copies the database to S3 every night.",
          "Every night the backup job copies the database to S3.", "Grandma's tomato soup needs a pinch of sugar.",
          "The staging cluster runs Kubernetes 1.30 on three nodes.", "Staging runs Kubernetes 1.30 on three nodes.")
    before = everything()
    first = rem(user, seed=42, walks=20)
    seen = outcome(user)
    assert seen[0] and seen[1]
    undo_apply(actor=user, reversal_hash=first.reversal_hash, preview=False)
    assert everything() == before and not BlindSpot.objects.filter(owner=user).exists()
    second = rem(user, seed=42, walks=20)
    assert second.seed == first.seed == 42
    made, spots = outcome(user)
    assert [row[2:] for row in made] == [row[2:] for row in seen[0]]
    assert sorted((source, target) for source, target, *_ in made) == sorted(
        (source, target) for source, target, *_ in seen[0])
    assert spots == seen[1]


def test_related_but_unlinked_knowledge_is_a_disconnected_blind_spot(user):
    backup, restore, expiry, soup = nodes(user, "The backup job copies the database to S3 every night.",
                                          "Restoring the database from S3 takes two hours.",
                                          "Database backups older than thirty days are deleted.",
                                          "Grandma's tomato soup needs a pinch of sugar.")
    rem(user, walks=20)
    assert not MemoryLink.objects.filter(origin="rem").exists()  # related (cosine 0.4-0.66), not leaps
    spots = {spot.node_ids[-1]: spot for spot in BlindSpot.objects.filter(owner=user)}
    assert spots[soup.pk].kind == "thin"
    disconnected = [spot for node, spot in spots.items() if node in {backup.pk, restore.pk, expiry.pk}]
    assert disconnected and all(spot.kind == "disconnected" and spot.best_score >= 0.35 for spot in disconnected)
    assert all(spot.hits[0]["node_id"] in {str(backup.pk), str(restore.pk), str(expiry.pk)} for spot in disconnected)


def test_a_hits_reach_is_three_links_through_live_owned_nodes_in_one_statement(user, other_user,
                                                                               django_assert_num_queries):
    """REM's path check (a leap or a blind spot depends on it): a node counts as near when a path of at most
    REM_PATH_HOPS links, either way, joins it to the walk's last node through the owner's live nodes; a deleted node
    or another user's node breaks the path. One statement however many nodes lie within reach."""
    from django.utils import timezone

    from apps.cognition.services.dream import rem as rem_phase
    from apps.cognition.services.dream.work import Context

    a, b, c, d, e, f, g = nodes(user, *(f"Node {name} of a chain." for name in "abcdefg"))
    [foreign] = nodes(other_user, "Another user's node.")
    link(user, a, b, 0.5)
    link(user, c, b, 0.5)  # against the walk's direction: links count either way
    link(user, c, d, 0.5)
    link(user, d, e, 0.5)  # four links from a: too far
    link(user, a, f, 0.5)
    link(user, f, g, 0.5)
    MemoryLink.objects.create(source=a, target=foreign, weight=0.5)
    Memory.objects.filter(pk=f.pk).update(deleted_at=timezone.now())  # g is reached only through the deleted f
    ctx = Context.__new__(Context)
    ctx.owner, ctx.cube_ids = user, sorted({m.cube_id for m in (a, b, c, d, e, f, g)})
    everyone = {str(m.pk) for m in (b, c, d, e, g, foreign)}
    with django_assert_num_queries(1):
        near = rem_phase._near(ctx, str(a.pk), everyone)
    assert near == {str(b.pk), str(c.pk), str(d.pk)}
