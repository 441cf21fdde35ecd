"""Thoughtbox's resources, resource templates and prompts (seeds/001, "Resources" and "Prompts"), as the
profile lists them. Each read gets the acting user (the caller, resolved by the MCP edge) and
calls the reasoning services; sessions and notebooks are the caller's own, so another user's id is not found.

Template readers take the URI's variables under the seed's names (``sessionId``, ``modelName``,
``notebookId``): the SDK matches them against the URI template.
"""
from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.core.threads import run_sync
from apps.core.timestamps import iso_or_none, iso_timestamp
from apps.mcp.profile import PromptArgumentSpec, PromptSpec, ResourceSpec
from apps.mcp.profiles.thoughtbox.inputs import THOUGHTBOX_ALIASES
from apps.mcp.profiles.thoughtbox.tools import notebook_with_cells
from apps.reasoning import content, mental_models, selectors
from apps.reasoning.services import thoughts

JSON = "application/json"
DEFAULT_THOUGHTS_LIMIT = 100
TRUE_WORDS, FALSE_WORDS = {"true", "1", "yes"}, {"false", "0", "no", ""}


def as_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def session_uri(session_id, suffix: str = "") -> str:
    return f"thoughtbox://sessions/{session_id}{suffix}"


# Static resources

async def patterns_cookbook(actor: User) -> str:
    return content.PATTERNS_COOKBOOK


async def architecture(actor: User) -> str:
    return content.ARCHITECTURE


async def notebook_operations(actor: User) -> str:
    return content.NOTEBOOK_OPERATIONS


async def mental_models_catalog(actor: User) -> str:
    return mental_models.catalog_markdown()


async def capabilities(actor: User) -> str:
    return content.CAPABILITIES


def _session_index(actor: User) -> dict[str, Any]:
    sessions = [{
        "id": str(session.pk), "title": session.title, "tags": list(session.tags),
        "thoughtCount": session.thought_count, "createdAt": iso_timestamp(session.created_at),
        "updatedAt": iso_timestamp(session.updated_at), "completedAt": iso_or_none(session.completed_at),
        "uri": session_uri(session.pk), "loadUri": f"thoughtbox://init/load/{session.pk}",
    } for session in selectors.session_list(actor=actor)]
    return {"sessions": sessions, "count": len(sessions)}


async def session_index(actor: User) -> str:
    return as_json(await run_sync(_session_index)(actor))


# Resource templates

def _session_details(actor: User, session_id: str) -> dict[str, Any]:
    session = selectors.session_get(actor=actor, session_id=session_id)
    chain = selectors.thoughts_of(session)
    integrity = thoughts.verify_thoughts(chain).as_dict()
    return {**selectors.tree_of(session, chain), "integrity": integrity,
            "thoughtsUri": session_uri(session_id, "/thoughts")}


async def session_details(actor: User, sessionId: str) -> str:
    with THOUGHTBOX_ALIASES.reported():
        return as_json(await run_sync(_session_details)(actor, sessionId))


def _session_thoughts(actor: User, session_id: str) -> dict[str, Any]:
    export = thoughts.session_export(actor=actor, session_id=session_id)
    return {"sessionId": export["session"]["id"], "thoughts": export["thoughts"], "count": len(export["thoughts"])}


async def session_thoughts(actor: User, sessionId: str) -> str:
    with THOUGHTBOX_ALIASES.reported():
        return as_json(await run_sync(_session_thoughts)(actor, sessionId))


async def mental_model(actor: User, modelName: str) -> str:
    return mental_models.model_get(modelName).as_markdown()


async def notebook(actor: User, notebookId: str) -> str:
    return as_json(await run_sync(notebook_with_cells)(actor=actor, notebook_id=notebookId))


def _thought_line(node: dict[str, Any]) -> str:
    marks = [f"branch {node['branchId']} from #{node['branchFromThought']}"] if node["branchId"] else []
    if node["isRevision"]:
        marks.append(f"revises #{node['revisesThought']}")
    label = f"#{node['number']}/{node['totalThoughts']}" + (f" ({'; '.join(marks)})" if marks else "")
    return f"- **{label}**: {node['content']}"


def _session_context(actor: User, session_id: str) -> str:
    """The session as context to resume from: what it is about, every thought by line, and where it stands."""
    tree = selectors.session_tree(actor=actor, session_id=session_id)
    session = tree["session"]
    lines = [f"# Thoughtbox session: {session['title']}", "",
             f"- Session id: `{session['id']}`",
             f"- Tags: {', '.join(session['tags']) or 'none'}",
             f"- Thoughts: {tree['count']} (last updated {session['updatedAt']})", "", "## Main line", ""]
    lines += [_thought_line(node) for node in tree["main"]] or ["(no thoughts yet)"]
    for branch in tree["branches"]:
        lines += ["", f"## Branch `{branch['branchId']}` (from thought {branch['fromThought']})", ""]
        lines += [_thought_line(node) for node in branch["thoughts"]]
    nodes = tree["main"] + [node for branch in tree["branches"] for node in branch["thoughts"]]
    last = max(nodes, key=lambda node: node["timestamp"], default=None)
    lines += ["", "## Where it stands", ""]
    if last is None:
        lines.append("Nothing has been thought yet: start with thoughtNumber 1.")
    elif session["completedAt"] or not last["nextThoughtNeeded"]:
        lines.append(f"The chain was concluded at thought {last['number']}. To continue, record a new thought; a "
                     "new session starts unless you are still in this one.")
    else:
        lines.append(f"The latest thought is #{last['number']} of an estimated {last['totalThoughts']}: continue "
                     f"with thoughtNumber {last['number'] + 1}, or revise (isRevision, revisesThought) or branch "
                     "(branchFromThought, branchId) from an earlier thought.")
    return "\n".join(lines) + "\n"


