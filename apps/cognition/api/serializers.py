"""REST shapes of Context Graph (apps/cognition). Requests declare types and the ranges of apps/cognition/limits.py
(for clear 400s and the OpenAPI schema); the services own every other rule, so REST and the MCP profile refuse the
same things. A node is the profile's NodeSummary and an edge its EdgeSummary (apps/cognition/representations.py)."""
from rest_framework import serializers

from apps.cognition.limits import (
    ANNOTATION_MAX_CHARS, CONTRADICTION_THRESHOLD, CONTRADICTION_THRESHOLD_DEFAULT, CRITIQUE_FOCAL_NODES,
    CRITIQUE_SUMMARY_MAX_CHARS, CRITIQUE_SUMMARY_MIN_CHARS, EMBEDDING_MAX_ITEMS, LINEAGE_DEPTH, LINK_TO_MAX, LOG_LIMIT,
    MERGE_MAX_SOURCES, NEIGHBORHOOD_HOPS, NEIGHBORHOOD_NODES, PERSPECTIVE_MAX_AGENTS, RATIONALE_MAX_CHARS,
    RATIONALE_MIN_CHARS, RECENT_LIMIT, RECENT_LOOKBACK_MINUTES, SCRATCHPAD_AUTO_COMMIT, SCRATCHPAD_CONTENT_CHARS,
    SCRATCHPAD_TAGS, SEARCH_TOP_K, STORE_CONTENT_MAX_CHARS, TOMBSTONE_TOP_K, Domain, Johari, Modality, Privacy,
)
from apps.cognition.models import CgSession, CurationTask, Tombstone, UndoEntry
from apps.cognition.selectors.lineage import LOG_TYPES
from apps.cognition.selectors.records import TASK_STATUSES
from apps.cognition.selectors.tombstones import SEARCHABLE_REASONS
from apps.cognition.services.critique import KINDS as CRITIQUE_KINDS
from apps.cognition.services.curation import ANNOTATION_TYPES, FORGET_REASONS, STRATEGIES
from apps.cognition.services.immune import ATTACK_TYPES
from apps.core.aliases import Aliases
from apps.core.api.serializers import (
    JSONBooleanField, JSONCharField, JSONFloatField, JSONIntegerField, PageQuerySerializer, StrictSerializer,
)
from apps.core.limits import BOOST_FACTOR, UNIT
from apps.memories.services.lifecycle import MAX_BOOST_REASON_CHARS
from apps.memories.validation import MAX_QUERY_CHARS

# The services' argument names -> the REST names, where they differ: a service's error names what was sent.
STORE_ALIASES = Aliases({"target_ids": "link_to", "agent_id": "metadata.agent_id"})
SEARCH_ALIASES = Aliases({"text": "query", "limit": "top_k"})
NEIGHBORHOOD_ALIASES = Aliases({"memory_id": "focal_node_id"})
BOOST_ALIASES = Aliases({"memory_id": "node_id", "factor": "boost_factor"})
NODE_ALIASES = Aliases({"memory_id": "node_id"})
# A restore finds the undo from the node: an error about the hash is about the node named.
RESTORE_ALIASES = Aliases({"reversal_hash": "node_id"})
# A task's approval runs a merge, forget or annotation on the task's nodes: their errors are about the task.
DECISION_ALIASES = Aliases({"source_node_ids": "task_id", "node_id": "task_id", "memory_id": "task_id",
                            "text": "note"})

UUID_LIST_HELP = "UUIDs of nodes (the node_id values other answers gave)."


# --- Requests --------------------------------------------------------------------------------------------------

class NodeStoreSerializer(StrictSerializer):
    rationale = JSONCharField(min_length=RATIONALE_MIN_CHARS, max_length=RATIONALE_MAX_CHARS,
                              help_text="Why this knowledge is worth storing "
                                        f"({RATIONALE_MIN_CHARS} to {RATIONALE_MAX_CHARS} characters).")
    content = JSONCharField(required=False, max_length=STORE_CONTENT_MAX_CHARS, trim_whitespace=False,
                            help_text="Text content. Give exactly one of content, content_base64 or data_uri.")
    content_base64 = JSONCharField(required=False, help_text="Binary content (image, audio, video), base64; with "
                                                             "modality.")
    data_uri = JSONCharField(required=False, help_text="Binary content as a data: URI (data:image/png;base64,...).")
    modality = serializers.ChoiceField(choices=Modality.choices, required=False)
    importance = JSONFloatField(required=False, **UNIT.drf(), help_text="From 0 to 1 (default 0.5).")
    metadata = serializers.DictField(required=False, help_text="Free metadata; domain, source and agent_id go to "
                                                               "the node's profile.")
    link_to = serializers.ListField(child=serializers.UUIDField(), required=False, max_length=LINK_TO_MAX,
                                    help_text=f"Up to {LINK_TO_MAX} of your nodes to link the new node to.")


