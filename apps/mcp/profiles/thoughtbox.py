"""The Thoughtbox profile: its four tools with the seed's schemas and annotations (seeds/001, "Tools"), its
six resources, five resource templates and two prompts (apps/reasoning/mcp_resources.py).

The seed types numbers as ``number``; thought numbers are whole, so they are validated as integers and
advertised as the seed's numbers. ``notebook`` and ``mental_models`` take an operation and an ``args``
object; each operation's args have a model of their own here, which the adapter validates them with, so a
misspelt or missing argument is named (``args.notebookId``) like any other argument.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp_types import ToolAnnotations
from pydantic import Field, WithJsonSchema

from apps.mcp.auth import READ, WRITE
from apps.mcp.envelopes import ThoughtboxEnvelope
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import SeedModel
from apps.reasoning import mcp_resources, mcp_tools

# A whole number of at least 1, advertised as the seed's `number` (min: 1).
Ordinal = Annotated[int, Field(ge=1), WithJsonSchema({"type": "number", "minimum": 1})]
ARGS = "Operation-specific arguments"


class ThoughtboxInput(SeedModel):
    thought: str = Field(description="Current thinking step content")
    next_thought_needed: bool = Field(description="Whether another thought follows")
    thought_number: Ordinal = Field(description="Position in sequence (1-based, min: 1)")
    total_thoughts: Ordinal = Field(description="Estimated total thoughts (min: 1)")
    is_revision: bool | None = Field(None, description="Marks this as revising previous thought")
    revises_thought: Ordinal | None = Field(None, description="Which thought number is being revised (min: 1)")
    branch_from_thought: Ordinal | None = Field(None, description="Fork point for new branch (min: 1)")
    branch_id: str | None = Field(None, description="Identifier for the branch")
    needs_more_thoughts: bool | None = Field(None, description="Signal that more thoughts are needed")
    include_guide: bool | None = Field(None, description="Request patterns cookbook in response")
    session_title: str | None = Field(None, description="Title for auto-created session (thought 1 only)")
    session_tags: list[str] | None = Field(None, description="Tags for session discoverability (thought 1 only)")


NotebookOperation = Literal["create", "list", "load", "add_cell", "update_cell", "run_cell", "install_deps",
                            "list_cells", "get_cell", "export"]


class NotebookInput(SeedModel):
    operation: NotebookOperation
    args: dict[str, Any] | None = Field(None, description=ARGS)


class NoArgs(SeedModel):
    pass


class CreateNotebookArgs(SeedModel):
    title: str
    language: Literal["javascript", "typescript"] | None = None
    template: str | None = None


class LoadNotebookArgs(SeedModel):
    # One of the two: a .src.md file under the server's notebook folder, or the .src.md text itself (Engram).
    path: str | None = None
    text: str | None = None


class NotebookArgs(SeedModel):
    notebook_id: str


class AddCellArgs(NotebookArgs):
    cell_type: Literal["code", "markdown"]
    content: str
    filename: str | None = None
    position: int | None = Field(None, ge=0)


class CellArgs(NotebookArgs):
    cell_id: str


class UpdateCellArgs(CellArgs):
    content: str | None = None
    filename: str | None = None


class InstallDepsArgs(NotebookArgs):
    dependencies: list[str]


class ExportNotebookArgs(NotebookArgs):
    path: str | None = None


NOTEBOOK_OPERATIONS = {
    "create": (CreateNotebookArgs, mcp_tools.notebook_create),
    "list": (NoArgs, mcp_tools.notebook_list),
    "load": (LoadNotebookArgs, mcp_tools.notebook_load),
    "add_cell": (AddCellArgs, mcp_tools.notebook_add_cell),
    "update_cell": (UpdateCellArgs, mcp_tools.notebook_update_cell),
    "run_cell": (CellArgs, mcp_tools.notebook_run_cell),
    "install_deps": (InstallDepsArgs, mcp_tools.notebook_install_deps),
    "list_cells": (NotebookArgs, mcp_tools.notebook_list_cells),
    "get_cell": (CellArgs, mcp_tools.notebook_get_cell),
    "export": (ExportNotebookArgs, mcp_tools.notebook_export),
}


class MentalModelsArgs(SeedModel):
    model: str | None = Field(None, description="Model name (for get_model)")
    tag: str | None = Field(None, description="Tag filter (for list_models)")


class MentalModelsInput(SeedModel):
    operation: Literal["get_model", "list_models", "list_tags", "get_capability_graph"]
    args: MentalModelsArgs | None = None


class GetModelArgs(SeedModel):
    model: str


class ListModelsArgs(SeedModel):
    tag: str | None = None


MENTAL_MODEL_OPERATIONS = {
    "get_model": (GetModelArgs, mcp_tools.mental_model_get),
    "list_models": (ListModelsArgs, mcp_tools.mental_models_list),
    "list_tags": (NoArgs, mcp_tools.mental_model_tags),
    "get_capability_graph": (NoArgs, mcp_tools.mental_models_capability_graph),
}


class ExportReasoningChainInput(SeedModel):
    session_id: str | None = Field(None, description="Session to export (default: current)")
    destination: str | None = Field(
        None, description="Export directory (default: ~/.thoughtbox/exports/). Engram: a folder name under your "
                          "own export folder on the server; absolute paths and '..' are refused.")


def hints(*, read_only: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=False, idempotent_hint=idempotent)


PROFILE = Profile(
    name="thoughtbox",
    title="Thoughtbox",
    description="Thoughtbox's structured reasoning: sequential thoughts with revisions and branches in a "
                "tamper-evident chain, literate notebooks of runnable JavaScript/TypeScript, fifteen mental "
                "models, and session exports.",
    envelope=ThoughtboxEnvelope(),
    keeps_client_sessions=True,
    tools=(
        ToolSpec(
            name="thoughtbox",
            description="Primary reasoning interface for structured thinking. Thought 1 starts a session (with "
                        "sessionTitle and sessionTags) that stays this client's current session; later thoughts "
                        "join it. revisesThought and branchFromThought must name thoughts of the session. The "
                        "patterns cookbook is embedded at thought 1, at the final thought, or with includeGuide.",
            input_model=ThoughtboxInput,
            adapter=mcp_tools.thoughtbox,
            scope=WRITE,
            annotations=hints(read_only=False, idempotent=False),
        ),
        ToolSpec(
            name="notebook",
            description="Literate programming with isolated JavaScript/TypeScript execution. Operations and their "
                        "args: create {title, language?, template?}; list {}; load {path} or {text} (a .src.md); "
                        "add_cell {notebookId, cellType, content, filename?}; update_cell {notebookId, cellId, "
                        "content?, filename?}; run_cell {notebookId, cellId}; install_deps {notebookId, "
                        "dependencies}; list_cells {notebookId}; get_cell {notebookId, cellId}; export "
                        "{notebookId, path?}.",
            input_model=NotebookInput,
            adapter=mcp_tools.operation_dispatcher(NOTEBOOK_OPERATIONS),
            scope=WRITE,
            annotations=hints(read_only=False, idempotent=False),
        ),
        ToolSpec(
            name="mental_models",
            description="Access to 15 structured reasoning frameworks: get_model {model}, list_models {tag?}, "
                        "list_tags, get_capability_graph.",
            input_model=MentalModelsInput,
            adapter=mcp_tools.operation_dispatcher(MENTAL_MODEL_OPERATIONS),
            scope=READ,
            annotations=hints(read_only=True, idempotent=True),
        ),
        ToolSpec(
            name="export_reasoning_chain",
            description="Export session to filesystem, in the Session Export Format with the hash chain's "
                        "integrity check. The file is written on the Engram server (and downloadable from the "
                        "dashboard); the answer carries the export too.",
            input_model=ExportReasoningChainInput,
            adapter=mcp_tools.export_reasoning_chain,
            scope=READ,
            annotations=hints(read_only=True, idempotent=True),
        ),
    ),
    resources=mcp_resources.RESOURCES,
    prompts=mcp_resources.PROMPTS,
)