async def session_context(actor: User, sessionId: str) -> str:
    return await run_sync(_session_context)(actor, sessionId)


RESOURCES = (
    ResourceSpec(uri="thoughtbox://patterns-cookbook", name="patterns-cookbook",
                 description="6 core reasoning patterns with examples", read=patterns_cookbook),
    ResourceSpec(uri="thoughtbox://architecture", name="architecture",
                 description="System architecture documentation", read=architecture),
    ResourceSpec(uri="thoughtbox://notebook/operations", name="notebook-operations",
                 description="Notebook operation catalog", read=notebook_operations),
    ResourceSpec(uri="thoughtbox://mental-models/catalog", name="mental-models-catalog",
                 description="Mental models catalog", read=mental_models_catalog),
    ResourceSpec(uri="thoughtbox://init/sessions", name="session-index",
                 description="Session index for context loading (your sessions, most recent first)",
                 read=session_index, mime_type=JSON),
    ResourceSpec(uri="thoughtbox://capabilities", name="capabilities",
                 description="Server capabilities overview", read=capabilities),
    ResourceSpec(uri="thoughtbox://sessions/{sessionId}", name="session",
                 description="Load specific session details (the chain as a tree, with its integrity check)",
                 read=session_details, mime_type=JSON),
    ResourceSpec(uri="thoughtbox://sessions/{sessionId}/thoughts", name="session-thoughts",
                 description="Get all thoughts from session (ThoughtNodes of the Session Export Format)",
                 read=session_thoughts, mime_type=JSON),
    ResourceSpec(uri="thoughtbox://mental-models/{modelName}", name="mental-model",
                 description="Get specific mental model", read=mental_model),
    ResourceSpec(uri="thoughtbox://notebooks/{notebookId}", name="notebook",
                 description="Get notebook details (with its cells and their outputs)", read=notebook, mime_type=JSON),
    ResourceSpec(uri="thoughtbox://init/load/{sessionId}", name="session-context",
                 description="Load session context (the session as markdown to resume from)", read=session_context),
)


# Prompts

def _inventory_section(title: str, entries: list[tuple[str, str]]) -> list[str]:
    return [f"## {title} ({len(entries)})", "", *(f"- `{name}`: {text}" for name, text in entries), ""]


async def list_mcp_assets(actor: User, ctx: Context, arguments: dict[str, str]) -> str:
    """The inventory of what this server really registers (not a copy of the seed's lists)."""
    server = ctx.mcp_server
    tools = await server.list_tools()
    resources = await server.list_resources()
    templates = await server.list_resource_templates()
    prompts = await server.list_prompts()

    def prompt_line(prompt) -> str:
        arguments_text = ", ".join(f"{argument.name}{'' if argument.required else '?'}"
                                   for argument in prompt.arguments or []) or "no arguments"
        return f"{prompt.description} ({arguments_text})"

    lines = [f"# MCP assets of {server.name}", ""]
    lines += _inventory_section("Tools", [(tool.name, (tool.description or "").split(". ")[0]) for tool in tools])
    lines += _inventory_section("Resources", [(str(resource.uri), resource.description or "")
                                              for resource in resources])
    lines += _inventory_section("Resource templates", [(template.uri_template, template.description or "")
                                                       for template in templates])
    lines += _inventory_section("Prompts", [(prompt.name, prompt_line(prompt)) for prompt in prompts])
    return "\n".join(lines)


def _thoughts_limit(value: str | None) -> int:
    if value is None or not value.strip():
        return DEFAULT_THOUGHTS_LIMIT
    try:
        return int(value)
    except ValueError:
        raise InvalidInput(f"thoughtsLimit must be a whole number, not {value!r}.", field="thoughtsLimit") from None


def _flag(value: str | None, *, name: str) -> bool:
    word = (value or "").strip().lower()
    if word not in TRUE_WORDS | FALSE_WORDS:
        raise InvalidInput(f"{name} must be true or false, not {value!r}.", field=name)
    return word in TRUE_WORDS


async def interleaved_thinking(actor: User, ctx: Context, arguments: dict[str, str]) -> str:
    with THOUGHTBOX_ALIASES.reported():
        return content.interleaved_thinking_prompt(
            arguments.get("task", ""), thoughts_limit=_thoughts_limit(arguments.get("thoughtsLimit")),
            clear_folder=_flag(arguments.get("clearFolder"), name="clearFolder"))


PROMPTS = (
    PromptSpec(name="list_mcp_assets", description="Inventory all available MCP capabilities.",
               render=list_mcp_assets),
    PromptSpec(
        name="interleaved-thinking", description="Structured reasoning workflow for complex tasks.",
        render=interleaved_thinking,
        arguments=(
            PromptArgumentSpec(name="task", description="The task to accomplish", required=True),
            PromptArgumentSpec(name="thoughtsLimit", description="Max thoughts (default: 100)"),
            PromptArgumentSpec(name="clearFolder", description="Clean up artifacts (default: false)"),
        ),
    ),
)
