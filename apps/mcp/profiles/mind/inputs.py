"""Mind's tool input models, as the Mind seed (seeds/004, "Mind MCP Tools") writes them: names, types, enums,
required fields and defaults, with its comments as descriptions."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from apps.core.limits import UNIT
from apps.mcp.schema import SnakeCaseSeedModel


EntityType = Literal["decision", "issue", "sharp_edge", "episode"]


class StartSessionInput(SnakeCaseSeedModel):
    project_id: str | None = Field(None, description="Existing project ID")
    project_name: str | None = Field(None, description="Or find/create by name")
    detect_from_path: str | None = Field(None, description="Or detect from repo path")


class EndSessionInput(SnakeCaseSeedModel):
    summary: str = Field(description="What happened")
    progress: list[str] = Field(description="What was accomplished")
    still_open: list[str] = Field(description="Unresolved threads")
    next_steps: list[str] = Field(description="For next session")
    mood: str | None = Field(None, description="Optional mood observation")


class GetContextInput(SnakeCaseSeedModel):
    query: str = Field(description="Natural language query")
    types: list[EntityType] | None = Field(None, description="Filter to specific types")
    project_id: str | None = Field(None, description="Scope to project (default: current)")
    include_global: bool | None = Field(True, description="Include global edges (default: true)")


class CheckContext(SnakeCaseSeedModel):
    runtime: str | None = Field(None, description='"edge", "serverless", "node"')
    framework: str | None = Field(None, description='"nextjs", "remix", etc.')
    file_path: str | None = Field(None, description="Current file")


class CheckEdgesInput(SnakeCaseSeedModel):
    code: str | None = Field(None, description="Code being written/suggested")
    intent: str | None = Field(None, description="What we're trying to do")
    context: CheckContext | None = Field(None, description="Additional context")


class Alternative(SnakeCaseSeedModel):
    option: str
    rejected_because: str | None = None


class AddDecisionInput(SnakeCaseSeedModel):
    title: str = Field(description="Short description")
    description: str = Field(description="Full explanation")
    context: str = Field(description="What situation led to this")
    reasoning: str = Field(description="Why this choice")
    alternatives: list[Alternative] | None = None
    confidence: float | None = Field(0.7, **UNIT.schema(), description="0.0 to 1.0 (default: 0.7)")
    revisit_if: str | None = Field(None, description="Condition to reconsider")
    trigger_phrases: list[str] | None = Field(None, description="For retrieval")
    project_id: str | None = Field(None, description="Default: current session's project")


class AddIssueInput(SnakeCaseSeedModel):
    title: str
    description: str
    severity: Literal["blocking", "major", "minor", "cosmetic"] | None = None
    symptoms: list[str] | None = Field(None, description="Error messages, behaviors")
    trigger_phrases: list[str] | None = None
    project_id: str | None = None


class Attempt(SnakeCaseSeedModel):
    what: str
    result: str
    learned: str | None = None


class UpdateIssueInput(SnakeCaseSeedModel):
    issue_id: str
    status: Literal["open", "investigating", "blocked", "resolved", "wont_fix"] | None = None
    add_attempt: Attempt | None = None
    current_theory: str | None = None
    blocked_by: str | None = None
    resolution: str | None = None


class DetectionPattern(SnakeCaseSeedModel):
    type: Literal["code", "context", "intent"]
    pattern: str
    description: str
    # Engram's addition: a code pattern may be limited to files matching a glob (context.file_path).
    file_glob: str | None = Field(None, description="Optional (Engram): only for files matching this glob, "
                                                    "e.g. \"*.ts\" or \"app/api/*\"")


class AddEdgeInput(SnakeCaseSeedModel):
    title: str
    description: str
    workaround: str
    detection_patterns: list[DetectionPattern] | None = None
    symptoms: list[str] | None = None
    root_cause: str | None = None
    project_id: str | None = Field(None, description="null for global edge")
    share_with_community: bool | None = Field(None, description="Contribute to registry")


class UpdateProjectInput(SnakeCaseSeedModel):
    current_goal: str | None = None
    blocked_by: list[str] | None = None
    open_threads: list[str] | None = None
    add_to_stack: list[str] | None = None
    status: Literal["active", "paused", "archived"] | None = None


class ExportInput(SnakeCaseSeedModel):
    format: Literal["json", "markdown"] | None = Field(None, description="json (the default) or markdown")
    project_id: str | None = Field(None, description="Specific project or all")
    include_sessions: bool | None = None
