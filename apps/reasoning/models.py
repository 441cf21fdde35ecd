"""Thoughtbox's reasoning records: thought sessions with their hash-chained thoughts, and notebooks of
runnable cells. (ThoughtMCP's analysis tools keep no state of their own; mental models are static data in
``mental_models.py``.)

Each thought is also a node of the memory graph (``node``: a Memory of kind "thought" in the session's
cube), so thoughts are searchable, linked and on the live graph like any other memory. ``cube`` is the
owner's personal cube; reads filter on the owner. Deletes are soft (``deleted_at``).
"""
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from apps.core.models import TimeStampedModel

GENESIS = "genesis"


class ThoughtSession(TimeStampedModel):
    """One chain of thoughts. ``client_key`` names the MCP client (token and MCP session) whose current
    session it is, so that thought 2 of a client lands in the session its thought 1 created."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="thought_sessions")
    cube = models.ForeignKey("cubes.Cube", on_delete=models.CASCADE, related_name="thought_sessions")
    title = models.CharField(max_length=300)
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    client_key = models.CharField(max_length=200, blank=True, db_index=True)
    # Set when a thought says no further thought is needed; a later thought reopens the session.
    completed_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["owner", "-updated_at"], name="thoughtsession_owner_updated")]

    def __str__(self) -> str:
        return self.title


class Thought(models.Model):
    """One step of a session, as Thoughtbox records it, with its place in the tamper-evident chain:
    ``content_hash`` = SHA-256 over (thought, number, parent hash, agent, timestamp); ``parent_hash`` is
    "genesis" for the first thought, the thought forked from for a branch's first thought, else the
    previous thought of the same branch."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(ThoughtSession, on_delete=models.CASCADE, related_name="thoughts")
    node = models.ForeignKey("memories.Memory", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    thought = models.TextField()
    thought_number = models.PositiveIntegerField()
    total_thoughts = models.PositiveIntegerField()
    next_thought_needed = models.BooleanField()
    is_revision = models.BooleanField(default=False)
    revises_thought = models.PositiveIntegerField(null=True, blank=True)
    branch_from_thought = models.PositiveIntegerField(null=True, blank=True)
    branch_id = models.CharField(max_length=100, blank=True)
    needs_more_thoughts = models.BooleanField(default=False)
    agent_id = models.CharField(max_length=200, blank=True)
    content_hash = models.CharField(max_length=64)
    parent_hash = models.CharField(max_length=64)
    # The moment that was hashed: part of the chain, so it is never auto_now.
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["session", "created_at"], name="thought_session_created"),
            models.Index(fields=["session", "branch_id", "thought_number"], name="thought_session_branch_number"),
        ]

    def __str__(self) -> str:
        branch = f" [{self.branch_id}]" if self.branch_id else ""
        return f"#{self.thought_number}{branch}: {self.thought[:60]}"


class Notebook(TimeStampedModel):
    """A literate notebook: markdown and code cells whose code runs with node in the notebook's own
    directory (``settings.ENGRAM_NOTEBOOK_DIR/<notebook id>``), with the npm packages in ``dependencies``."""

    class Language(models.TextChoices):
        JAVASCRIPT = "javascript", "JavaScript"
        TYPESCRIPT = "typescript", "TypeScript"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notebooks")
    title = models.CharField(max_length=300)
    language = models.CharField(max_length=10, choices=Language.choices, default=Language.JAVASCRIPT)
    template = models.CharField(max_length=100, blank=True)
    # npm package name -> the version npm installed.
    dependencies = models.JSONField(default=dict, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["owner", "-updated_at"], name="notebook_owner_updated")]

    def __str__(self) -> str:
        return self.title


class Cell(TimeStampedModel):
    class CellType(models.TextChoices):
        CODE = "code", "Code"
        MARKDOWN = "markdown", "Markdown"

    class Status(models.TextChoices):
        IDLE = "idle", "Not run"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="cells")
    position = models.PositiveIntegerField()
    cell_type = models.CharField(max_length=10, choices=CellType.choices)
    content = models.TextField(blank=True)
    filename = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.IDLE)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    executed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["notebook", "position"]
        constraints = [
            models.UniqueConstraint(fields=["notebook", "position"], name="cell_notebook_position_unique"),
        ]

    def __str__(self) -> str:
        return self.filename or f"{self.get_cell_type_display()} cell {self.position}"


class CellRun(TimeStampedModel):
    """One run of a code cell, done in the background by a Celery worker (reasoning.cell_run) or inline for REST and
    MCP callers. Its id is what the page watches (over /ws/runs/) and what makes a task idempotent: a worker runs a
    queued run, and a second delivery of a run that is running or finished does nothing. ``lease`` names the
    delivery that took it, so an orphan taken over (its worker died) is finished only by the one running it now.
    The cell keeps the last finished run's result too (its status, output, exit code), as before runs had ids."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cell_runs")
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="runs")
    cell = models.ForeignKey(Cell, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    lease = models.CharField(max_length=32, blank=True)
    cancel_requested = models.BooleanField(default=False)
    exit_code = models.IntegerField(null=True, blank=True)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    # The outcome in one line, for people: "completed", "exit code 1", "timed out after 30 s ...".
    message = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["cell"], condition=models.Q(status__in=["queued", "running"]),
                                    name="cellrun_one_active_per_cell"),
        ]

    def __str__(self) -> str:
        return f"{self.cell} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status not in self.ACTIVE
