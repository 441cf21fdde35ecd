"""Context Graph's vocabularies, limits and thresholds, defined once: the models, services, MCP input schemas,
REST serializers and forms all read them from here (docs/context_graph.md gives each with its reason)."""
from __future__ import annotations

from django.db import models


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
