"""Thoughtbox's resources, resource templates and prompts through the SDK's own client: the seed's URIs, every
read, both prompts, and isolation (another user's sessions and notebooks are not found)."""
from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError

from apps.reasoning import content, mental_models
from tests.mcp.support import in_process
from tests.mcp.thoughtbox_support import THOUGHTBOX_TOOLS, result_of, seed_prompt_arguments, seed_table

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

STATIC_TEXTS = {
    "thoughtbox://patterns-cookbook": content.PATTERNS_COOKBOOK,
    "thoughtbox://architecture": content.ARCHITECTURE,
    "thoughtbox://notebook/operations": content.NOTEBOOK_OPERATIONS,
    "thoughtbox://mental-models/catalog": mental_models.catalog_markdown(),
    "thoughtbox://capabilities": content.CAPABILITIES,
}


def thoughtbox(raw_token: str):
    return in_process(raw_token, "thoughtbox")


async def read_text(client, uri: str) -> str:
    [contents] = (await client.read_resource(uri)).contents
    return contents.text


async def read_json(client, uri: str) -> dict:
    return json.loads(await read_text(client, uri))


async def a_session(client) -> dict:
    """Three thoughts: 1, 2, and a branch from 1; returns the last answer."""
    for arguments in (
        {"thought": "Define the leak", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": True,
         "sessionTitle": "Memory leak", "sessionTags": ["task:debugging"]},
        {"thought": "Heap snapshots grow by 40 MB an hour", "thoughtNumber": 2, "totalThoughts": 3,
         "nextThoughtNeeded": True},
    ):
        result_of(await client.call_tool("thoughtbox", arguments))
    return result_of(await client.call_tool("thoughtbox", {
        "thought": "What if the cache never evicts?", "thoughtNumber": 2, "totalThoughts": 3,
        "nextThoughtNeeded": True, "branchFromThought": 1, "branchId": "cache"}))


async def test_the_seeds_resources_and_templates_are_listed(alice_token):
    async with thoughtbox(alice_token) as client:
        resources = {str(resource.uri): resource for resource in (await client.list_resources()).resources}
        templates = {template.uri_template: template
                     for template in (await client.list_resource_templates()).resource_templates}
    for table, listed in ((seed_table("Static Resources"), resources), (seed_table("Resource Templates"), templates)):
        assert set(listed) == set(table)
        for uri, description in table.items():
            assert listed[uri].description.startswith(description), uri


async def test_static_resources_read_their_texts(alice_token):
    async with thoughtbox(alice_token) as client:
        for uri, text in STATIC_TEXTS.items():
            [contents] = (await client.read_resource(uri)).contents
            assert contents.text == text and contents.mime_type == "text/markdown", uri


async def test_session_resources(alice_token):
    async with thoughtbox(alice_token) as client:
        last = await a_session(client)
        session_id = last["sessionId"]
        index = await read_json(client, "thoughtbox://init/sessions")
        details = await read_json(client, f"thoughtbox://sessions/{session_id}")
        listed = await read_json(client, f"thoughtbox://sessions/{session_id}/thoughts")
        context = await read_text(client, f"thoughtbox://init/load/{session_id}")

    [entry] = index["sessions"]
    assert entry["id"] == session_id and entry["title"] == "Memory leak" and entry["thoughtCount"] == 3
    assert entry["tags"] == ["task:debugging"] and entry["loadUri"] == f"thoughtbox://init/load/{session_id}"

    assert details["session"]["title"] == "Memory leak" and details["count"] == 3
    assert [node["number"] for node in details["main"]] == [1, 2]
    [branch] = details["branches"]
    assert branch["branchId"] == "cache" and branch["fromThought"] == 1
    assert details["integrity"]["valid"] is True and details["integrity"]["checked"] == 3

    assert listed["sessionId"] == session_id and listed["count"] == 3
    assert [node["thought"]["content"] for node in listed["thoughts"]] == [
        "Define the leak", "Heap snapshots grow by 40 MB an hour", "What if the cache never evicts?"]
    assert listed["thoughts"][2]["branchOrigin"] == listed["thoughts"][0]["id"]

    assert "Memory leak" in context and "Heap snapshots grow by 40 MB an hour" in context
    assert "Branch `cache`" in context and "continue with thoughtNumber 3" in context


