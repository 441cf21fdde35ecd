"""Context Graph's store (apps/cognition/services/store.py): the three forms of content, binary files and what is
read of them, content past the model's window, links, the session, and the steering reward, term by term."""
from __future__ import annotations

import base64
import io
import struct
import wave
import zlib

import numpy as np
import pytest

from apps.cognition.limits import MEDIA_MAX_BYTES, STORE_CONTENT_MAX_CHARS, Stage
from apps.cognition.models import CgSession, CurationTask, NodeProfile, SessionItem
from apps.cognition.reward import STAGE_HINTS, content_words, steering_reward
from apps.cognition.services.store import EMBEDDED_FROM_CONTENT, EMBEDDED_FROM_RATIONALE, node_store
from apps.cognition.utl import cosine
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.embeddings import embed_texts, token_windows
from apps.memories.models import Memory, MemoryLink, MemoryVector

pytestmark = pytest.mark.django_db

RATIONALE = "The deployment checklist prevents broken releases of the reporting service"
CONTENT = "Before each release run the migrations on staging, then check the health endpoint returns 200."


def png(width: int, height: int) -> bytes:
    """A real PNG (RGB, 8 bits) of the given size."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x10\x20\x30" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def wav(seconds: float, rate: int = 8000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x01" * int(seconds * rate))
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def stored_vector(memory: Memory) -> np.ndarray:
    return np.asarray(MemoryVector.objects.get(memory=memory).embedding, dtype=np.float64)


# --- the reward formula, by hand ------------------------------------------------------------------------------

def test_reward_growth_balances_novelty_and_coherence():
    reward = steering_reward(stage=Stage.GROWTH, delta_s=0.6, coherence=0.4, duplicate_cosine=0.5, duplicate_of="n1",
                             rationale_cosine=0.7, rationale_words=6)
    assert reward.dopamine_signal == pytest.approx(0.5 * 0.6 + 0.5 * 0.4)
    assert [term.name for term in reward.terms] == ["base"]
    assert reward.behavioral_hint == STAGE_HINTS[Stage.GROWTH]
    assert "base +0.50 (growth: 0.5 x delta S 0.60 + 0.5 x coherence 0.40)" in reward.rationale


def test_reward_every_penalty_and_the_clamp():
    reward = steering_reward(stage=Stage.INFANCY, delta_s=0.2, coherence=0.1, duplicate_cosine=0.95,
                             duplicate_of="n1", rationale_cosine=0.1, rationale_words=2)
    base = 0.7 * 0.2 + 0.3 * 0.1
    assert [(term.name, round(term.value, 4)) for term in reward.terms] == [
        ("base", round(base, 4)), ("near_duplicate", -0.4), ("rationale_mismatch", -0.3), ("thin_rationale", -0.5)]
    assert base - 1.2 < -1 and reward.dopamine_signal == -1.0
    # The largest term is the thin rationale: its hint is the one given.
    assert reward.behavioral_hint.startswith("The rationale has 2 content words")
    for name in ("near_duplicate", "rationale_mismatch", "thin_rationale", "signal -1.00"):
        assert name in reward.rationale


def test_reward_maturity_weighs_coherence_and_the_largest_penalty_hints():
    reward = steering_reward(stage=Stage.MATURITY, delta_s=0.5, coherence=0.9, duplicate_cosine=0.9,
                             duplicate_of="n7", rationale_cosine=0.2, rationale_words=3)
    base = 0.3 * 0.5 + 0.7 * 0.9
    assert reward.dopamine_signal == pytest.approx(base - 0.4)  # 0.90 is a near-duplicate; 0.2 and 3 words are not
    # A penalty says what to change, however large the base: the hint is the largest penalty's.
    assert reward.behavioral_hint.startswith("Node n7 already says this (cosine 0.90)")
    clean = steering_reward(stage=Stage.MATURITY, delta_s=0.0, coherence=0.3, duplicate_cosine=0.89,
                            duplicate_of="n7", rationale_cosine=0.5, rationale_words=5)
    assert clean.behavioral_hint == STAGE_HINTS[Stage.MATURITY] and clean.dopamine_signal == pytest.approx(0.21)


def test_content_words_are_distinct_non_stopwords():
    assert content_words("it is what it is, ok?") == 0
    assert content_words("Deploy deploy DEPLOY the service") == 2
    assert content_words("Critical security constraint discovered during debugging") == 5


# --- storing ----------------------------------------------------------------------------------------------------

def test_a_first_text_store_and_its_reward_by_hand(user):
    stored = node_store(actor=user, rationale=RATIONALE, content=CONTENT, importance=0.8,
                        metadata={"domain": "code", "source": "runbook", "agent_id": "deployer"})
    memory = Memory.objects.get(pk=stored.memory.pk)
    assert (memory.content, memory.importance, memory.agent_id, memory.owner) == (CONTENT, 0.8, "deployer", user)
    profile = NodeProfile.objects.get(memory=memory)
    assert (profile.rationale, profile.modality, profile.domain, profile.source) == (RATIONALE, "text", "code",
                                                                                        "runbook")
    assert stored.embedded_from == EMBEDDED_FROM_CONTENT
    # Nothing before it: delta S 1; coherence of one active node: 0.4 connectivity 1 + 0.4 fit 0 + 0.2 consistency 1.
    assert stored.delta_s == 1.0 and profile.delta_s == 1.0
    session = CgSession.objects.get(owner=user)
    assert session.interactions == 1 and session.coherence == pytest.approx(0.6)
    [item] = SessionItem.objects.filter(session=session)
    assert (item.kind, item.text, item.activated[0]) == ("store", CONTENT, {"node_id": str(memory.pk), "score": 1.0})
    rationale_cosine = cosine(*embed_texts([RATIONALE, CONTENT]))
    assert rationale_cosine >= 0.2
    assert stored.reward.dopamine_signal == pytest.approx(0.7 * 1.0 + 0.3 * 0.6, abs=1e-6)
    assert [term.name for term in stored.reward.terms] == ["base"]
    assert stored.reward.behavioral_hint == STAGE_HINTS[Stage.INFANCY]


def test_a_near_duplicate_is_penalised_and_opens_a_merge_task(user, other_user):
    node_store(actor=other_user, rationale=RATIONALE, content=CONTENT)  # bob's copy is no duplicate of alice's
    first = node_store(actor=user, rationale=RATIONALE, content=CONTENT)
    assert first.near_duplicate_of is None
    second = node_store(actor=user, rationale=RATIONALE, content=CONTENT + " ")
    assert second.near_duplicate_of == str(first.memory.pk)
    session = CgSession.objects.get(owner=user)
    profile = NodeProfile.objects.get(memory=second.memory)
    # The same text: delta S 0 (its vector is the earlier item's); base = 0.7 x 0 + 0.3 x the session's coherence.
    assert profile.delta_s == pytest.approx(0.0, abs=1e-3)
    expected = 0.7 * profile.delta_s + 0.3 * session.coherence - 0.4
    assert second.reward.dopamine_signal == pytest.approx(expected, abs=1e-4)
    assert [term.name for term in second.reward.terms] == ["base", "near_duplicate"]
    task = CurationTask.objects.get(owner=user)
    assert task == second.merge_task
    assert (task.task_type, task.suggested_tool, task.status) == ("potential_merge", "merge_concepts", "open")
    assert sorted(map(str, task.node_ids)) == sorted([str(first.memory.pk), str(second.memory.pk)])
    assert not CurationTask.objects.filter(owner=other_user).exists()


def test_a_thin_and_unrelated_rationale_is_penalised(user):
    rationale = "it is what it is, ok?"
    content = "Grandma's banana bread needs three ripe bananas and a hot oven for fifty minutes."
    stored = node_store(actor=user, rationale=rationale, content=content)
    rationale_cosine = cosine(*embed_texts([rationale, content]))
    names = [term.name for term in stored.reward.terms]
    assert "thin_rationale" in names
    assert ("rationale_mismatch" in names) == (rationale_cosine < 0.2)
    penalties = 0.5 + (0.3 if rationale_cosine < 0.2 else 0.0)
    session = CgSession.objects.get(owner=user)
    assert stored.reward.dopamine_signal == pytest.approx(0.7 * 1.0 + 0.3 * session.coherence - penalties, abs=1e-6)
    assert stored.reward.behavioral_hint.startswith("The rationale has 0 content words")


def test_link_to_links_the_callers_nodes_and_refuses_anyone_elses(user, other_user, store):
    mine = store(user, "The staging database runs on PostgreSQL 16 with pgvector.")
    theirs = store(other_user, "Bob's private note about his holidays in Lisbon.")
    stored = node_store(actor=user, rationale=RATIONALE, content=CONTENT, link_to=[str(mine.pk)])
    link = MemoryLink.objects.get(source=stored.memory, target=mine)
    assert (link.weight, link.link_type) == (0.8, "semantic")
    assert stored.linked_to == [str(mine.pk)]
    count = Memory.objects.count()
    with pytest.raises(NotFound) as refused:
        node_store(actor=user, rationale=RATIONALE, content="Another checklist entry.", link_to=[str(theirs.pk)])
    assert refused.value.extra["field"] == "link_to[0]"
    with pytest.raises(InvalidInput) as malformed:
        node_store(actor=user, rationale=RATIONALE, content="Another checklist entry.", link_to=["not-a-uuid"])
    assert malformed.value.field == "link_to[0]"
    assert Memory.objects.count() == count


@pytest.mark.parametrize("arguments, field", [
    ({}, "content"),
    ({"content": CONTENT, "data_uri": "data:text/plain;base64,aGk="}, "data_uri"),
    ({"content": CONTENT, "content_base64": "aGk=", "modality": "image"}, "content_base64"),
    ({"content": CONTENT, "modality": "image"}, "modality"),
    ({"content_base64": b64(png(2, 2))}, "modality"),
    ({"content_base64": "aGVsbG8=", "modality": "text"}, "modality"),
    ({"content_base64": "not base64!", "modality": "image"}, "content_base64"),
    ({"content_base64": b64(png(2, 2)), "modality": "audio"}, "modality"),
    ({"data_uri": "data:application/pdf;base64,JVBERi0="}, "data_uri"),
    ({"data_uri": "data:image/png;base64," + b64(wav(0.1))}, "data_uri"),
    ({"data_uri": "data:audio/wav;base64," + b64(wav(0.1)), "modality": "image"}, "modality"),
    ({"data_uri": "data:text/plain;base64," + b64(b"\xff\xfe\xfa")}, "data_uri"),
    ({"content": CONTENT, "metadata": {"domain": "poetry"}}, "metadata.domain"),
    ({"content": "x" * (STORE_CONTENT_MAX_CHARS + 1)}, "content"),
])
def test_exactly_one_form_of_content(user, arguments, field):
    with pytest.raises(InvalidInput) as refused:
        node_store(actor=user, rationale=RATIONALE, **arguments)
    assert refused.value.field == field and refused.value.message
    assert not Memory.objects.exists() and not NodeProfile.objects.exists()


def test_binary_over_ten_megabytes_is_refused_before_decoding(user):
    with pytest.raises(InvalidInput) as refused:
        node_store(actor=user, rationale=RATIONALE, content_base64="A" * (4 * (MEDIA_MAX_BYTES // 3 + 2)),
                   modality="image")
    assert refused.value.field == "content_base64" and "10 MB" in refused.value.message


def test_an_image_is_kept_as_a_file_and_embedded_from_rationale_and_metadata(user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    image = png(64, 48)
    rationale = "Architecture diagram of the reporting service, drawn in the design review"
    stored = node_store(actor=user, rationale=rationale, content_base64=b64(image), modality="image",
                        metadata={"caption": "services and queues", "domain": "code"})
    assert stored.embedded_from == EMBEDDED_FROM_RATIONALE
    assert stored.features == {"byte_size": len(image), "mime_type": "image/png", "width": 64, "height": 48}
    profile = NodeProfile.objects.get(memory=stored.memory)
    assert (profile.modality, profile.media_type, profile.domain) == ("image", "image/png", "code")
    with profile.media.open("rb") as media:
        assert media.read() == image
    assert profile.media.path.startswith(str(tmp_path)) and profile.media.name.endswith(".png")
    memory = Memory.objects.get(pk=stored.memory.pk)
    assert memory.content == (f"Image (image/png, 64x48 pixels, {len(image)} bytes). Rationale: {rationale} "
                              "Metadata: caption: services and queues; domain: code.")
    assert memory.metadata["extracted_features"] == stored.features
    [expected] = embed_texts([memory.content])
    assert cosine(stored_vector(memory), expected) > 0.999


def test_a_data_uri_sets_the_modality_from_its_type(user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    recording = wav(0.5)
    stored = node_store(actor=user, rationale="Voice memo from the customer call about invoices",
                        data_uri="data:audio/wav;base64," + b64(recording))
    assert stored.profile.modality == "audio"
    assert stored.features == {"byte_size": len(recording), "mime_type": "audio/wav", "channels": 1,
                               "sample_rate": 8000, "duration_seconds": 0.5}
    assert Memory.objects.get(pk=stored.memory.pk).content.startswith(
        f"Audio (audio/wav, 0.5 seconds, {len(recording)} bytes). Rationale: Voice memo")
    text = node_store(actor=user, rationale=RATIONALE, data_uri="data:text/plain;base64," + b64(CONTENT.encode()))
    assert (text.profile.modality, text.embedded_from, text.memory.content) == ("text", "content", CONTENT)
    assert not text.profile.media


TOPICS = (
    "The lighthouse keeper climbed the tower at dusk to light the lamp and log the passing ships. ",
    "Whisk the eggs with sugar, fold in the flour gently and bake the sponge for twenty minutes. ",
    "Quarterly revenue rose on enterprise contracts while churn among small customers doubled. ",
    "The goalkeeper saved a penalty in extra time and the crowd sang until the final whistle. ",
)


def test_content_past_the_model_window_is_embedded_whole(user):
    block = STORE_CONTENT_MAX_CHARS // len(TOPICS)
    content = "".join((topic * (block // len(topic) + 1))[:block] for topic in TOPICS)[:-1] + "."
    assert len(content) == STORE_CONTENT_MAX_CHARS
    stored = node_store(actor=user, rationale="A long report spanning several unrelated topics for the archive",
                        content=content)
    assert Memory.objects.get(pk=stored.memory.pk).content == content
    windows = token_windows([content])[0]
    assert len(windows) > 40
    vectors = np.asarray(embed_texts([piece for piece, _ in windows]), dtype=np.float64)
    mean = vectors.mean(axis=0)
    vector = stored_vector(stored.memory)
    assert cosine(vector, mean) > 0.999
    # Every topic counts, not only the first window's: the vector is far from the truncated embedding.
    assert cosine(vector, embed_texts([content])[0]) < 0.9
    row = MemoryVector.objects.get(memory=stored.memory)
    assert row.tokens == round(len(windows) / sum(1 / count for _, count in windows))
