"""Storing a node with its rationale (Context Graph's store_memory): the memory through the memory core, its
NodeProfile beside it, the caller's links, the store recorded in the caller's session (surprise, entropy,
coherence) and the steering reward (apps/cognition/reward.py) for it.

Three forms of content, exactly one per store: text (``content``, up to 65,536 characters: past the model's window
its vector is the mean of its windows'); binary as ``content_base64`` with an image, audio or video ``modality``;
or a ``data_uri``, whose MIME type sets the modality (text/* is stored as text). Binary content (at most 10 MB) is
kept as a file; no model reads it, so the memory's content, and so its embedding, is written from the rationale
and the metadata, with the features its header really gives (apps/cognition/media.py).

Every store runs check_adversarial (services/immune.py) on the stored text and the rationale: an injection or an
embedding anomaly stores the node quarantined (services/quarantine.py), out of retrieval until a reviewer releases
it."""
from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field

import numpy as np
from django.core.files.base import ContentFile
from django.db import transaction

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import (
    LINK_TO_MAX, NEAR_DUPLICATE_COSINE, RATIONALE_MAX_CHARS, RATIONALE_MIN_CHARS, STORE_CONTENT_MAX_CHARS, Domain,
    Modality,
)
from apps.cognition.media import Binary, DataUriText, from_base64, from_data_uri
from apps.cognition.models import CgSession, CurationTask, NodeProfile
from apps.cognition.reward import SteeringReward, content_words, steering_reward
from apps.cognition.services.immune import AdversarialCheck, adversarial_examine, screen_text
from apps.cognition.services.inbox import task_open
from apps.cognition.services.quarantine import node_quarantine
from apps.cognition.services.sessions import session_record, session_start
from apps.core.exceptions import InvalidInput
from apps.core.validation import refuse_unstorable_text
from apps.memories.models import Memory, MemoryLink
from apps.memories.sectors import embed_contents
from apps.memories.selectors import memory_ids_readable
from apps.memories.services import memory_store
from apps.memories.services.curation import memory_link_many
from apps.memories.validation import MAX_ID_CHARS, clean_text
from apps.memories.vectors import nearest_in_scope

EMBEDDED_FROM_CONTENT = "content"
EMBEDDED_FROM_RATIONALE = "rationale+metadata"
# NodeProfile.source's length.
MAX_SOURCE_CHARS = NodeProfile._meta.get_field("source").max_length
# Metadata values quoted in a binary node's content: scalars, each cut to this many characters.
METADATA_VALUE_CHARS = 200


@dataclass(frozen=True)
class StoredNode:
    memory: Memory
    profile: NodeProfile
    session: CgSession
    reward: SteeringReward
    delta_s: float
    # Links the memory core made on its own (nearest neighbours), and the ids the caller linked to.
    links_created: int
    linked_to: list[str]
    embedded_from: str
    near_duplicate_of: str | None = None
    merge_task: CurationTask | None = None
    features: dict = field(default_factory=dict)
    # check_adversarial's verdict on the store; quarantined: kept out of retrieval until a reviewer releases it.
    adversarial: AdversarialCheck | None = None
    quarantined: bool = False


@dataclass(frozen=True)
class _Content:
    text: str
    modality: str
    embedded_from: str
    binary: Binary | None = None


def _clean_rationale(value) -> str:
    if not isinstance(value, str):
        raise InvalidInput("rationale must be a string: why this knowledge is worth storing.", field="rationale")
    value = value.strip()
    if not RATIONALE_MIN_CHARS <= len(value) <= RATIONALE_MAX_CHARS:
        raise InvalidInput(f"rationale has {len(value)} characters; write {RATIONALE_MIN_CHARS} to "
                           f"{RATIONALE_MAX_CHARS} saying why this knowledge is worth storing.", field="rationale")
    return value