async def test_mental_model_and_notebook_templates(alice_token):
    async with thoughtbox(alice_token) as client:
        model = await read_text(client, "thoughtbox://mental-models/five-whys")
        created = result_of(await client.call_tool("notebook", {"operation": "create", "args": {
            "title": "Pool maths", "language": "javascript"}}))
        result_of(await client.call_tool("notebook", {"operation": "add_cell", "args": {
            "notebookId": created["notebookId"], "cellType": "markdown", "content": "# Sizing the pool"}}))
        notebook = await read_json(client, f"thoughtbox://notebooks/{created['notebookId']}")
        with pytest.raises(MCPError, match="No mental model named"):
            await client.read_resource("thoughtbox://mental-models/six-thinking-caps")
    assert model == mental_models.model_get("five-whys").as_markdown()
    assert notebook["notebook"]["title"] == "Pool maths"
    assert [cell["content"] for cell in notebook["cells"]] == ["# Sizing the pool"]


async def test_another_users_sessions_and_notebooks_are_not_found(alice_token, bob_token):
    async with thoughtbox(alice_token) as client:
        session_id = (await a_session(client))["sessionId"]
        notebook_id = result_of(await client.call_tool("notebook", {"operation": "create", "args": {
            "title": "Private", "language": "javascript"}}))["notebookId"]
    async with thoughtbox(bob_token) as client:
        index = await read_json(client, "thoughtbox://init/sessions")
        for uri in (f"thoughtbox://sessions/{session_id}", f"thoughtbox://sessions/{session_id}/thoughts",
                    f"thoughtbox://init/load/{session_id}", f"thoughtbox://notebooks/{notebook_id}",
                    "thoughtbox://sessions/not-a-session-id"):
            with pytest.raises(MCPError, match="not found"):
                await client.read_resource(uri)
    assert index == {"sessions": [], "count": 0}


@pytest.fixture
def write_only_token(user, make_token):
    return make_token(user, scopes=("write",))


async def test_reads_need_the_read_scope(write_only_token):
    async with thoughtbox(write_only_token) as client:
        with pytest.raises(MCPError, match="read scope"):
            await client.read_resource("thoughtbox://init/sessions")


async def test_prompts_are_the_seeds(alice_token):
    async with thoughtbox(alice_token) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert set(prompts) == {"list_mcp_assets", "interleaved-thinking"}
    for name, prompt in prompts.items():
        assert {argument.name: argument.required for argument in prompt.arguments} == seed_prompt_arguments(name)


async def test_list_mcp_assets_inventories_the_real_registrations(alice_token):
    async with thoughtbox(alice_token) as client:
        [message] = (await client.get_prompt("list_mcp_assets")).messages
        with pytest.raises(MCPError, match="Unknown argument 'verbose'"):
            await client.get_prompt("list_mcp_assets", {"verbose": "true"})
    text = message.content.text
    for name in (*THOUGHTBOX_TOOLS, *seed_table("Static Resources"), *seed_table("Resource Templates"),
                 "interleaved-thinking"):
        assert f"`{name}`" in text, name
    assert "## Tools (4)" in text and "## Resources (6)" in text and "## Resource templates (5)" in text
    assert "task, thoughtsLimit?, clearFolder?" in text


async def test_interleaved_thinking_embeds_the_task(alice_token):
    task = "Find why the nightly export job takes four hours"
    async with thoughtbox(alice_token) as client:
        [default] = (await client.get_prompt("interleaved-thinking", {"task": task})).messages
        [tidy] = (await client.get_prompt("interleaved-thinking", {
            "task": task, "thoughtsLimit": "12", "clearFolder": "true"})).messages
        with pytest.raises(MCPError, match="thoughtsLimit must be a whole number"):
            await client.get_prompt("interleaved-thinking", {"task": task, "thoughtsLimit": "many"})
        with pytest.raises(MCPError, match="task"):
            await client.get_prompt("interleaved-thinking", {})
    assert default.content.text == content.interleaved_thinking_prompt(task)
    assert tidy.content.text == content.interleaved_thinking_prompt(task, thoughts_limit=12, clear_folder=True)
    assert task in tidy.content.text and tidy.content.text != default.content.text
