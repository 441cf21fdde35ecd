"""Thoughtbox's tool adapters: thoughtbox, notebook, mental_models and export_reasoning_chain. Each parses its
validated input, calls one service of apps/reasoning, and returns the data the envelope wraps: camelCase, in the
seed's shapes."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import create_model

from apps.accounts.models import User
from apps.core.aliases import Aliases
from apps.core.threads import run_sync
from apps.core.timestamps import iso_or_none, iso_timestamp
from apps.mcp.profiles.thoughtbox.envelope import ThoughtboxEnvelope, embedded_resource
from apps.mcp.profiles.thoughtbox.inputs import (
    THOUGHTBOX_ALIASES, AddCellArgs, CellArgs, CreateNotebookArgs, ExportNotebookArgs, ExportReasoningChainInput,
    GetModelArgs, InstallDepsArgs, ListModelsArgs, LoadNotebookArgs, NotebookArgs, ThoughtboxInput, UpdateCellArgs,
)
from apps.mcp.schema import SeedModel, given
from apps.mcp.server import client_key
from apps.reasoning import content, mental_models
from apps.reasoning.models import Cell, Notebook
from apps.reasoning.services import cell_runs, notebooks, thoughts

COOKBOOK_URI = "thoughtbox://patterns-cookbook"
EMBEDDED = ThoughtboxEnvelope.EMBEDDED_RESOURCES

OperationAdapter = Callable[[User, Any], Awaitable[dict[str, Any]]]


def operation_dispatcher(operations: dict[str, tuple[type[SeedModel], OperationAdapter]]):
    """The adapter of a tool that takes {operation, args}: validates ``args`` with the operation's own model and
    calls the operation's adapter with it. Errors name the argument as the caller wrote it, ``args.<name>``,
    whether the argument's model or a service found the fault."""
    calls = {
        name: (create_model(f"{model.__name__}Call", __base__=SeedModel, args=(model, ...)), adapter,
               Aliases({word: f"args.{field.alias}" for field_name, field in model.model_fields.items()
                        for word in (field_name, field.alias)}))
        for name, (model, adapter) in operations.items()
    }

    async def dispatch(actor: User, params: Any) -> dict[str, Any]:
        call_model, adapter, aliases = calls[params.operation]
        args = params.args.model_dump(by_alias=True, exclude_none=True) if isinstance(params.args, SeedModel) \
            else params.args or {}
        with aliases.reported():
            return await adapter(actor, call_model.model_validate({"args": args}).args)

    return dispatch


def cookbook() -> dict[str, Any]:
    return embedded_resource(uri=COOKBOOK_URI, text=content.PATTERNS_COOKBOOK)


# thoughtbox

async def thoughtbox(actor: User, params: ThoughtboxInput) -> dict[str, Any]:
    key = client_key()
    added = await run_sync(thoughts.thought_add)(
        actor=actor, client_key=key, thought=params.thought, thought_number=params.thought_number,
        total_thoughts=params.total_thoughts, next_thought_needed=params.next_thought_needed,
        revises_thought=params.revises_thought, branch_from_thought=params.branch_from_thought,
        branch_id=params.branch_id, session_title=params.session_title, session_tags=params.session_tags,
        **given(is_revision=params.is_revision, needs_more_thoughts=params.needs_more_thoughts),
    )
    thought = added.thought
    result: dict[str, Any] = {
        "thoughtNumber": thought.thought_number, "totalThoughts": thought.total_thoughts,
        "nextThoughtNeeded": thought.next_thought_needed, "branches": added.branches,
        "thoughtHistoryLength": added.history_length, "sessionId": str(added.session.pk),
        "sessionTitle": added.session.title, "thoughtId": str(thought.pk), "contentHash": thought.content_hash,
        "parentHash": thought.parent_hash, "sessionCreated": added.session_created,
    }
    if thought.is_revision:
        result |= {"isRevision": True, "revisesThought": thought.revises_thought}
    if thought.branch_id:
        result |= {"branchId": thought.branch_id, "branchFromThought": thought.branch_from_thought}
    if thought.needs_more_thoughts:
        result["needsMoreThoughts"] = True
    if added.notices:
        result["notices"] = [THOUGHTBOX_ALIASES.caller_message(notice) for notice in added.notices]
    # The seed embeds the cookbook where a guide helps: at the start, at the end, and when asked for.
    if thought.thought_number == 1 or added.is_final or params.include_guide:
        result[EMBEDDED] = [cookbook()]
    return result


async def export_reasoning_chain(actor: User, params: ExportReasoningChainInput) -> dict[str, Any]:
    key = client_key()
    written = await run_sync(thoughts.session_export_write)(
        actor=actor, session_id=params.session_id, client_key=key, destination=params.destination)
    export = written.export
    return {
        "success": True, "path": str(written.path), "filename": written.filename,
        "sessionId": export["session"]["id"], "thoughtCount": len(export["thoughts"]),
        "integrity": export["integrity"], "export": export,
    }


# notebook

def notebook_dict(notebook: Notebook) -> dict[str, Any]:
    return {
        "notebookId": str(notebook.pk), "title": notebook.title, "language": notebook.language,
        "template": notebook.template or None, "dependencies": notebook.dependencies,
        "createdAt": iso_timestamp(notebook.created_at), "updatedAt": iso_timestamp(notebook.updated_at),
    }