def _clean_metadata(metadata) -> tuple[dict, str, str, str]:
    """The metadata, and what Context Graph reads of it: source, domain and agent_id."""
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be an object.", field="metadata")
    refuse_unstorable_text(metadata, "metadata")
    source = clean_text(metadata.get("source"), field_name="metadata.source", max_chars=MAX_SOURCE_CHARS)
    agent_id = clean_text(metadata.get("agent_id"), field_name="metadata.agent_id", max_chars=MAX_ID_CHARS)
    domain = metadata.get("domain", Domain.GENERAL)
    if domain not in Domain.values:
        raise InvalidInput(f"metadata.domain must be one of {', '.join(Domain.values)} (default general).",
                           field="metadata.domain")
    return metadata, source, domain, agent_id


def _content_of(*, rationale: str, content, content_base64, data_uri, modality, metadata: dict) -> _Content:
    given = [name for name, value in (("content", content), ("content_base64", content_base64),
                                      ("data_uri", data_uri)) if value is not None]
    if not given:
        raise InvalidInput("Give the knowledge to store: content (text), content_base64 with modality, or data_uri.",
                           field="content")
    if len(given) > 1:
        raise InvalidInput(f"{given[1]} and {given[0]} are mutually exclusive: send exactly one of content, "
                           "content_base64 (+ modality) and data_uri.", field=given[1])
    if content is not None:
        if modality not in (None, Modality.TEXT):
            raise InvalidInput(f"modality {modality!r} does not go with content, which is text: send binary content "
                               "as content_base64 or data_uri, or leave modality out.", field="modality")
        return _Content(content, Modality.TEXT, EMBEDDED_FROM_CONTENT)
    for name, value in (("content_base64", content_base64), ("data_uri", data_uri)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string.", field=name)
    decoded = (from_base64(content_base64, modality=modality) if content_base64 is not None
               else from_data_uri(data_uri, modality=modality))
    if isinstance(decoded, DataUriText):
        if len(decoded.text) > STORE_CONTENT_MAX_CHARS:
            raise InvalidInput(f"data_uri's text has {len(decoded.text)} characters; the limit is "
                               f"{STORE_CONTENT_MAX_CHARS}.", field="data_uri")
        return _Content(decoded.text, Modality.TEXT, EMBEDDED_FROM_CONTENT)
    return _Content(_describe(decoded, rationale, metadata), decoded.modality, EMBEDDED_FROM_RATIONALE, decoded)


def _describe(binary: Binary, rationale: str, metadata: dict) -> str:
    """A binary node's content: what it is (as far as its header says), why it was stored, and its metadata."""
    features = binary.features
    facts = [binary.mime_type or "format not recognised"]
    if "width" in features:
        facts.append(f"{features['width']}x{features['height']} pixels")
    if "duration_seconds" in features:
        facts.append(f"{features['duration_seconds']:g} seconds")
    facts.append(f"{features['byte_size']} bytes")
    text = f"{Modality(binary.modality).label} ({', '.join(facts)}). Rationale: {rationale}"
    described = [f"{key}: {str(value)[:METADATA_VALUE_CHARS]}" for key, value in metadata.items()
                 if key != "extracted_features" and isinstance(value, (str, int, float, bool)) and str(value).strip()]
    return text + (f" Metadata: {'; '.join(described)}." if described else "")


def _clean_link_to(actor: User, link_to) -> list[str]:
    if link_to is None:
        return []
    if isinstance(link_to, list) and len(link_to) > LINK_TO_MAX:
        raise InvalidInput(f"link_to has {len(link_to)} ids; at most {LINK_TO_MAX}.", field="link_to")
    return memory_ids_readable(actor=actor, memory_ids=link_to, field="link_to")


def _nearest_own_node(actor: User, memory: Memory, vector) -> tuple[str | None, float | None]:
    """The caller's live node nearest the new one (content vectors, cosine), other than itself."""
    scope = Memory.objects.filter(owner=actor, deleted_at__isnull=True).exclude(pk=memory.pk)
    nearest = nearest_in_scope(scope, vector, limit=1)
    if not nearest:
        return None, None
    memory_id, distance = nearest[0]
    return str(memory_id), 1.0 - float(distance)


def node_store(*, actor: User, rationale, content=None, content_base64=None, data_uri=None, modality=None,
               importance=None, metadata=None, link_to=None) -> StoredNode:
    """Store a node in the caller's personal cube, in their latest Context Graph session (started if they have
    none). ``modality`` None: not given. Metadata's ``source``, ``domain`` (default general) and ``agent_id``
    go to the node's profile and memory; binary content adds ``extracted_features``."""
    rationale = _clean_rationale(rationale)
    metadata, source, domain, agent_id = _clean_metadata(metadata)
    stored_content = _content_of(rationale=rationale, content=content, content_base64=content_base64,
                                 data_uri=data_uri, modality=modality, metadata=metadata)
    if stored_content.binary is not None:
        metadata = {**metadata, "extracted_features": stored_content.binary.features}
    targets = _clean_link_to(actor, link_to)
    screening = screen_text(stored_content.text, rationale=rationale)
    # Before the transaction, in one model call: the model holds no row locks.
    [rationale_vector, *side_vectors] = embed_contents([rationale, *screening.sides])
    profile = None
    try:
        with transaction.atomic():
            # The memory core embeds the content before it writes anything: no row is locked meanwhile.
            stored = memory_store(actor=actor, content=stored_content.text, importance=importance, metadata=metadata,
                                  agent_id=agent_id, content_limit=STORE_CONTENT_MAX_CHARS)
            memory, vector = stored.memory, stored.vector.vector
            check = adversarial_examine(actor=actor, screening=screening, vector=vector,
                                        side_vectors=[side.vector for side in side_vectors], exclude_id=memory.pk)
            quarantined = check.quarantines
            session = session_start(actor=actor, agent_id=agent_id)
            if quarantined:  # kept out of the graph's reach: no links, and it activates nothing
                node_quarantine(actor=actor, memory=memory, check=check, link_to=targets)
            elif targets:
                memory_link_many(actor=actor, source_id=memory.pk, target_ids=targets)
            duplicate_of, duplicate_cosine = _nearest_own_node(actor, memory, vector)
            links = list(MemoryLink.objects.filter(source=memory).order_by("-weight")
                         .values_list("target_id", "weight"))
            recorded = session_record(session=session, kind="store", text=memory.content, vector=vector,
                                      activated=[] if quarantined else [(memory.pk, 1.0), *links],
                                      nearest_node_cosine=duplicate_cosine)
            profile = NodeProfile(memory=memory, rationale=rationale, modality=stored_content.modality,
                                  source=source, domain=domain, delta_s=round(recorded.delta_s, 6),
                                  quarantined=quarantined)
            binary = stored_content.binary
            if binary is not None:
                extension = (mimetypes.guess_extension(binary.mime_type) if binary.mime_type else None) or ".bin"
                profile.media_type = binary.mime_type or ""
                profile.media.save(f"{memory.pk}{extension}", ContentFile(binary.data), save=False)
            profile.save()
            reward = steering_reward(
                stage=utl.stage_of(session.interactions), delta_s=recorded.delta_s, coherence=recorded.coherence,
                duplicate_cosine=duplicate_cosine, duplicate_of=duplicate_of,
                rationale_cosine=utl.cosine(rationale_vector.vector, np.asarray(vector)),
                rationale_words=content_words(rationale),
            )
            near_duplicate = (not quarantined and duplicate_cosine is not None
                              and duplicate_cosine >= NEAR_DUPLICATE_COSINE)
            task = task_open(
                owner=actor, task_type=CurationTask.TaskType.POTENTIAL_MERGE, node_ids=[memory.pk, duplicate_of],
                reason=f"A new node is a near-duplicate (cosine {duplicate_cosine:.2f}) of node {duplicate_of}.",
                suggested_tool=CurationTask.SuggestedTool.MERGE_CONCEPTS,
            ) if near_duplicate else None
    except BaseException:
        if profile is not None and profile.media:  # the file was written; its row rolled back
            profile.media.delete(save=False)
        raise
    return StoredNode(memory=memory, profile=profile, session=session, reward=reward, delta_s=recorded.delta_s,
                      links_created=0 if quarantined else stored.links_created,
                      linked_to=[] if quarantined else targets, embedded_from=stored_content.embedded_from,
                      near_duplicate_of=duplicate_of if near_duplicate else None, merge_task=task,
                      features=stored_content.binary.features if stored_content.binary else {},
                      adversarial=check, quarantined=quarantined)