class NodeSearchSerializer(StrictSerializer):
    query = JSONCharField(max_length=MAX_QUERY_CHARS)
    top_k = JSONIntegerField(required=False, **SEARCH_TOP_K.drf(), help_text=f"Results, {SEARCH_TOP_K} "
                                                                             f"(default {SEARCH_TOP_K.default}).")
    min_importance = JSONFloatField(required=False, **UNIT.drf())
    johari_quadrants = serializers.ListField(child=serializers.ChoiceField(choices=Johari.choices), required=False,
                                             max_length=len(Johari.values))
    created_after = serializers.DateTimeField(required=False)
    domain = serializers.ChoiceField(choices=Domain.choices, required=False,
                                     help_text="Perspective lock: only nodes of this domain.")
    agent_ids = serializers.ListField(child=JSONCharField(max_length=200), required=False,
                                      max_length=PERSPECTIVE_MAX_AGENTS, help_text="Only nodes of these agents.")
    exclude_agent_ids = serializers.ListField(child=JSONCharField(max_length=200), required=False,
                                              max_length=PERSPECTIVE_MAX_AGENTS, help_text="No nodes of these agents.")


class NeighborhoodQuerySerializer(StrictSerializer):
    session_id = serializers.UUIDField(required=False, help_text="A session of yours (default: your latest).")
    focal_node_id = serializers.UUIDField(required=False, help_text="Start from this node instead of the session's "
                                                                    "latest activated nodes.")
    max_hops = serializers.IntegerField(required=False, **NEIGHBORHOOD_HOPS.drf())
    max_nodes = serializers.IntegerField(required=False, **NEIGHBORHOOD_NODES.drf())
    include_edges = serializers.BooleanField(required=False, default=True)


class RecentQuerySerializer(StrictSerializer):
    session_id = serializers.UUIDField(required=False)
    lookback_minutes = serializers.IntegerField(required=False, **RECENT_LOOKBACK_MINUTES.drf())
    limit = serializers.IntegerField(required=False, **RECENT_LIMIT.drf())
    sort_by = serializers.ChoiceField(choices=["recency", "importance", "access_count"], required=False)


class LineageQuerySerializer(StrictSerializer):
    depth = serializers.IntegerField(required=False, **LINEAGE_DEPTH.drf(),
                                     help_text=f"Changes back, {LINEAGE_DEPTH} (default {LINEAGE_DEPTH.default}).")


class AnnotateSerializer(StrictSerializer):
    text = JSONCharField(max_length=ANNOTATION_MAX_CHARS, help_text="The note.")
    annotation_type = serializers.ChoiceField(choices=ANNOTATION_TYPES, required=False, default="user_note")
    reference_node_id = serializers.UUIDField(required=False, help_text="The node a reference or deprecation "
                                                                        "points to.")


class NodeBoostSerializer(StrictSerializer):
    boost_factor = JSONFloatField(required=False, default=1.5, **BOOST_FACTOR.drf(),
                                  help_text="importance becomes clamp(importance x boost_factor, 0, 1).")
    reason = JSONCharField(required=False, default="", allow_blank=True, max_length=MAX_BOOST_REASON_CHARS)


class MergeSerializer(StrictSerializer):
    source_node_ids = serializers.ListField(child=serializers.UUIDField(), min_length=2, max_length=MERGE_MAX_SOURCES,
                                            help_text=UUID_LIST_HELP)
    target_name = JSONCharField(max_length=200, help_text="Name of the merged node.")
    merge_strategy = serializers.ChoiceField(choices=STRATEGIES, required=False, default="keep_highest")
    force_merge = JSONBooleanField(required=False, default=False,
                                   help_text="Merge even when the sources' agents see the world differently.")


class ForgetSerializer(StrictSerializer):
    reason = serializers.ChoiceField(choices=FORGET_REASONS)
    cascade_edges = JSONBooleanField(required=False, default=True)
    soft_delete = JSONBooleanField(required=False, default=True,
                                   help_text="False deletes for good (needs reason user_requested).")


class PreviewSerializer(StrictSerializer):
    preview = JSONBooleanField(required=False, default=False,
                               help_text="True shows what the restore would do and changes nothing.")


class TaskListQuerySerializer(PageQuerySerializer):
    status = serializers.ChoiceField(choices=TASK_STATUSES, required=False, default="all")


