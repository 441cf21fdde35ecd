"""Context Graph's state over the shared memory graph: a profile per node, sessions and what happened in them,
the record of every change (lineage and system log), undo snapshots, tombstones, the curation inbox,
scratchpads and annotations. Memories stay one set of rows (apps.memories); these rows sit beside them."""
from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Func

from apps.cognition.limits import Domain, Johari, Modality, Privacy
from apps.core.halfvec import HalfVectorField
from apps.core.models import TimeStampedModel


class NodeProfile(models.Model):
    """What Context Graph knows of a memory beyond the memory itself."""

    memory = models.OneToOneField("memories.Memory", primary_key=True, on_delete=models.CASCADE,
                                  related_name="node_profile")
    rationale = models.TextField(blank=True)
    modality = models.CharField(max_length=8, choices=Modality.choices, default=Modality.TEXT)
    # Binary content (an image, a recording) kept as a file; the memory's content describes it.
    media = models.FileField(upload_to="cognition/media/%Y/%m/", blank=True)
    media_type = models.CharField(max_length=120, blank=True)
    source = models.CharField(max_length=200, blank=True)
    domain = models.CharField(max_length=10, choices=Domain.choices, default=Domain.GENERAL)
    johari = models.CharField(max_length=8, choices=Johari.choices, default=Johari.OPEN)
    # Surprise when stored: 1 - the highest cosine to the session's recent items and the nearest live node.
    delta_s = models.FloatField(default=1.0)
    name = models.CharField(max_length=200, blank=True)
    # How often retrieval has activated the node, and when last.
    activations = models.PositiveIntegerField(default=0)
    last_activated_at = models.DateTimeField(null=True, blank=True)
    # Stored, but kept out of retrieval until a reviewer releases it (check_adversarial found an attack).
    quarantined = models.BooleanField(default=False)

    class Meta:
        # Retrieval's NOT EXISTS reads this index only: it holds the quarantined few, not every profile.
        indexes = [models.Index(fields=["memory"], condition=models.Q(quarantined=True),
                                name="cg_profile_quarantined")]

    def __str__(self) -> str:
        return self.name or str(self.memory_id)


class CgSession(TimeStampedModel):
    """A Context Graph session (the `session_id` its tools take), with its UTL state cached for the pulse."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cg_sessions")
    agent_id = models.CharField(max_length=200, blank=True)
    entropy = models.FloatField(default=0.0)
    coherence = models.FloatField(default=0.0)
    learning_score = models.FloatField(default=0.0)
    interactions = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["owner", "-updated_at"], name="cg_session_owner_recent")]

    def __str__(self) -> str:
        return str(self.id)


class SessionItem(models.Model):
    """One query or store of a session: its vector and surprise, and the nodes it activated (dream replays them)."""

    class Kind(models.TextChoices):
        QUERY = "query", "Query"
        STORE = "store", "Store"

    session = models.ForeignKey(CgSession, on_delete=models.CASCADE, related_name="items")
    kind = models.CharField(max_length=5, choices=Kind.choices)
    text = models.TextField()
    vector = HalfVectorField(dimensions=settings.ENGRAM_EMBEDDING_DIMENSIONS)
    delta_s = models.FloatField()
    # [{"node_id": ..., "score": ...}], best first.
    activated = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["session", "-created_at"], name="cg_item_session_recent")]


class Event(models.Model):
    """One change to the graph: a node's lineage and the system log are read from these."""

    class Action(models.TextChoices):
        CREATED = "created", "Created"
        UPDATED = "updated", "Updated"
        REEMBEDDED = "reembedded", "Re-embedded"
        LINKED = "linked", "Linked"
        UNLINKED = "unlinked", "Unlinked"
        BOOSTED = "boosted", "Boosted"
        ANNOTATED = "annotated", "Annotated"
        MERGED = "merged", "Merged"
        DREAMED = "dreamed", "Dreamed"
        GARDENED = "gardened", "Gardened"
        DELETED = "deleted", "Deleted"
        FORGOTTEN = "forgotten", "Forgotten"
        RESTORED = "restored", "Restored"
        PRUNED = "pruned", "Pruned"
        PURGED = "purged", "Purged"
        QUARANTINED = "quarantined", "Quarantined"
        ADVERSARIAL_BLOCK = "adversarial_block", "Adversarial content blocked"

    id = models.BigAutoField(primary_key=True)
    # Whose graph the change is in, and who made it (None: the system).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    actor_label = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    node_ids = ArrayField(models.UUIDField())
    detail = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    reversal_hash = models.CharField(max_length=64, blank=True)
    # The database transaction that wrote it: the Events of one operation (a forget and the delete under it) share
    # it. Null for Events written before it was kept.
    transaction_id = models.BigIntegerField(
        null=True, blank=True, editable=False,
        db_default=Func(function="txid_current", output_field=models.BigIntegerField()))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            GinIndex(fields=["node_ids"], name="cg_event_nodes_gin"),
            models.Index(fields=["owner", "-created_at"], name="cg_event_owner_recent"),
        ]


