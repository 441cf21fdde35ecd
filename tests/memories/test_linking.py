from datetime import timedelta

import pytest

from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_store
from apps.memories.services.linking import (
    LINK_THRESHOLD, MAX_LINKS, WAYPOINT_FLOOR, link_type_for, link_weight, metadata_overlap, temporal_closeness,
)


def _memory(**fields):
    from django.utils import timezone

    fields.setdefault("created_at", timezone.now())
    fields.setdefault("salience", 0.5)
    return Memory(content=fields.pop("content", "x"), **fields)


def test_weight_follows_thoughtmcp_formula():
    a = _memory(keywords=["dark", "mode"], tags=["ui"], category="prefs", session_id="s")
    b = _memory(keywords=["dark"], tags=["ui"], category="prefs", session_id="s", created_at=a.created_at + timedelta(minutes=10))
    overlap = 0.4 * 0.5 + 0.4 * 1.0 + 0.2 * 1.0
    assert metadata_overlap(a, b) == pytest.approx(overlap)
    assert temporal_closeness(a, b) == 0.5
    assert link_weight(sector_cosine=0.8, a=a, b=b) == pytest.approx(0.6 * 0.8 + 0.25 * overlap + 0.1 * 0.5 + 0.05 * 0.5)


@pytest.mark.parametrize(("minutes", "closeness"), [(1, 1.0), (20, 0.5), (90, 0.1)])
def test_temporal_closeness_within_a_session(minutes, closeness):
    a = _memory(session_id="s")
    assert temporal_closeness(a, _memory(session_id="s", created_at=a.created_at + timedelta(minutes=minutes))) == closeness
    assert temporal_closeness(a, _memory(session_id="other", created_at=a.created_at)) == 0.0


def test_link_types():
    # A cue word alone no longer makes a link causal: a claim that names the neighbour does (below).
    a = _memory(content="The build failed because the cache was stale", session_id="s")
    assert link_type_for(a, _memory(session_id="x")) == "semantic"
    b = _memory(content="Lunch was good", session_id="s")
    assert link_type_for(b, _memory(session_id="s", created_at=b.created_at)) == "temporal"
    c = _memory(content="Lunch was good", category="food")
    assert link_type_for(c, _memory(category="travel")) == "analogical"
    assert link_type_for(c, _memory(category="food")) == "semantic"


def test_related_memories_link_and_unrelated_do_not(user):
    first = memory_store(actor=user, content="User prefers dark mode in every application", session_id="s1",
                         tags=["ui"], category="preferences").memory
    unrelated = memory_store(actor=user, content="Invoice 4411 is due on the third of March", session_id="s9")
    assert unrelated.links_created == 0
    second = memory_store(actor=user, content="The user wants dark mode enabled in all their applications",
                          session_id="s1", tags=["ui"], category="preferences")
    assert 1 <= second.links_created <= MAX_LINKS
    link = MemoryLink.objects.get(source=second.memory)
    assert link.target_id == first.pk
    assert link.weight >= WAYPOINT_FLOOR
    assert link.link_type == "temporal"


def test_strong_matches_pass_the_threshold_and_cap_at_three(user):
    for n in range(5):
        memory_store(actor=user, content=f"Team standup notes: deploy the API service on Friday ({n})", session_id="s",
                     tags=["standup"], category="meetings", keywords=["standup", "deploy"])
    last = memory_store(actor=user, content="Team standup notes: deploy the API service on Friday (final)",
                        session_id="s", tags=["standup"], category="meetings", keywords=["standup", "deploy"])
    assert last.links_created == MAX_LINKS
    weights = MemoryLink.objects.filter(source=last.memory).values_list("weight", flat=True)
    assert all(w >= LINK_THRESHOLD for w in weights)


def test_links_stay_inside_the_cube(user, other_user):
    memory_store(actor=other_user, content="User prefers dark mode in every application")
    result = memory_store(actor=user, content="User prefers dark mode in every application")
    assert result.links_created == 0


