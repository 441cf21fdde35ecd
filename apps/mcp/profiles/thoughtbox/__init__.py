"""The Thoughtbox profile: its four tools with the seed's schemas and annotations (seeds/001, "Tools"), its
six resources, five resource templates and two prompts (resources.py).

The seed types numbers as ``number``; thought numbers are whole, so they are validated as integers and
advertised as the seed's numbers. ``notebook`` and ``mental_models`` take an operation and an ``args``
object; each operation's args have a model of their own (inputs.py), which the adapter validates them with, so a
misspelt or missing argument is named (``args.notebookId``) like any other argument.
"""
from __future__ import annotations

from mcp_types import ToolAnnotations

from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.profiles.thoughtbox import resources, tools
from apps.mcp.profiles.thoughtbox.envelope import ThoughtboxEnvelope
from apps.mcp.profiles.thoughtbox.inputs import (
    THOUGHTBOX_ALIASES, AddCellArgs, CellArgs, CreateNotebookArgs, ExportNotebookArgs, ExportReasoningChainInput,
    GetModelArgs, InstallDepsArgs, ListModelsArgs, LoadNotebookArgs, MentalModelsInput, NoArgs, NotebookArgs,
    NotebookInput, ThoughtboxInput, UpdateCellArgs,
)

NOTEBOOK_OPERATIONS = {
    "create": (CreateNotebookArgs, tools.notebook_create),
    "list": (NoArgs, tools.notebook_list),
    "load": (LoadNotebookArgs, tools.notebook_load),
    "add_cell": (AddCellArgs, tools.notebook_add_cell),
    "update_cell": (UpdateCellArgs, tools.notebook_update_cell),
    "run_cell": (CellArgs, tools.notebook_run_cell),
    "install_deps": (InstallDepsArgs, tools.notebook_install_deps),
    "list_cells": (NotebookArgs, tools.notebook_list_cells),
    "get_cell": (CellArgs, tools.notebook_get_cell),
    "export": (ExportNotebookArgs, tools.notebook_export),
}


MENTAL_MODEL_OPERATIONS = {
    "get_model": (GetModelArgs, tools.mental_model_get),
    "list_models": (ListModelsArgs, tools.mental_models_list),
    "list_tags": (NoArgs, tools.mental_model_tags),
    "get_capability_graph": (NoArgs, tools.mental_models_capability_graph),
}


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
            adapter=tools.thoughtbox,
            aliases=THOUGHTBOX_ALIASES,
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
            adapter=tools.operation_dispatcher(NOTEBOOK_OPERATIONS),
            scope=WRITE,
            annotations=hints(read_only=False, idempotent=False),
        ),
        ToolSpec(
            name="mental_models",
            description="Access to 15 structured reasoning frameworks: get_model {model}, list_models {tag?}, "
                        "list_tags, get_capability_graph.",
            input_model=MentalModelsInput,
            adapter=tools.operation_dispatcher(MENTAL_MODEL_OPERATIONS),
            scope=READ,
            annotations=hints(read_only=True, idempotent=True),
        ),
        ToolSpec(
            name="export_reasoning_chain",
            description="Export session to filesystem, in the Session Export Format with the hash chain's "
                        "integrity check. The file is written on the Engram server (and downloadable from the "
                        "dashboard); the answer carries the export too.",
            input_model=ExportReasoningChainInput,
            adapter=tools.export_reasoning_chain,
            aliases=THOUGHTBOX_ALIASES,
            scope=READ,
            annotations=hints(read_only=True, idempotent=True),
        ),
    ),
    resources=resources.RESOURCES,
    prompts=resources.PROMPTS,
)