class UndoEntry(models.Model):
    """What undoing one curation needs, row by row: reached by its unguessable hash until it expires."""

    class Operation(models.TextChoices):
        MERGE = "merge", "Merge"
        FORGET = "forget", "Forget"
        # A merge_concepts call that linked its nodes instead (their priors disagree): its relational edges.
        RELATE = "relate", "Relational link"
        DREAM = "dream", "Dream"
        # A gardener cycle (services/gardener/): the links it removed, the importance it scaled, its merges and forgets.
        GARDENER = "gardener", "Gardener cycle"

    reversal_hash = models.CharField(max_length=64, primary_key=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    operation = models.CharField(max_length=8, choices=Operation.choices)
    node_ids = ArrayField(models.UUIDField())
    # Each affected memory row with every vector, its links both ways, profile and annotations, and the rows the
    # operation made (a merged node), as the undo restores or removes them.
    snapshot = models.JSONField()
    # The state a preview showed, so an undo whose plan has changed since is refused.
    previewed_digest = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    used_at = models.DateTimeField(null=True, blank=True)


class UndoPart(models.Model):
    """A batch's addition to a long operation's undo snapshot (a dream's): the rows it keeps that the snapshot did not
    hold yet, what it made, the undos it covers. Appended in the batch's own transaction and read back in order after
    the entry's own snapshot, so a snapshot that grows with every batch is never rewritten whole."""

    entry = models.ForeignKey(UndoEntry, on_delete=models.CASCADE, related_name="parts")
    seq = models.PositiveIntegerField()
    snapshot = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["entry", "seq"], name="undo_part_seq_unique")]


class Tombstone(models.Model):
    """A forgotten node: the memory stays soft-deleted, with its vector, until the deadline."""

    class Reason(models.TextChoices):
        SEMANTIC_CANCER = "semantic_cancer", "Semantic cancer"
        ADVERSARIAL_INJECTION = "adversarial_injection", "Adversarial injection"
        USER_REQUESTED = "user_requested", "User requested"
        OBSOLETE = "obsolete", "Obsolete"
        GLYMPHATIC_CLEARANCE = "glymphatic_clearance", "Glymphatic clearance"
        MERGED = "merged", "Merged into another node"

    memory = models.OneToOneField("memories.Memory", primary_key=True, on_delete=models.CASCADE,
                                  related_name="tombstone")
    reason = models.CharField(max_length=24, choices=Reason.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    actor_label = models.CharField(max_length=200, blank=True)
    undo = models.ForeignKey(UndoEntry, null=True, blank=True, on_delete=models.SET_NULL, related_name="tombstones")
    created_at = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField(db_index=True)


class CurationTask(TimeStampedModel):
    """One item of the curation inbox: nodes the system thinks need a person's or an agent's hand."""

    class TaskType(models.TextChoices):
        POTENTIAL_MERGE = "potential_merge", "Potential merge"
        AMBIGUITY_DETECTED = "ambiguity_detected", "Ambiguity detected"
        OBSOLETE_INFO = "obsolete_info", "Obsolete information"
        SEMANTIC_CANCER = "semantic_cancer", "Semantic cancer"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        DONE = "done", "Done"

    class Priority(models.TextChoices):
        LOW = "low", "Low"
        MEDIUM = "medium", "Medium"
        HIGH = "high", "High"

    class SuggestedTool(models.TextChoices):
        MERGE_CONCEPTS = "merge_concepts", "merge_concepts"
        FORGET_CONCEPT = "forget_concept", "forget_concept"
        ANNOTATE_NODE = "annotate_node", "annotate_node"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="curation_tasks")
    task_type = models.CharField(max_length=20, choices=TaskType.choices)
    # The nodes, sorted, so that one node set has one task of a type.
    node_ids = ArrayField(models.UUIDField())
    reason = models.TextField()
    suggested_tool = models.CharField(max_length=16, choices=SuggestedTool.choices)
    priority = models.CharField(max_length=6, choices=Priority.choices, default=Priority.MEDIUM)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "task_type", "node_ids"], condition=models.Q(status="open"),
                                    name="cg_one_open_task_per_node_set"),
        ]
        indexes = [GinIndex(fields=["node_ids"], name="cg_task_nodes_gin")]