def test_a_batch_links_to_its_earlier_memories_never_to_later_ones(user):
    from apps.memories.services import memory_store_many

    first, second, third = memory_store_many(actor=user, items=[
        {"content": "Team standup notes: deploy the API service on Friday", "session_id": "s", "tags": ["standup"]},
        {"content": "Invoice 4411 is due on the third of March", "session_id": "t"},
        {"content": "Team standup notes: deploy the API service on Friday again", "session_id": "s", "tags": ["standup"]},
    ])
    assert first.links_created == 0  # nothing was stored before it, and later memories are not its neighbours
    assert MemoryLink.objects.filter(source=third.memory, target=first.memory).exists()
    assert not MemoryLink.objects.filter(source=first.memory).exists()


def test_the_exact_and_the_index_paths_choose_the_same_links(user, monkeypatch):
    from apps.memories.models import MemoryVector
    from apps.memories.sectors import ContentVector
    from apps.memories.services import linking

    for n, text in enumerate(["User prefers dark mode in every application", "Dark theme is enabled on the laptop",
                              "Invoice 4411 is due on the third of March", "The laptop's screen is too bright at night"]):
        memory_store(actor=user, content=text, session_id=f"s{n}")
    last = memory_store(actor=user, content="Turn on dark mode on the new laptop", session_id="s9").memory
    stored = MemoryVector.objects.get(memory=last)
    content = ContentVector(stored.embedding, stored.tokens)
    exact = linking.choose_links(last, content)
    monkeypatch.setattr(linking, "EXACT_SCOPE_MEMORIES", 1)  # five memories in the cube: the HNSW path
    indexed = linking.choose_links(last, content)
    assert exact and [(c.target_id, c.weight) for c in exact] == [(c.target_id, c.weight) for c in indexed]


def test_a_claims_cause_links_into_the_memory_that_claims_it(user):
    """Issue 20's cue-word trap: the link's direction comes from the clause, not from which memory came last."""
    cause = memory_store(actor=user, content="The nightly migration locked the users table for an hour").memory
    effect = memory_store(actor=user, content="The Friday deploy failed because the nightly migration locked the "
                                              "users table").memory
    link = MemoryLink.objects.get(source=cause, target=effect)  # cause -> effect, though the effect was stored last
    assert (link.link_type, link.origin) == ("causal", "parse")
    assert not MemoryLink.objects.filter(source=effect, target=cause).exists()


def test_a_claims_effect_is_linked_to_from_the_memory_that_claims_it(user):
    effect = memory_store(actor=user, content="Search pages became slow for every user last week").memory
    cause = memory_store(actor=user, content="Dropping the trigram index led to search pages becoming slow for "
                                             "every user").memory
    link = MemoryLink.objects.get(source=cause, target=effect)
    assert (link.link_type, link.origin) == ("causal", "parse")


def test_a_claim_names_a_neighbour_by_its_nearest_side_or_not_at_all():
    import numpy as np

    from apps.memories.services.linking import CLAIM_NODE_COSINE, claim_direction

    cause, effect, other = np.eye(3)
    neighbour = 0.9 * effect + np.sqrt(1 - 0.81) * other
    assert claim_direction([(cause, effect)], neighbour) == (False, pytest.approx(0.9))  # it is the effect
    assert claim_direction([(cause, effect)], cause) == (True, pytest.approx(1.0))
    below = (CLAIM_NODE_COSINE - 0.01) * effect + np.sqrt(1 - (CLAIM_NODE_COSINE - 0.01) ** 2) * other
    assert claim_direction([(cause, effect)], below) is None


def test_editing_a_claim_replaces_the_links_it_drew_in(user):
    from apps.memories.services import memory_update

    cause = memory_store(actor=user, content="The nightly migration locked the users table for an hour").memory
    effect = memory_store(actor=user, content="The Friday deploy failed because the nightly migration locked the "
                                              "users table").memory
    assert MemoryLink.objects.filter(source=cause, target=effect, origin="parse").exists()
    memory_update(actor=user, memory_id=effect.pk, content="The Friday deploy went out on time and nothing broke")
    assert not MemoryLink.objects.filter(source=cause, target=effect, origin="parse").exists()
