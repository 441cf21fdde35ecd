"""The Mind profile: its ten tools, with input schemas as the Mind seed (seeds/004, "Mind MCP Tools")
writes them. Names are the seed's snake_case; types, enums, required fields and defaults are the
seed's, descriptions are its comments. Engram's additions are said in the tool descriptions: an
optional ``file_glob`` on detection patterns, and how the current session is kept."""
from __future__ import annotations

from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.profiles.mind import tools
from apps.mcp.profiles.mind.envelope import MindEnvelope
from apps.mcp.profiles.mind.inputs import (
    AddDecisionInput, AddEdgeInput, AddIssueInput, CheckEdgesInput, EndSessionInput, ExportInput, GetContextInput,
    StartSessionInput, UpdateIssueInput, UpdateProjectInput,
)

CURRENT_SESSION = (
    " The current session is the one mind_start_session opened for this MCP client (this token over this MCP "
    "session or stdio process; HTTP clients of the 2026-07-28 protocol, which has no MCP sessions, share their "
    "token's) and stays current until mind_end_session or the next mind_start_session."
)


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
            adapter=tools.mind_start_session,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_end_session",
            description="End the current session, capture summary and state. An episode is created when the "
                        "session was significant enough.",
            input_model=EndSessionInput,
            adapter=tools.mind_end_session,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_get_context",
            description="Search for relevant context across all entity types. Works without a session (then "
                        "across all your projects). In a session the query is also checked against the sharp "
                        "edges' intent patterns: edges that warn come back in an extra `warnings` list (the "
                        "mind_check_edges shape), each once a session.",
            input_model=GetContextInput,
            adapter=tools.mind_get_context,
            scope=READ,
        ),
        ToolSpec(
            name="mind_check_edges",
            description="Check for sharp edges that might apply to current code or intent. Code patterns with a "
                        "file_glob only apply when context.file_path matches it. In a session each edge warns "
                        "once; without one, every matching edge of all your projects warns.",
            input_model=CheckEdgesInput,
            adapter=tools.mind_check_edges,
            scope=READ,
        ),
        ToolSpec(
            name="mind_add_decision",
            description="Record a new decision with full reasoning. An active decision it replaces is marked "
                        "superseded and returned. Without project_id it needs a current session. In a session the "
                        "decision is checked against the sharp edges, and edges that warn (once a session) come "
                        "back in an extra `warnings` list.",
            input_model=AddDecisionInput,
            adapter=tools.mind_add_decision,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_add_issue",
            description="Open a new issue. Without project_id it needs a current session. In a session the issue "
                        "(and its symptoms) is checked against the sharp edges, and edges that warn (once a "
                        "session) come back in an extra `warnings` list.",
            input_model=AddIssueInput,
            adapter=tools.mind_add_issue,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_update_issue",
            description="Update an existing issue. add_attempt is appended to the issue's attempts; earlier "
                        "attempts are never lost.",
            input_model=UpdateIssueInput,
            adapter=tools.mind_update_issue,
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
            adapter=tools.mind_add_edge,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_update_project",
            description="Update current project state. The current project is the current session's, so this "
                        "needs a session.",
            input_model=UpdateProjectInput,
            adapter=tools.mind_update_project,
            scope=WRITE,
        ),
        ToolSpec(
            name="mind_export",
            description="Export all data for backup or migration. JSON by default, or Markdown; the file is written "
                        "to your export folder, downloadable from the dashboard and the REST API, and path is its "
                        "absolute path on the server.",
            input_model=ExportInput,
            adapter=tools.mind_export,
            scope=READ,
        ),
    ),
)