class ApproveSerializer(StrictSerializer):
    note = JSONCharField(required=False, default="", allow_blank=True, max_length=ANNOTATION_MAX_CHARS,
                         help_text="The correction an ambiguity task's approval writes (required for those).")


class UndoListQuerySerializer(PageQuerySerializer):
    usable = serializers.BooleanField(required=False, default=False,
                                      help_text="Only the entries that can still be applied.")


class TombstoneListQuerySerializer(PageQuerySerializer):
    deletion_reason = serializers.ChoiceField(choices=SEARCHABLE_REASONS, required=False, default="all")


class TombstoneSearchQuerySerializer(StrictSerializer):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text="What you remember of the node.")
    deletion_reason = serializers.ChoiceField(choices=SEARCHABLE_REASONS, required=False, default="all")
    deleted_after = serializers.DateTimeField(required=False)
    top_k = serializers.IntegerField(required=False, **TOMBSTONE_TOP_K.drf())


class SystemLogQuerySerializer(StrictSerializer):
    log_type = serializers.ChoiceField(choices=tuple(LOG_TYPES), required=False, default="all")
    node_id = serializers.UUIDField(required=False)
    since = serializers.CharField(required=False, max_length=64,
                                  help_text="An ISO 8601 time or a relative span such as -24h or -7d.")
    limit = serializers.IntegerField(required=False, **LOG_LIMIT.drf())


class ScratchpadStoreSerializer(StrictSerializer):
    content = JSONCharField(max_length=SCRATCHPAD_CONTENT_CHARS)
    privacy = serializers.ChoiceField(choices=Privacy.choices, required=False, default=Privacy.PRIVATE)
    tags = serializers.ListField(child=JSONCharField(max_length=100), required=False, max_length=SCRATCHPAD_TAGS)
    auto_commit_threshold = JSONFloatField(required=False, **SCRATCHPAD_AUTO_COMMIT.drf())


# --- Responses -------------------------------------------------------------------------------------------------

class PulseSerializer(serializers.Serializer):
    entropy = serializers.FloatField()
    coherence = serializers.FloatField()
    suggested = serializers.CharField(allow_null=True, help_text="The tool the pulse suggests next, if any.")


class SessionSerializer(serializers.ModelSerializer):
    class Meta:
        model = CgSession
        fields = ["id", "agent_id", "entropy", "coherence", "learning_score", "interactions", "created_at",
                  "updated_at"]
        read_only_fields = fields


class SessionListItemSerializer(SessionSerializer):
    pulse = PulseSerializer()

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "pulse"]
        read_only_fields = fields


class ActivatedSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    score = serializers.FloatField()


class SessionItemSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="query or store.")
    text = serializers.CharField()
    activated = ActivatedSerializer(many=True)


class SessionDetailSerializer(SessionSerializer):
    pulse = PulseSerializer()
    recent_items = SessionItemSerializer(many=True)

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "pulse", "recent_items"]
        read_only_fields = fields


class CurationTaskSerializer(serializers.ModelSerializer):
    closed_by = serializers.CharField(source="closed_by.username", default=None, allow_null=True)

    class Meta:
        model = CurationTask
        fields = ["id", "task_type", "node_ids", "reason", "suggested_tool", "priority", "status", "created_at",
                  "updated_at", "closed_at", "closed_by"]
        read_only_fields = fields


class NodeSummarySerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    content = serializers.CharField()
    kind = serializers.CharField()
    importance = serializers.FloatField()
    score = serializers.FloatField()


class EdgeSummarySerializer(serializers.Serializer):
    source = serializers.UUIDField()
    target = serializers.UUIDField()
    edge_type = serializers.CharField()
    weight = serializers.FloatField()


class StoredNodeSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    session_id = serializers.UUIDField()
    modality = serializers.CharField()
    delta_s = serializers.FloatField()
    links_created = serializers.IntegerField()
    linked_to = serializers.ListField(child=serializers.CharField())
    embedded_from = serializers.CharField()
    steering_reward = serializers.DictField(help_text="dopamine_signal, its rationale and a behavioral_hint.")
    near_duplicate_of = serializers.UUIDField(allow_null=True)
    curation_task_id = serializers.UUIDField(allow_null=True, help_text="The potential_merge task a near-duplicate "
                                                                        "opened.")


class NodeSearchResponseSerializer(serializers.Serializer):
    results = NodeSummarySerializer(many=True)
    session_id = serializers.UUIDField()


class NeighborhoodSerializer(serializers.Serializer):
    nodes = NodeSummarySerializer(many=True)
    edges = EdgeSummarySerializer(many=True)
    focal_point = serializers.ListField(child=serializers.UUIDField())
    note = serializers.CharField(allow_blank=True)


class TimeRangeSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


class RecentSerializer(serializers.Serializer):
    nodes = NodeSummarySerializer(many=True)
    time_range = TimeRangeSerializer()


class LineageChangeSerializer(serializers.Serializer):
    timestamp = serializers.DateTimeField()
    action = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    actor = serializers.CharField(allow_blank=True)
    reversal_hash = serializers.CharField(allow_blank=True)
    detail = serializers.DictField()


class LineageSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    current_content = serializers.CharField()
    deleted = serializers.BooleanField()
    changes = LineageChangeSerializer(many=True)
    merged_from = serializers.ListField(child=serializers.UUIDField())
    forked_to = serializers.ListField(child=serializers.UUIDField())
    total_changes = serializers.IntegerField()


class AnnotationSerializer(serializers.Serializer):
    annotation_id = serializers.UUIDField()
    node_id = serializers.UUIDField()
    annotation_type = serializers.CharField()
    text = serializers.CharField()


class NodeBoostResultSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    new_importance = serializers.FloatField()
    previous_importance = serializers.FloatField()


class MergeResultSerializer(serializers.Serializer):
    merged_node_id = serializers.UUIDField(allow_null=True)
    nodes_merged = serializers.IntegerField()
    edges_redirected = serializers.IntegerField()
    priors_compatible = serializers.BooleanField()
    relational_edge_created = serializers.BooleanField()
    relational_note = serializers.CharField(allow_null=True)
    reversal_hash = serializers.CharField(allow_null=True)


class ForgetResultSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    soft_deleted = serializers.BooleanField()
    edges_removed = serializers.IntegerField()
    restore_deadline = serializers.DateTimeField(allow_null=True)
    reversal_hash = serializers.CharField(allow_null=True)


class UndoChangeSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    fields = serializers.ListField(child=serializers.CharField())


class UndoPlanSerializer(serializers.Serializer):
    adds = serializers.DictField(help_text="nodes (ids) and edges (count) the undo brings back.")
    removes = serializers.DictField(help_text="nodes, edges and annotations the undo removes.")
    changes = UndoChangeSerializer(many=True)
    edges_lost = serializers.IntegerField()


class UndoResultSerializer(serializers.Serializer):
    reversal_hash = serializers.CharField()
    original_operation = serializers.CharField()
    operation_timestamp = serializers.DateTimeField()
    restored_nodes = serializers.ListField(child=serializers.UUIDField())
    restored_edges = serializers.IntegerField()
    executed = serializers.BooleanField(help_text="False for a preview, which changed nothing.")
    plan = UndoPlanSerializer()


class UndoEntrySerializer(serializers.ModelSerializer):
    usable = serializers.BooleanField(help_text="Unused and unexpired: it can still be applied.")

    class Meta:
        model = UndoEntry
        fields = ["reversal_hash", "operation", "node_ids", "created_at", "expires_at", "used_at", "usable"]
        read_only_fields = fields


class TombstoneSerializer(serializers.ModelSerializer):
    node_id = serializers.UUIDField(source="memory_id")
    original_content = serializers.CharField(source="memory.content")
    deletion_reason = serializers.CharField(source="reason")
    deleted_at = serializers.DateTimeField(source="created_at")
    deleted_by = serializers.CharField(source="actor_label")
    restore_deadline = serializers.DateTimeField(source="deadline")
    recoverable = serializers.BooleanField(help_text="An undo of yours can still bring it back.")

    class Meta:
        model = Tombstone
        fields = ["node_id", "original_content", "deletion_reason", "deleted_at", "deleted_by", "restore_deadline",
                  "recoverable"]
        read_only_fields = fields


class TombstoneHitSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    original_content = serializers.CharField()
    deletion_reason = serializers.CharField()
    deleted_at = serializers.DateTimeField()
    deleted_by = serializers.CharField()
    restore_deadline = serializers.DateTimeField()
    recoverable = serializers.BooleanField()
    similarity = serializers.FloatField()
    explanation = serializers.CharField()
    merged_into = serializers.UUIDField(allow_null=True)


class TombstoneSearchSerializer(serializers.Serializer):
    tombstones = TombstoneHitSerializer(many=True)
    recovery_instructions = serializers.CharField()


class LogEntrySerializer(serializers.Serializer):
    timestamp = serializers.DateTimeField()
    action = serializers.CharField()
    node_ids = serializers.ListField(child=serializers.UUIDField())
    reason = serializers.CharField(allow_blank=True)
    details = serializers.CharField(allow_blank=True)
    actor = serializers.CharField(allow_blank=True)
    recoverable = serializers.BooleanField()
    recovery_tool = serializers.CharField(allow_null=True)
    reversal_hash = serializers.CharField(allow_blank=True)