def cell_outputs(cell: Cell) -> dict[str, Any]:
    return {"status": cell.status, "stdout": cell.stdout, "stderr": cell.stderr, "exitCode": cell.exit_code,
            "durationMs": cell.duration_ms, "executedAt": iso_or_none(cell.executed_at)}


def cell_dict(cell: Cell) -> dict[str, Any]:
    return {
        "cellId": str(cell.pk), "notebookId": str(cell.notebook_id), "cellType": cell.cell_type,
        "position": cell.position, "content": cell.content, "filename": cell.filename or None,
        "outputs": cell_outputs(cell),
    }


def notebook_with_cells(*, actor: User, notebook_id) -> dict[str, Any]:
    """A notebook and its cells, as the notebook tool and the thoughtbox://notebooks/{notebookId} resource show it."""
    notebook = notebooks.notebook_get(actor=actor, notebook_id=notebook_id)
    cells = notebooks.cells_of(notebook)
    return {"notebookId": str(notebook.pk), "notebook": notebook_dict(notebook),
            "cells": [cell_dict(cell) for cell in cells]}


async def notebook_create(actor: User, args: CreateNotebookArgs) -> dict[str, Any]:
    def create():
        notebook = notebooks.notebook_create(actor=actor, title=args.title, template=args.template,
                                             **given(language=args.language))
        return notebook_with_cells(actor=actor, notebook_id=notebook.pk)

    return await run_sync(create)()


async def notebook_list(actor: User, args: SeedModel) -> dict[str, Any]:
    def listed():
        return [{**notebook_dict(notebook), "cellCount": notebook.cell_count}
                for notebook in notebooks.notebook_list(actor=actor)]

    found = await run_sync(listed)()
    return {"notebooks": found, "count": len(found)}


async def notebook_load(actor: User, args: LoadNotebookArgs) -> dict[str, Any]:
    def load():
        notebook = notebooks.notebook_load(actor=actor, path=args.path, text=args.text)
        return notebook_with_cells(actor=actor, notebook_id=notebook.pk)

    return await run_sync(load)()


def _cell_result(cell: Cell) -> dict[str, Any]:
    return {"notebookId": str(cell.notebook_id), "cellId": str(cell.pk), "cell": cell_dict(cell)}


async def notebook_add_cell(actor: User, args: AddCellArgs) -> dict[str, Any]:
    cell = await run_sync(notebooks.cell_add)(
        actor=actor, notebook_id=args.notebook_id, cell_type=args.cell_type, content=args.content,
        filename=args.filename, position=args.position)
    return _cell_result(cell)


async def notebook_update_cell(actor: User, args: UpdateCellArgs) -> dict[str, Any]:
    cell = await run_sync(notebooks.cell_update)(
        actor=actor, notebook_id=args.notebook_id, cell_id=args.cell_id, content=args.content, filename=args.filename)
    return _cell_result(cell)


async def notebook_run_cell(actor: User, args: CellArgs) -> dict[str, Any]:
    cell = await run_sync(cell_runs.cell_run)(
        actor=actor, notebook_id=args.notebook_id, cell_id=args.cell_id)
    return {**_cell_result(cell), "outputs": cell_outputs(cell)}


async def notebook_install_deps(actor: User, args: InstallDepsArgs) -> dict[str, Any]:
    installed = await run_sync(notebooks.notebook_install_deps)(
        actor=actor, notebook_id=args.notebook_id, dependencies=args.dependencies)
    return {"notebookId": str(installed.notebook.pk), "installed": installed.installed,
            "dependencies": installed.notebook.dependencies, "output": installed.output}


async def notebook_list_cells(actor: User, args: NotebookArgs) -> dict[str, Any]:
    found = await run_sync(notebook_with_cells)(actor=actor, notebook_id=args.notebook_id)
    return {"notebookId": found["notebookId"], "cells": found["cells"], "count": len(found["cells"])}


async def notebook_get_cell(actor: User, args: CellArgs) -> dict[str, Any]:
    cell = await run_sync(notebooks.cell_get)(
        actor=actor, notebook_id=args.notebook_id, cell_id=args.cell_id)
    return _cell_result(cell)


async def notebook_export(actor: User, args: ExportNotebookArgs) -> dict[str, Any]:
    exported = await run_sync(notebooks.notebook_export)(
        actor=actor, notebook_id=args.notebook_id, path=args.path)
    return {"notebookId": args.notebook_id, "format": "src.md", "text": exported.text,
            "path": str(exported.path) if exported.path else None}


# mental_models

async def mental_model_get(actor: User, args: GetModelArgs) -> dict[str, Any]:
    model = mental_models.model_get(args.model)
    markdown = model.as_markdown()
    return {"model": model.as_dict(), "markdown": markdown,
            EMBEDDED: [embedded_resource(uri=f"thoughtbox://mental-models/{model.name}", text=markdown)]}


def model_entry(model: mental_models.MentalModel) -> dict[str, Any]:
    return {"name": model.name, "title": model.title, "summary": model.summary, "tags": list(model.tags),
            "uri": f"thoughtbox://mental-models/{model.name}"}


async def mental_models_list(actor: User, args: ListModelsArgs) -> dict[str, Any]:
    found = [model_entry(model) for model in mental_models.models_list(tag=args.tag)]
    return {"models": found, "count": len(found), "tag": args.tag}


async def mental_model_tags(actor: User, args: SeedModel) -> dict[str, Any]:
    return {"tags": mental_models.tags_list()}


async def mental_models_capability_graph(actor: User, args: SeedModel) -> dict[str, Any]:
    return mental_models.capability_graph()
