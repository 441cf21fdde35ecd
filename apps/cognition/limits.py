"""Context Graph's vocabularies, limits and thresholds, defined once: the models, services, MCP input schemas,
REST serializers and forms all read them from here (docs/context_graph.md gives each with its reason)."""
from __future__ import annotations

from django.db import models

from apps.core.limits import Range


class Modality(models.TextChoices):
    TEXT = "text", "Text"
    IMAGE = "image", "Image"
    AUDIO = "audio", "Audio"
    VIDEO = "video", "Video"


class Domain(models.TextChoices):
    CODE = "code", "Code"
    MEDICAL = "medical", "Medical"
    LEGAL = "legal", "Legal"
    CREATIVE = "creative", "Creative"
    RESEARCH = "research", "Research"
    GENERAL = "general", "General"


class Johari(models.TextChoices):
    OPEN = "open", "Open"
    BLIND = "blind", "Blind"
    HIDDEN = "hidden", "Hidden"
    UNKNOWN = "unknown", "Unknown"


class Privacy(models.TextChoices):
    PRIVATE = "private", "Private"
    TEAM = "team", "Team"
    SHARED = "shared", "Shared"


class Stage(models.TextChoices):
    INFANCY = "infancy", "Infancy"
    GROWTH = "growth", "Growth"
    MATURITY = "maturity", "Maturity"


# Undo snapshots and tombstones are kept this long; then cognition.purge_expired removes them for good.
UNDO_RETENTION_DAYS = 30
SCRATCHPAD_TTL_MINUTES = 60

# Surprise (delta S) compares a new item with this many of the session's latest items and the nearest live node.
RECENT_ITEMS = 50
# Entropy is the exponentially weighted mean of delta S with this weight on the newest item.
ENTROPY_SMOOTHING = 0.3

# Curation (merge_concepts, annotate_node, search_tombstones).
MERGE_MAX_SOURCES = 50
ANNOTATION_MAX_CHARS = 1024
TOMBSTONE_TOP_K = Range(1, 100, default=10)
# Two agents whose nodes' mean vectors are less similar than this see the world differently: merging their nodes
# would lose one perspective, so merge_concepts links them instead (unless force_merge).
PRIORS_MIN_COSINE = 0.7
