"""Mind's project context: projects, their sessions, and the four kinds of knowledge an agent keeps
about them (decisions, issues, sharp edges, episodes).

Each of the four is also a node of the memory graph: ``node`` is a Memory of the matching kind in the
entity's cube, whose content the services rewrite whenever the entity changes, so search, the live
graph and linking see it like any other memory. ``cube`` is the entity's own copy of its project's
cube (a global sharp edge's is its owner's personal cube): every read filters on it with the
readable-cubes subquery, as memory reads do. Deletes are soft (``deleted_at``) everywhere.
"""
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Lower

from apps.core.models import TimeStampedModel

UNIT = [MinValueValidator(0.0), MaxValueValidator(1.0)]


def text_list():
    return ArrayField(models.TextField(), default=list, blank=True)


class SoftDeletable(models.Model):
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None


class Project(SoftDeletable, TimeStampedModel):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"
        ARCHIVED = "archived", "Archived"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects")
    cube = models.ForeignKey("cubes.Cube", on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=200)
    stack = text_list()
    repo_path = models.CharField(max_length=1000, blank=True)
    current_goal = models.TextField(blank=True)
    blocked_by = text_list()
    open_threads = text_list()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    last_session_at = models.DateTimeField(null=True, blank=True)
    last_session_summary = models.TextField(blank=True)
    last_session_next_steps = text_list()

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(Lower("name"), "owner", condition=models.Q(deleted_at__isnull=True),
                                    name="project_name_unique_per_owner"),
        ]
        indexes = [models.Index(fields=["cube", "-updated_at"], name="project_cube_updated")]

    def __str__(self) -> str:
        return self.name


class Session(TimeStampedModel):
    """One working session of an agent on a project. ``client_key`` names the MCP client that started
    it (token and MCP session), so each client has its own current session."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sessions")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mind_sessions")
    client_key = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    summary = models.TextField(blank=True)
    progress = text_list()
    still_open = text_list()
    next_steps = text_list()
    mood = models.CharField(max_length=500, blank=True)
    # Sharp edges this session has already been warned about: each warns once a session.
    warned_edges = ArrayField(models.UUIDField(), default=list, blank=True)
    issue_updates = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["project", "-started_at"], name="session_project_started"),
            models.Index(fields=["owner", "client_key"], condition=models.Q(ended_at__isnull=True),
                         name="session_open_by_client"),
        ]

    def __str__(self) -> str:
        return f"{self.project} @ {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def is_active(self) -> bool:
        return self.ended_at is None


class ProjectEntity(SoftDeletable, TimeStampedModel):
    """What decisions, issues, sharp edges and episodes share: ownership, their cube, their node in the
    memory graph, the session that made them, and the access counts that context ranking reads."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    cube = models.ForeignKey("cubes.Cube", on_delete=models.CASCADE, related_name="+")
    node = models.OneToOneField("memories.Memory", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class Decision(ProjectEntity):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUPERSEDED = "superseded", "Superseded"
        REVOKED = "revoked", "Revoked"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="decisions")
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    context = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    # [{"option": str, "rejected_because": str}]
    alternatives = models.JSONField(default=list, blank=True)
    confidence = models.FloatField(default=0.7, validators=UNIT)
    revisit_if = models.TextField(blank=True)
    trigger_phrases = text_list()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "status"], name="decision_project_status")]

    def __str__(self) -> str:
        return self.title


class Issue(ProjectEntity):
    class Severity(models.TextChoices):
        BLOCKING = "blocking", "Blocking"
        MAJOR = "major", "Major"
        MINOR = "minor", "Minor"
        COSMETIC = "cosmetic", "Cosmetic"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        INVESTIGATING = "investigating", "Investigating"
        BLOCKED = "blocked", "Blocked"
        RESOLVED = "resolved", "Resolved"
        WONT_FIX = "wont_fix", "Won't fix"

    CLOSED = (Status.RESOLVED, Status.WONT_FIX)

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="issues")
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    severity = models.CharField(max_length=10, choices=Severity.choices, default=Severity.MAJOR)
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.OPEN)
    symptoms = text_list()
    # [{"what", "result", "learned", "at"}], oldest first; only ever appended to.
    attempts = models.JSONField(default=list, blank=True)
    current_theory = models.TextField(blank=True)
    blocked_by = models.TextField(blank=True)
    resolution = models.TextField(blank=True)
    trigger_phrases = text_list()
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "status"], name="issue_project_status")]

    def __str__(self) -> str:
        return self.title


class SharpEdge(ProjectEntity):
    """A gotcha: of one project, or global (no project) and then checked for every project of its owner."""

    class PatternType(models.TextChoices):
        CODE = "code", "Code"
        CONTEXT = "context", "Context"
        INTENT = "intent", "Intent"

    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="sharp_edges")
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    workaround = models.TextField(blank=True)
    # [{"type": code|context|intent, "pattern": str, "description": str, "file_glob"?: str}]
    detection_patterns = models.JSONField(default=list, blank=True)
    symptoms = text_list()
    root_cause = models.TextField(blank=True)
    share_with_community = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["cube", "project"], name="sharp_edge_cube_project")]

    def __str__(self) -> str:
        return self.title

    @property
    def is_global(self) -> bool:
        return self.project_id is None


class Episode(ProjectEntity):
    """The story of a significant session, written when it ends (see services for the rules)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="episodes")
    title = models.CharField(max_length=300)
    narrative = models.TextField(blank=True)
    mood_arc = text_list()
    lessons = text_list()
    breakthroughs = text_list()
    frustrations = text_list()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title