class SystemLogSerializer(serializers.Serializer):
    entries = LogEntrySerializer(many=True)
    since = serializers.DateTimeField()
    log_type = serializers.CharField()


class ScratchpadItemSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    session_id = serializers.UUIDField()
    agent_id = serializers.CharField()
    privacy = serializers.CharField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    delta_s = serializers.FloatField()
    auto_commit_threshold = serializers.FloatField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class ScratchpadSerializer(serializers.Serializer):
    pad_id = serializers.UUIDField()
    items = ScratchpadItemSerializer(many=True)
    items_count = serializers.IntegerField(help_text="Every item the agent can see (items shows the newest).")
    stored_id = serializers.UUIDField(allow_null=True, help_text="The item a store added.")
    cleared = serializers.IntegerField(help_text="Items a clear removed.")


# --- check_adversarial, critique_context and the quarantine -------------------------------------------------------

class AdversarialCheckSerializer(StrictSerializer):
    content = JSONCharField(max_length=STORE_CONTENT_MAX_CHARS, trim_whitespace=False,
                            help_text="The text to check, as it would be stored.")
    embedding = serializers.ListField(child=JSONFloatField(), required=False, max_length=EMBEDDING_MAX_ITEMS,
                                      help_text="Optional: an embedding claimed for the content (384 numbers, "
                                                "MiniLM), compared with the content's own.")


class FindingSpanSerializer(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class AdversarialFindingSerializer(serializers.Serializer):
    attack_type = serializers.ChoiceField(choices=ATTACK_TYPES)
    confidence = serializers.FloatField()
    details = serializers.CharField()
    span = FindingSpanSerializer(required=False, help_text="Where the matched text is (prompt_injection).")
    evidence = serializers.DictField()


class AdversarialResultSerializer(serializers.Serializer):
    safe = serializers.BooleanField()
    attack_type = serializers.ChoiceField(choices=ATTACK_TYPES)
    confidence = serializers.FloatField(help_text="An attack's: its strongest finding's. Safe: the share of the "
                                                  "four detectors that ran.")
    details = serializers.CharField()
    quarantine = serializers.BooleanField(help_text="Whether store_memory would quarantine this content.")
    findings = AdversarialFindingSerializer(many=True)
    checks = serializers.DictField(child=serializers.CharField(), help_text="Each detector: ran, or why not.")


class CritiqueSerializer(StrictSerializer):
    reasoning_summary = JSONCharField(min_length=CRITIQUE_SUMMARY_MIN_CHARS, max_length=CRITIQUE_SUMMARY_MAX_CHARS,
                                      help_text="Your reasoning, in sentences.")
    focal_nodes = serializers.ListField(child=serializers.UUIDField(), required=False,
                                        max_length=CRITIQUE_FOCAL_NODES,
                                        help_text="Nodes every sentence is compared with, besides its nearest.")
    contradiction_threshold = JSONFloatField(required=False, **CONTRADICTION_THRESHOLD.drf(),
                                             help_text="A finding scoring this or more is a contradiction "
                                                       f"(default {CONTRADICTION_THRESHOLD_DEFAULT}).")


class ContradictionSerializer(serializers.Serializer):
    sentence_index = serializers.IntegerField()
    sentence = serializers.CharField()
    kind = serializers.ChoiceField(choices=CRITIQUE_KINDS)
    node_id = serializers.UUIDField()
    node_content = serializers.CharField(allow_blank=True)
    score = serializers.FloatField()
    explanation = serializers.CharField()
    evidence = serializers.DictField()


class NearestNodeSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    similarity = serializers.FloatField()


class SentenceMatchSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    text = serializers.CharField()
    nearest_nodes = NearestNodeSerializer(many=True)


class CritiqueResultSerializer(serializers.Serializer):
    consistent = serializers.BooleanField()
    contradictions = ContradictionSerializer(many=True)
    contradiction_count = serializers.IntegerField()
    below_threshold = serializers.IntegerField()
    contradiction_threshold = serializers.FloatField()
    sentences = SentenceMatchSerializer(many=True)
    method = serializers.CharField()


class QuarantinedNodeSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    content = serializers.CharField()
    cube = serializers.CharField()
    created_at = serializers.DateTimeField()
    attack_type = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_blank=True, help_text="What check_adversarial found.")
    findings = serializers.ListField(child=serializers.DictField())


class ReleasedSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    links_restored = serializers.IntegerField()
    links_lost = serializers.IntegerField(help_text="Links whose other end is gone or out of your reach.")
