"""Thoughtbox's tool input models, with the seed's schemas (seeds/001, "Tools"). ``notebook`` and ``mental_models``
take an operation and an ``args`` object; each operation's args have a model of their own, which the adapter
validates them with."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from apps.core.aliases import Aliases
from apps.mcp.schema import SeedModel

# A whole number of at least 1, advertised as the seed's `number` (min: 1).
Ordinal = Annotated[int, Field(ge=1), WithJsonSchema({"type": "number", "minimum": 1})]


ARGS = "Operation-specific arguments"

# The thought and prompt services' argument names -> Thoughtbox's (the notebook and mental_models operations
# name theirs from each operation's args model).
THOUGHTBOX_ALIASES = Aliases({
    "thought_number": "thoughtNumber", "total_thoughts": "totalThoughts", "next_thought_needed": "nextThoughtNeeded",
    "is_revision": "isRevision", "revises_thought": "revisesThought", "branch_from_thought": "branchFromThought",
    "branch_id": "branchId", "needs_more_thoughts": "needsMoreThoughts", "session_title": "sessionTitle",
    "session_tags": "sessionTags", "session_id": "sessionId", "thoughts_limit": "thoughtsLimit",
    "clear_folder": "clearFolder",
})


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


class ExportReasoningChainInput(SeedModel):
    session_id: str | None = Field(None, description="Session to export (default: current)")
    destination: str | None = Field(
        None, description="Export directory (default: ~/.thoughtbox/exports/). Engram: a folder name under your "
                          "own export folder on the server; absolute paths and '..' are refused.")