class ScratchpadItem(models.Model):
    """A short-term thought of one agent in one session, kept for an hour unless committed to the graph."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scratchpad_items")
    session_id = models.UUIDField()
    agent_id = models.CharField(max_length=200)
    privacy = models.CharField(max_length=8, choices=Privacy.choices, default=Privacy.PRIVATE)
    content = models.TextField()
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    delta_s = models.FloatField()
    auto_commit_threshold = models.FloatField(default=0.6)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["owner", "session_id", "agent_id"], name="cg_scratchpad_key")]


class Annotation(models.Model):
    """Marginalia on a node: a correction, a reference, a deprecation or a note."""

    class AnnotationType(models.TextChoices):
        CORRECTION = "correction", "Correction"
        REFERENCE = "reference", "Reference"
        DEPRECATION = "deprecation", "Deprecation"
        USER_NOTE = "user_note", "Note"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="annotations")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    author_label = models.CharField(max_length=200, blank=True)
    annotation_type = models.CharField(max_length=12, choices=AnnotationType.choices,
                                       default=AnnotationType.USER_NOTE)
    text = models.TextField()
    reference = models.ForeignKey("memories.Memory", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="referenced_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]


class ConsolidationRun(TimeStampedModel):
    """One dream of one user (services/dream/): its budget and seed, where it stands (checkpoint, saved in the
    transaction of each batch), who holds it (a lease kept alive by a heartbeat), and the undo of all it changed."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        INTERRUPTED = "interrupted", "Interrupted"
        COMPLETED = "completed", "Completed"
        ROLLED_BACK = "rolled_back", "Rolled back"

    class Phase(models.TextChoices):
        NREM = "nrem", "NREM"
        REM = "rem", "REM"
        FULL_CYCLE = "full_cycle", "Full cycle"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dream_runs")
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.FULL_CYCLE)
    # {"max_items", "minutes", "batch_size", "synthetic_query_count"}: the work a run may do before it stops.
    budget = models.JSONField(default=dict)
    # REM's random walks draw from this, so a resumed or repeated run walks the same way.
    seed = models.BigIntegerField()
    status = models.CharField(max_length=11, choices=Status.choices, default=Status.QUEUED)
    abort_on_query = models.BooleanField(default=True)
    # Set by a query of the owner (any edge) while the run is running; the run stops at its next batch.
    abort_requested_at = models.DateTimeField(null=True, blank=True)
    # Set by its owner's interrupt (a page, REST, the admin) whatever abort_on_query says; it stops the same way.
    interrupt_requested_at = models.DateTimeField(null=True, blank=True)
    # {"phase", "cursor", "counters", "phases_done", "windows"}: where the next batch starts.
    checkpoint = models.JSONField(default=dict)
    lease_owner = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # {"batches", "items", "stop_reason", ...}: for pages and the tool's answer.
    progress = models.JSONField(default=dict)
    # Why something did not happen (nothing qualified, a merge refused): sentences for the caller.
    notes = models.JSONField(default=list)
    # The run's one undo (an UndoEntry of operation dream); the merges it made, each undoable on its own too, are in
    # its parts' ``covers``.
    reversal_hash = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One dream per user at a time: a second trigger finds this one.
            models.UniqueConstraint(fields=["owner"], condition=models.Q(status__in=["queued", "running"]),
                                    name="cg_one_active_dream_per_user"),
        ]
        indexes = [models.Index(fields=["owner", "-created_at"], name="cg_dream_owner_recent")]

    def __str__(self) -> str:
        return f"dream {self.id} ({self.status})"


class DreamList(models.Model):
    """A long list a dream's step works through (NREM link's pairs, NREM summarise's kNN pairs and clusters), kept
    beside its run rather than in its checkpoint: appended in a batch's own transaction, read back by position, and
    deleted when the step ends, so a batch's checkpoint stays small however long the list grows."""

    run = models.ForeignKey(ConsolidationRun, on_delete=models.CASCADE, related_name="lists")
    key = models.CharField(max_length=16)
    seq = models.PositiveIntegerField()
    item = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key", "seq"], name="dream_list_seq_unique")]


