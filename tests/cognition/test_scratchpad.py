"""temporary_scratchpad's service: privacy levels, the hour's TTL on a fixed clock, isolation between agents,
sessions and users, surprise against the session, and bad input naming its field."""
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.cognition import utl
from apps.cognition.limits import SCRATCHPAD_TTL_MINUTES
from apps.cognition.models import CgSession, ScratchpadItem
from apps.cognition.services.scratchpad import scratchpad_clear, scratchpad_retrieve, scratchpad_store
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.embeddings import embed_texts
from tests.cognition.support import record
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NOW = timezone.now().replace(microsecond=0)


@pytest.fixture
def alice():
    return UserFactory()


def _contents(pad):
    return [item.content for item in pad.items]


def _store(user, session, agent, content, privacy="private", **fields):
    return scratchpad_store(actor=user, session_id=session, agent_id=agent, content=content, privacy=privacy,
                            now=fields.pop("now", NOW), **fields)


def test_each_privacy_level_reaches_who_it_says(alice):
    session, other_session = str(uuid.uuid4()), str(uuid.uuid4())
    _store(alice, session, "planner", "Private: the planner's own hunch about the cache bug.")
    _store(alice, session, "planner", "Team: the cache bug only shows under load.", privacy="team")
    _store(alice, session, "planner", "Shared: the cache is Redis 7.", privacy="shared")
    _store(alice, other_session, "coder", "Another session's private note.")
    _store(alice, other_session, "coder", "Another session's team note.", privacy="team")
    _store(alice, other_session, "coder", "Another session's shared note.", privacy="shared")

    def seen(session_id, agent):
        return set(_contents(scratchpad_retrieve(actor=alice, session_id=session_id, agent_id=agent, now=NOW)))

    assert seen(session, "planner") == {
        "Private: the planner's own hunch about the cache bug.", "Team: the cache bug only shows under load.",
        "Shared: the cache is Redis 7.", "Another session's shared note."}
    # A teammate in the session: team and shared, never the planner's private note.
    assert seen(session, "reviewer") == {"Team: the cache bug only shows under load.", "Shared: the cache is Redis 7.",
                                         "Another session's shared note."}
    # An agent of another session: shared only.
    assert seen(str(uuid.uuid4()), "planner") == {"Shared: the cache is Redis 7.", "Another session's shared note."}


def test_items_expire_after_the_ttl_on_a_fixed_clock(alice):
    session = str(uuid.uuid4())
    stored = _store(alice, session, "planner", "Check the retry budget before the release.")
    [item] = stored.items
    assert item.expires_at == NOW + timedelta(minutes=SCRATCHPAD_TTL_MINUTES)
    almost = NOW + timedelta(minutes=SCRATCHPAD_TTL_MINUTES, seconds=-1)
    assert scratchpad_retrieve(actor=alice, session_id=session, agent_id="planner", now=almost).items_count == 1
    later = NOW + timedelta(minutes=SCRATCHPAD_TTL_MINUTES)
    assert scratchpad_retrieve(actor=alice, session_id=session, agent_id="planner", now=later).items == []
    # A note stored later lives its own hour.
    _store(alice, session, "planner", "A later note.", now=later)
    pad = scratchpad_retrieve(actor=alice, session_id=session, agent_id="planner", now=later)
    assert _contents(pad) == ["A later note."]


def test_users_never_see_each_others_pads_even_shared(alice):
    bob = UserFactory()
    session = str(uuid.uuid4())
    _store(alice, session, "planner", "Alice's shared note.", privacy="shared")
    assert scratchpad_retrieve(actor=bob, session_id=session, agent_id="planner", now=NOW).items == []
    # Bob cannot write into alice's session either: it is hers, so to him it does not exist.
    with pytest.raises(NotFound):
        _store(bob, session, "planner", "Bob's note.")
    assert scratchpad_clear(actor=bob, session_id=session, agent_id="planner").cleared == 0
    assert ScratchpadItem.objects.filter(owner=alice).count() == 1


def test_clear_removes_the_agents_own_items_only(alice):
    session = str(uuid.uuid4())
    _store(alice, session, "planner", "Mine, private.")
    _store(alice, session, "planner", "Mine, for the team.", privacy="team")
    _store(alice, session, "reviewer", "The reviewer's, for the team.", privacy="team")
    cleared = scratchpad_clear(actor=alice, session_id=session, agent_id="planner", now=NOW)
    assert cleared.cleared == 2
    assert _contents(cleared) == ["The reviewer's, for the team."] and cleared.items_count == 1


def test_a_store_starts_the_session_and_measures_surprise_against_it(alice):
    session_id = uuid.uuid4()
    first = _store(alice, str(session_id), "planner", "The nightly backup job writes to S3.")
    assert CgSession.objects.filter(pk=session_id, owner=alice).exists()
    assert first.stored.delta_s == 1.0  # nothing in the session, no node in the graph
    session = CgSession.objects.get(pk=session_id)
    record(session, "where do the nightly backups go", [])
    echo = _store(alice, str(session_id), "planner", "The nightly backup job writes to S3.")
    [query] = embed_texts(["where do the nightly backups go"])
    [note] = embed_texts(["The nightly backup job writes to S3."])
    assert echo.stored.delta_s == pytest.approx(1.0 - utl.cosine(note, query), abs=1e-3)
    assert first.pad_id == echo.pad_id  # one pad per user, session and agent
    assert _store(alice, str(session_id), "reviewer", "Another agent's pad.").pad_id != first.pad_id


@pytest.mark.parametrize(("fields", "field"), [
    ({"session_id": "not-a-uuid"}, "session_id"),
    ({"agent_id": "  "}, "agent_id"),
    ({"agent_id": "a" * 201}, "agent_id"),
    ({"content": ""}, "content"),
    ({"content": None}, "content"),
    ({"content": "x" * 4097}, "content"),
    ({"privacy": "public"}, "privacy"),
    ({"tags": ["a", "b", "c", "d", "e", "f"]}, "tags"),
    ({"tags": [""]}, "tags[0]"),
    ({"auto_commit_threshold": 0.95}, "auto_commit_threshold"),
])
def test_bad_input_names_its_field(alice, fields, field):
    arguments = {"session_id": str(uuid.uuid4()), "agent_id": "planner", "content": "A thought.", **fields}
    with pytest.raises(InvalidInput) as refused:
        scratchpad_store(actor=alice, **arguments)
    assert refused.value.field == field
    assert not ScratchpadItem.objects.exists()


def test_items_keep_their_tags_and_threshold(alice):
    pad = _store(alice, str(uuid.uuid4()), "planner", "Tagged thought.", tags=["cache", "cache", " bug "],
                 auto_commit_threshold=0.8)
    assert (pad.stored.tags, pad.stored.auto_commit_threshold) == (["cache", "bug"], 0.8)


def test_a_retrieve_is_one_query_for_one_item_or_fifty(alice, django_assert_num_queries):
    session = str(uuid.uuid4())
    _store(alice, session, "planner", "The first of many notes.")
    with django_assert_num_queries(1):
        assert scratchpad_retrieve(actor=alice, session_id=session, agent_id="planner", now=NOW).items_count == 1
    ScratchpadItem.objects.bulk_create([
        ScratchpadItem(owner=alice, session_id=session, agent_id="planner", content=f"Note {n}.", delta_s=0.5,
                       expires_at=NOW + timedelta(minutes=SCRATCHPAD_TTL_MINUTES)) for n in range(49)])
    with django_assert_num_queries(1):
        assert scratchpad_retrieve(actor=alice, session_id=session, agent_id="planner", now=NOW).items_count == 50
