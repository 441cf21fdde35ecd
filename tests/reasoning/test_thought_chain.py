"""The tamper-evident hash chain: the canonical hash, verification of an intact chain, detection of each kind
of tampering (done behind the services' back with QuerySet.update / delete), and concurrent appends."""
import hashlib
import json
import threading
from datetime import UTC, timedelta

import pytest
from django.db import connection

from apps.core.exceptions import NotFound
from apps.reasoning.models import GENESIS, Thought
from apps.reasoning.selectors import session_thoughts
from apps.reasoning.services.thoughts import chain_verify, thought_hash
from tests.reasoning.thought_support import branched_session, think


def _reasons(verification) -> set[tuple[int, str]]:
    return {(item["thoughtNumber"], item["reason"]) for item in verification.broken}


@pytest.mark.django_db
def test_the_hash_is_sha256_over_the_documented_canonical_form(user):
    step = think(user, 1, "Naïve first thought — with unicode.", agent_id="claude")
    thought = step.thought
    canonical = json.dumps({
        "agent_id": "claude", "created_at": thought.created_at.astimezone(UTC).isoformat(timespec="microseconds"),
        "parent_hash": "genesis", "thought": "Naïve first thought — with unicode.", "thought_number": 1,
    }, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert thought.parent_hash == GENESIS
    assert thought.content_hash == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    stored = Thought.objects.get(pk=thought.pk)
    assert stored.content_hash == thought.content_hash and stored.created_at == thought.created_at


@pytest.mark.django_db
def test_each_thought_chains_to_its_parent(user):
    steps = branched_session(user)
    one, two, branch, revision, final = (step.thought for step in steps)
    assert one.parent_hash == GENESIS
    assert two.parent_hash == one.content_hash
    assert branch.parent_hash == two.content_hash  # forks from thought 2
    assert revision.parent_hash == two.content_hash  # the main line goes on from 2, not from the branch
    assert final.parent_hash == revision.content_hash
    times = [step.thought.created_at for step in steps]
    assert times == sorted(times) and len(set(times)) == 5


@pytest.mark.django_db
def test_an_intact_chain_verifies(user):
    steps = branched_session(user)
    result = chain_verify(actor=user, session_id=steps[0].session.pk)
    assert result.valid and result.checked == 5 and result.broken == []
    assert result.head_hash == steps[-1].thought.content_hash
    assert result.as_dict() == {"algorithm": "sha256", "valid": True, "checked": 5, "broken": [],
                                "headHash": steps[-1].thought.content_hash}


@pytest.mark.django_db
def test_an_empty_session_verifies_with_the_genesis_head(user):
    session = think(user, 1).session
    Thought.objects.filter(session=session).delete()
    result = chain_verify(actor=user, session_id=session.pk)
    assert result.valid and result.checked == 0 and result.head_hash == GENESIS


@pytest.mark.django_db
def test_edited_text_is_detected(user):
    steps = branched_session(user)
    Thought.objects.filter(pk=steps[1].thought.pk).update(thought="The leak is somebody else's problem.")
    result = chain_verify(actor=user, session_id=steps[0].session.pk)
    assert not result.valid
    assert _reasons(result) == {(2, "content_hash_mismatch")}
    [item] = result.broken
    assert item["thoughtId"] == str(steps[1].thought.pk) and "Thought 2" in item["detail"]


@pytest.mark.django_db
def test_an_edited_number_is_detected(user):
    steps = branched_session(user)
    Thought.objects.filter(pk=steps[4].thought.pk).update(thought_number=9)
    assert _reasons(chain_verify(actor=user, session_id=steps[0].session.pk)) == {(9, "content_hash_mismatch")}


@pytest.mark.django_db
def test_a_repointed_parent_is_detected(user):
    steps = branched_session(user)
    Thought.objects.filter(pk=steps[3].thought.pk).update(parent_hash=steps[2].thought.content_hash)
    reasons = _reasons(chain_verify(actor=user, session_id=steps[0].session.pk))
    assert reasons == {(4, "parent_mismatch"), (4, "content_hash_mismatch")}


@pytest.mark.django_db
def test_a_removed_thought_is_detected_at_its_successor(user):
    steps = branched_session(user)
    Thought.objects.filter(pk=steps[3].thought.pk).delete()
    result = chain_verify(actor=user, session_id=steps[0].session.pk)
    assert result.checked == 4 and _reasons(result) == {(5, "parent_mismatch")}


@pytest.mark.django_db
def test_reordering_is_detected(user):
    steps = branched_session(user)
    moved = steps[0].thought.created_at + timedelta(days=1)
    Thought.objects.filter(pk=steps[1].thought.pk).update(created_at=moved)
    reasons = _reasons(chain_verify(actor=user, session_id=steps[0].session.pk))
    assert (2, "content_hash_mismatch") in reasons
    assert (3, "parent_mismatch") in reasons


@pytest.mark.django_db
def test_a_forged_hash_is_detected_and_so_is_a_consistent_forgery_of_one_thought(user):
    steps = branched_session(user)
    session_id = steps[0].session.pk
    Thought.objects.filter(pk=steps[0].thought.pk).update(content_hash="0" * 64)
    assert _reasons(chain_verify(actor=user, session_id=session_id)) == {
        (1, "content_hash_mismatch"), (2, "parent_mismatch")}
    # A forger who edits thought 2 and recomputes its hash still breaks the link of the thoughts after it.
    Thought.objects.filter(pk=steps[0].thought.pk).update(content_hash=steps[0].thought.content_hash)
    two = steps[1].thought
    forged = thought_hash(thought="Nothing to see here.", thought_number=2, parent_hash=two.parent_hash,
                          agent_id=two.agent_id, created_at=two.created_at)
    Thought.objects.filter(pk=two.pk).update(thought="Nothing to see here.", content_hash=forged)
    assert _reasons(chain_verify(actor=user, session_id=session_id)) == {
        (3, "parent_mismatch"), (4, "parent_mismatch")}


@pytest.mark.django_db
def test_bob_cannot_verify_alices_chain(user, other_user):
    session = think(user, 1).session
    with pytest.raises(NotFound) as error:
        chain_verify(actor=other_user, session_id=session.pk)
    assert error.value.code == "session_not_found"


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_do_not_fork_the_chain(user):
    session = think(user, 1, "Shared session for parallel agents.").session
    errors = []

    def append(worker: int) -> None:
        try:
            for step in range(2):
                think(user, 2 + worker * 2 + step, f"Agent {worker} step {step}.", total=20,
                      session_id=session.pk, agent_id=f"agent-{worker}")
        except Exception as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=append, args=(index,)) for index in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    thoughts = session_thoughts(actor=user, session_id=session.pk)
    assert len(thoughts) == 9
    parents = [t.parent_hash for t in thoughts]
    assert len(set(parents)) == 9  # a straight line: no two thoughts share a parent
    assert all(later.parent_hash == earlier.content_hash for earlier, later in zip(thoughts, thoughts[1:]))
    assert chain_verify(actor=user, session_id=session.pk).valid