class BlindSpot(models.Model):
    """Where a dream's REM found the graph thin (a synthetic query nothing answers well) or disconnected (what
    answers it is more than three links away): material for epistemic_action's questions."""

    class Kind(models.TextChoices):
        THIN = "thin", "Nothing answers it well"
        DISCONNECTED = "disconnected", "What answers it is not linked"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blind_spots")
    run = models.ForeignKey(ConsolidationRun, null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="blind_spots")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    # The synthetic query (the walk's last node's words), the walk's nodes, and the best hits with their scores.
    query = models.TextField()
    node_ids = ArrayField(models.UUIDField())
    hits = models.JSONField(default=list, blank=True)
    best_score = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="cg_blind_spot_owner_recent"),
                   GinIndex(fields=["node_ids"], name="cg_blind_spot_nodes_gin")]


class BenchmarkRun(TimeStampedModel):
    """One test_recall_accuracy run: needles and a haystack from a seeded generator (apps/cognition/needles.py),
    stored through the real store path into a hidden cube of the owner, queried with paraphrases, then the cube is
    deleted. Resumable by its counters: batches commit with them, so a worker that dies resumes where it stopped."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    class Phase(models.TextChoices):
        STORING = "storing", "Storing needles and haystack"
        QUERYING = "querying", "Querying with paraphrases"
        DONE = "done", "Done"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="benchmark_runs")
    test_type = models.CharField(max_length=24)
    needle_count = models.PositiveIntegerField()
    haystack_size = models.PositiveIntegerField()
    # What the caller asked to compare against, and what really ran (None: no baseline).
    baseline_model = models.CharField(max_length=40)
    baseline_used = models.CharField(max_length=300, blank=True)
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.STORING)
    # The hidden cube (an id, not a key: the run outlives the cube it deletes).
    cube_id = models.CharField(max_length=100, blank=True)
    # Checkpoint: items of the generator's order stored, queries answered (each batch commits with them).
    stored = models.PositiveIntegerField(default=0)
    queried = models.PositiveIntegerField(default=0)
    total_items = models.PositiveIntegerField(default=0)
    total_queries = models.PositiveIntegerField(default=0)
    # needle index -> memory id, and one outcome per query answered (services/benchmark.py says what each holds).
    needles = models.JSONField(default=dict, blank=True)
    outcomes = models.JSONField(default=list, blank=True)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Handed to Celery (the work outlasted the call's budget), and who works on it now: a lease idle longer than
    # BENCHMARK_LEASE_SECONDS may be taken over.
    background = models.BooleanField(default=False)
    lease = models.CharField(max_length=32, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="cg_benchmark_owner_recent")]
        constraints = [
            # One unfinished run per user: a second one would compete with the first for the same machine.
            models.UniqueConstraint(fields=["owner"], condition=models.Q(status__in=["queued", "running"]),
                                    name="cg_one_active_benchmark_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.test_type} {self.pk}"


class ActivityState(models.Model):
    """How active a user is (services/gardener/activity.py) and what their gardener did: the EWMA of their queries,
    since when it has been low, the last cycle (its report) and the lease of a cycle under way."""

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE,
                                 related_name="activity_state")
    # EWMA of min(1, queries in a tick / 5), one step per 30 s tick.
    activity = models.FloatField(default=0.0)
    # Queries counted (flushed by the processes that served them) and not yet folded into the EWMA by a tick.
    pending_queries = models.PositiveIntegerField(default=0)
    queries_total = models.BigIntegerField(default=0)
    last_tick_queries = models.PositiveIntegerField(default=0)
    last_tick_at = models.DateTimeField(null=True, blank=True)
    last_query_at = models.DateTimeField(null=True, blank=True)
    # Since when the activity has been below the idle threshold (None: it is not).
    low_since = models.DateTimeField(null=True, blank=True)
    last_cycle_at = models.DateTimeField(null=True, blank=True)
    # {"status", "trigger", "started_at", "finished_at", "stop_reason", "counters", "reversal_hash", "notes"}.
    last_cycle = models.JSONField(default=dict, blank=True)
    # When the tick last triggered the user's dream (auto-dream).
    last_dream_at = models.DateTimeField(null=True, blank=True)
    # A cycle under way holds this lease (wall-clock), renewed before each batch; a silent one is taken over.
    cycle_token = models.CharField(max_length=32, blank=True)
    cycle_heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The reversal hash of the cycle under way (its undo waits until it stops).
    cycle_hash = models.CharField(max_length=64, blank=True)
    # Cycles tend the graph window by window (services/gardener/cycle.py): the next window starts after this node id
    # (null: at the first node, a new round).
    garden_cursor = models.UUIDField(null=True, blank=True)
    # The round under way, or the last one finished: {"number", "started_at", "dedupe_since", "windows", "variance",
    # "factor", "scaled_through", "finished_at"}.
    garden_round = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "activity state"

    def __str__(self) -> str:
        return f"activity of {self.owner_id}: {self.activity:.3f}"
