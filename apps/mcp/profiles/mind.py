"""The Mind profile: its ten tools, with input schemas as the Mind seed (seeds/004, "Mind MCP Tools")
writes them. Names are the seed's snake_case; types, enums, required fields and defaults are the
seed's, descriptions are its comments. Engram's additions are said in the tool descriptions: an
optional ``file_glob`` on detection patterns, and how the current session is kept."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from apps.mcp.auth import READ, WRITE
from apps.mcp.envelopes import MindEnvelope
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import SnakeCaseSeedModel
from apps.projects import mcp_tools


EntityType = Literal["decision", "issue", "sharp_edge", "episode"]
CURRENT_SESSION = (
    " The current session is the one mind_start_session opened for this MCP client (this token over this MCP "
    "session or stdio process; HTTP clients of the 2026-07-28 protocol, which has no MCP sessions, share their "
    "token's) and stays current until mind_end_session or the next mind_start_session."
)


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
    confidence: float | None = Field(0.7, ge=0, le=1, description="0.0 to 1.0 (default: 0.7)")
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


PROFILE = Profile(
    name="mind",
    title="Mind",
    description="Mind's project memory for coding agents: sessions with a primer, decisions with their reasoning, "
                "issues with every attempt, sharp edges checked against code and intent, episodes.",
    envelope=MindEnvelope(),
    keeps_client_sessions=True,
    tools=(
        ToolSpec(
            name="mind_start_session",
            description="Start a new session, get project context and primer. Give project_id, or project_name "
                        "(found or created), or detect_from_path (a repository path); with none of them the most "
                        "recently worked-on project is used." + CURRENT_SESSION,
            input_model=StartSessionInput,
            adapter=mcp_tools.mind_start_session,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_end_session",
            description="End the current session, capture summary and state. An episode is created when the "
                        "session was significant enough.",
            input_model=EndSessionInput,
            adapter=mcp_tools.mind_end_session,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_get_context",
            description="Search for relevant context across all entity types. Works without a session (then "
                        "across all your projects). In a session the query is also checked against the sharp "
                        "edges' intent patterns: edges that warn come back in an extra `warnings` list (the "
                        "mind_check_edges shape), each once a session.",
            input_model=GetContextInput,
            adapter=mcp_tools.mind_get_context,
            scope=READ,
        ),
        ToolSpec(
            name="mind_check_edges",
            description="Check for sharp edges that might apply to current code or intent. Code patterns with a "
                        "file_glob only apply when context.file_path matches it. In a session each edge warns "
                        "once; without one, every matching edge of all your projects warns.",
            input_model=CheckEdgesInput,
            adapter=mcp_tools.mind_check_edges,
            scope=READ,
        ),
        ToolSpec(
            name="mind_add_decision",
            description="Record a new decision with full reasoning. An active decision it replaces is marked "
                        "superseded and returned. Without project_id it needs a current session. In a session the "
                        "decision is checked against the sharp edges, and edges that warn (once a session) come "
                        "back in an extra `warnings` list.",
            input_model=AddDecisionInput,
            adapter=mcp_tools.mind_add_decision,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_add_issue",
            description="Open a new issue. Without project_id it needs a current session. In a session the issue "
                        "(and its symptoms) is checked against the sharp edges, and edges that warn (once a "
                        "session) come back in an extra `warnings` list.",
            input_model=AddIssueInput,
            adapter=mcp_tools.mind_add_issue,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_update_issue",
            description="Update an existing issue. add_attempt is appended to the issue's attempts; earlier "
                        "attempts are never lost.",
            input_model=UpdateIssueInput,
            adapter=mcp_tools.mind_update_issue,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_add_edge",
            description="Register a new sharp edge. Without project_id it is a global edge, checked for all your "
                        "projects. Detection patterns: code = a case-insensitive regular expression run on the code "
                        "(Engram: an optional file_glob, e.g. \"*.ts\", limits it to files matching "
                        "context.file_path); context and intent = keywords (\"|\" separates alternatives, e.g. "
                        "\"edge.*crypto|crypto.*edge\" = both words, any order) found in the context (runtime, "
                        "framework, project stack and goal) or in the intent.",
            input_model=AddEdgeInput,
            adapter=mcp_tools.mind_add_edge,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_update_project",
            description="Update current project state. The current project is the current session's, so this "
                        "needs a session.",
            input_model=UpdateProjectInput,
            adapter=mcp_tools.mind_update_project,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_export",
            description="Export all data for backup or migration. JSON by default, or Markdown; the file is written "
                        "to your export folder, downloadable from the dashboard and the REST API, and path is its "
                        "absolute path on the server.",
            input_model=ExportInput,
            adapter=mcp_tools.mind_export,
            scope=READ,
        ),
    ),
)
