import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from pgvector.django import HnswIndex

from apps.core.halfvec import HalfVectorField
from apps.core.models import TimeStampedModel

UNIT = [MinValueValidator(0.0), MaxValueValidator(1.0)]
# The text search configuration of the generated tsvector; queries must use the same one.
SEARCH_CONFIG = "english"


class Sector(models.TextChoices):
    EPISODIC = "episodic", "Episodic"
    SEMANTIC = "semantic", "Semantic"
    PROCEDURAL = "procedural", "Procedural"
    EMOTIONAL = "emotional", "Emotional"
    REFLECTIVE = "reflective", "Reflective"


SECTORS = [choice.value for choice in Sector]


class Memory(TimeStampedModel):
    """A node of the memory graph. Mind's decisions, issues, sharp edges and episodes (apps/projects)
    are nodes too, of their own kind, whose content their services keep in step with the entity, and so are
    Thoughtbox's thoughts (apps/reasoning)."""

    class Kind(models.TextChoices):
        MEMORY = "memory", "Memory"
        DECISION = "decision", "Decision"
        ISSUE = "issue", "Issue"
        SHARP_EDGE = "sharp_edge", "Sharp edge"
        EPISODE = "episode", "Episode"
        THOUGHT = "thought", "Thought"
        SUMMARY = "summary", "Summary"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    cube = models.ForeignKey("cubes.Cube", on_delete=models.CASCADE, related_name="memories")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.MEMORY)
    content = models.TextField()
    primary_sector = models.CharField(max_length=12, choices=Sector.choices, default=Sector.SEMANTIC)
    importance = models.FloatField(default=0.5, validators=UNIT)
    salience = models.FloatField(default=0.5, validators=UNIT)
    strength = models.FloatField(default=1.0, validators=UNIT)
    decay_rate = models.FloatField(default=0.02, validators=[MinValueValidator(0.0)])
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    # When decay last brought strength up to date; decay is computed from here, not from creation.
    decayed_at = models.DateTimeField(null=True, blank=True)
    session_id = models.CharField(max_length=200, blank=True, db_index=True)
    agent_id = models.CharField(max_length=200, blank=True)
    keywords = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    category = models.CharField(max_length=100, blank=True)
    context = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("content", weight="A", config=SEARCH_CONFIG)
        + SearchVector("context", weight="C", config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    strength_before_delete = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "memories"
        indexes = [
            GinIndex(fields=["search_vector"], name="memory_search_vector_gin"),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            GinIndex(fields=["keywords"], name="memory_keywords_gin"),
            models.Index(fields=["cube", "-created_at"], name="memory_cube_created"),
            models.Index(fields=["cube", "deleted_at"], name="memory_cube_deleted"),
            # A retrieval's top hits find their session neighbours through it (retrieval/scoring.py).
            models.Index(fields=["cube", "session_id", "created_at"], name="memory_cube_session_created"),
        ]

    def __str__(self) -> str:
        return self.content[:80]

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None


class MemoryVector(models.Model):
    """A memory's embedding: the model's vector of its content, in half precision. Its five sector vectors
    are derived from it (apps/memories/sectors.py), so one model pass and one stored vector serve all five."""

    memory = models.OneToOneField(Memory, primary_key=True, on_delete=models.CASCADE, related_name="vector")
    embedding = HalfVectorField(dimensions=settings.ENGRAM_EMBEDDING_DIMENSIONS)
    # How many tokens the model read: a sector's offset from the content vector scales with its inverse.
    tokens = models.PositiveSmallIntegerField()

    class Meta:
        indexes = [
            HnswIndex(
                name="memory_vector_hnsw", fields=["embedding"], m=16, ef_construction=64,
                opclasses=["halfvec_cosine_ops"],
            ),
        ]


class MemoryLink(TimeStampedModel):
    """A typed, weighted, directed edge of the memory graph."""

    class LinkType(models.TextChoices):
        SEMANTIC = "semantic", "Semantic"
        CAUSAL = "causal", "Causal"
        TEMPORAL = "temporal", "Temporal"
        ANALOGICAL = "analogical", "Analogical"
        HIERARCHICAL = "hierarchical", "Hierarchical"

    class Origin(models.TextChoices):
        STORE = "store", "Made on store"
        PARSE = "parse", "Parsed from a clause"
        MANUAL = "manual", "Made by hand"
        NREM = "nrem", "Dream (NREM replay)"
        REM = "rem", "Dream (REM leap)"
        SHORTCUT = "shortcut", "Dream (REM shortcut)"

    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="outgoing_links")
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="incoming_links")
    link_type = models.CharField(max_length=12, choices=LinkType.choices, default=LinkType.SEMANTIC)
    weight = models.FloatField(default=0.5, validators=UNIT)
    traversal_count = models.PositiveIntegerField(default=0)
    # What made the link; a database default too, so raw inserts that predate the field stay valid.
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.STORE, db_default=Origin.STORE)
    # When retrieval or a dream's replay last saw both ends active together (the gardener prunes idle weak links).
    last_activated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target"], name="one_link_per_pair"),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="no_self_link"),
        ]
        indexes = [models.Index(fields=["target"], name="memory_link_target")]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.link_type}-> {self.target_id}"


class CubeLexeme(models.Model):
    """How many live memories of a cube contain a lexeme: the document frequencies of the lexical score.

    Kept exact by statement-level triggers on the memory table (migration 0002), so every write path
    counts, bulk and raw SQL included. The row whose lexeme is '' (no tsvector lexeme is empty) counts
    the cube's live memories. Search reads a few rows here instead of every match of every query word
    (docs/retrieval.md)."""

    LIVE_MEMORIES = ""  # the lexeme of the row that counts the cube's live memories

    pk = models.CompositePrimaryKey("cube_id", "lexeme")
    cube = models.ForeignKey("cubes.Cube", on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField(blank=True)
    documents = models.IntegerField()

    class Meta:
        # Search's "did you mean": the user's own lexemes nearest a word no memory holds, by trigram similarity.
        indexes = [GinIndex(fields=["lexeme"], opclasses=["gin_trgm_ops"], name="cube_lexeme_trigram")]

    def __str__(self) -> str:
        return f"{self.cube_id}: {self.lexeme or '(live memories)'} x {self.documents}"


class ModelSwitch(models.Model):
    """A move of every stored vector to another embedding model (services/model_switch.py), and its progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        STAGING = "staging", "Embedding with the new model"
        SWAPPING = "swapping", "Swapping the vectors in"
        INDEXING = "indexing", "Building the vector index"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    model = models.CharField(max_length=200)
    dimensions = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    # True while the switch runs, NULL after: the unique constraint lets one run at a time.
    active = models.BooleanField(null=True, default=True, unique=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.model}: {self.status} ({self.done}/{self.total})"
