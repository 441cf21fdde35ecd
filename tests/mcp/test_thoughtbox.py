"""The Thoughtbox profile's four tools through the SDK's own client (in process, and over real HTTP): schemas
and annotations against the seed, the seed's usage examples, the embedded cookbook, notebooks end to end,
mental models, exports, bad input and isolation."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from apps.reasoning import content, mental_models
from apps.reasoning.models import Thought
from tests.mcp.support import in_process, over_http
from tests.mcp.thoughtbox_support import (
    THOUGHTBOX_TOOLS,
    embedded_of,
    error_of,
    operation_examples,
    result_of,
    seed_annotations,
    seed_fields,
    usage_examples,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

COOKBOOK = {"uri": "thoughtbox://patterns-cookbook", "mimeType": "text/markdown", "annotations": {"audience": ["llm"]}}


def thoughtbox(raw_token: str):
    return in_process(raw_token, "thoughtbox")


def thought(number: int, total: int = 5, *, more: bool = True, **extra) -> dict:
    return {"thought": f"Step {number}: looking at the connection pool", "thoughtNumber": number,
            "totalThoughts": total, "nextThoughtNeeded": more, **extra}


def assert_cookbook(result) -> None:
    [embedded] = embedded_of(result)
    assert {key: embedded[key] for key in COOKBOOK} == COOKBOOK
    assert embedded["text"] == content.PATTERNS_COOKBOOK


async def test_tools_have_the_seeds_schemas_and_annotations(alice_token):
    async with thoughtbox(alice_token) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == list(THOUGHTBOX_TOOLS)
    for name, tool in tools.items():
        schema, seed = tool.input_schema, seed_fields(name)
        assert schema["type"] == "object" and set(schema["properties"]) == set(seed), name
        assert set(schema.get("required", [])) == {field for field, spec in seed.items() if spec["required"]}, name
        for field, spec in seed.items():
            advertised = schema["properties"][field]
            assert advertised["type"] == spec["type"], (name, field)
            assert advertised.get("enum") == spec.get("enum"), (name, field)
            assert advertised.get("minimum") == spec.get("minimum"), (name, field)
            if spec["type"] == "array":
                assert advertised["items"] == {"type": spec["items"]}
            for nested, nested_spec in spec.get("properties", {}).items():
                assert advertised["properties"][nested]["type"] == nested_spec["type"]
        hints = tool.annotations
        advertised_hints = {"readOnlyHint": hints.read_only_hint, "destructiveHint": hints.destructive_hint,
                            "idempotentHint": hints.idempotent_hint}
        # mental_models: the seed lists no annotations; it only reads a fixed catalogue.
        assert advertised_hints == (seed_annotations(name) or
                                    {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}), name
        assert tool.description


async def test_forward_thinking_branching_and_revision_as_the_seed_shows(user, alice_token):
    examples = usage_examples()
    async with thoughtbox(alice_token) as client:
        first_call = await client.call_tool("thoughtbox", examples["Forward thinking"])
        first = result_of(first_call)
        second_call = await client.call_tool("thoughtbox", thought(2))
        second = result_of(second_call)
        branch = result_of(await client.call_tool("thoughtbox", examples["Branching"]))
        revision = result_of(await client.call_tool("thoughtbox", examples["Revision"]))
        guided = await client.call_tool("thoughtbox", thought(5, includeGuide=True))
        final = await client.call_tool("thoughtbox", thought(6, total=6, more=False))

    assert first["sessionCreated"] is True and first["thoughtNumber"] == 1 and first["totalThoughts"] == 5
    assert first["sessionTitle"] == "Debugging memory leak" and first["nextThoughtNeeded"] is True
    assert first["parentHash"] == "genesis" and len(first["contentHash"]) == 64
    assert_cookbook(first_call)

    assert second["sessionCreated"] is False and second["sessionId"] == first["sessionId"]
    assert second["parentHash"] == first["contentHash"] and second["thoughtHistoryLength"] == 2
    assert embedded_of(second_call) == []

    assert branch["branchId"] == "caching-approach" and branch["branches"] == ["caching-approach"]
    assert branch["parentHash"] == second["contentHash"]  # a branch's first thought chains to its fork point
    assert revision["isRevision"] is True and revision["revisesThought"] == 2
    assert revision["thoughtHistoryLength"] == 4 and "branchId" not in revision and "isRevision" not in second

    assert_cookbook(guided)
    assert_cookbook(final)
    assert result_of(final)["nextThoughtNeeded"] is False

    stored = await database_sync_to_async(list)(Thought.objects.filter(session_id=first["sessionId"]))
    assert [item.thought_number for item in stored] == [1, 2, 3, 4, 5, 6]
    assert {item.session.owner_id for item in await database_sync_to_async(
        lambda: list(Thought.objects.select_related("session")))()} == {user.pk}


async def test_backward_planning_counts_down_to_thought_one(alice_token):
    plan = usage_examples()["Backward planning"]
    async with thoughtbox(alice_token) as client:
        calls = [await client.call_tool("thoughtbox", plan)]
        for number in (4, 3, 2, 1):
            calls.append(await client.call_tool("thoughtbox", {**plan, "thought": f"Before that, step {number}",
                                                                "thoughtNumber": number,
                                                                "nextThoughtNeeded": number > 1}))
    results = [result_of(call) for call in calls]
    assert [result["thoughtNumber"] for result in results] == [5, 4, 3, 2, 1]
    assert results[0]["sessionCreated"] is True and len({result["sessionId"] for result in results}) == 1
    # No cookbook at the plan's first step (thought 5): only thought 1, the final one here, carries it.
    assert [bool(embedded_of(call)) for call in calls] == [False, False, False, False, True]


@pytest.mark.parametrize(("arguments", "code", "field"), [
    (thought(0), "VALIDATION_ERROR", "thoughtNumber"),
    ({**thought(1), "totalThoughts": 0}, "VALIDATION_ERROR", "totalThoughts"),
    ({"thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": True}, "VALIDATION_ERROR", "thought"),
    ({**thought(1), "mood": "curious"}, "VALIDATION_ERROR", "mood"),
    ({**thought(1), "thoughtNumber": "1"}, "VALIDATION_ERROR", "thoughtNumber"),
])
async def test_bad_thoughts_are_validation_errors(alice_token, arguments, code, field):
    async with thoughtbox(alice_token) as client:
        error_of(await client.call_tool("thoughtbox", arguments), code, field)


async def test_revising_or_branching_from_a_missing_thought_is_thought_not_found(alice_token):
    async with thoughtbox(alice_token) as client:
        result_of(await client.call_tool("thoughtbox", thought(1)))
        revised = await client.call_tool("thoughtbox", thought(2, isRevision=True, revisesThought=7))
        branched = await client.call_tool("thoughtbox", thought(2, branchFromThought=9, branchId="alt"))
    assert "Thought 7" in error_of(revised, "THOUGHT_NOT_FOUND", "revisesThought")
    assert "9" in error_of(branched, "THOUGHT_NOT_FOUND", "branchFromThought")


async def test_export_reasoning_chain_writes_the_session_export(settings, alice_token, user):
    async with thoughtbox(alice_token) as client:
        first = result_of(await client.call_tool("thoughtbox", usage_examples()["Forward thinking"]))
        result_of(await client.call_tool("thoughtbox", thought(2, more=False)))
        current = result_of(await client.call_tool("export_reasoning_chain", {}))
        named = result_of(await client.call_tool("export_reasoning_chain", {
            "sessionId": first["sessionId"], "destination": "debugging"}))
        outside = await client.call_tool("export_reasoning_chain", {"destination": "../elsewhere"})
        absolute = await client.call_tool("export_reasoning_chain", {"destination": "/etc"})
        unknown = await client.call_tool("export_reasoning_chain",
                                         {"sessionId": "00000000-0000-0000-0000-000000000000"})

    assert current["success"] is True and current["sessionId"] == first["sessionId"]
    assert current["thoughtCount"] == 2 and current["integrity"]["valid"] is True
    written = Path(current["path"])
    assert written.name == current["filename"] and json.loads(written.read_text()) == current["export"]
    folder = Path(settings.ENGRAM_EXPORT_DIR) / str(user.pk) / "thoughtbox"
    assert written.parent == folder and Path(named["path"]).parent == folder / "debugging"
    export = current["export"]
    assert set(export) >= {"version", "exportedAt", "session", "thoughts"}
    assert export["session"]["title"] == "Debugging memory leak"
    assert export["session"]["tags"] == ["project:myapp", "task:debugging"]
    assert [node["thought"]["number"] for node in export["thoughts"]] == [1, 2]
    assert export["thoughts"][1]["prev"] == export["thoughts"][0]["id"]
    error_of(outside, "VALIDATION_ERROR", "destination")
    error_of(absolute, "VALIDATION_ERROR", "destination")
    error_of(unknown, "SESSION_NOT_FOUND")


async def test_another_user_cannot_export_or_continue_a_session(alice_token, bob_token):
    async with thoughtbox(alice_token) as client:
        session_id = result_of(await client.call_tool("thoughtbox", thought(1)))["sessionId"]
    async with thoughtbox(bob_token) as client:
        refused = await client.call_tool("export_reasoning_chain", {"sessionId": session_id})
        nothing = await client.call_tool("export_reasoning_chain", {})
        own = result_of(await client.call_tool("thoughtbox", thought(1)))
    error_of(refused, "SESSION_NOT_FOUND")
    error_of(nothing, "SESSION_NOT_FOUND")
    assert own["sessionCreated"] is True and own["sessionId"] != session_id


# notebook

async def notebook_call(client, operation: str, **args):
    return await client.call_tool("notebook", {"operation": operation, "args": args})


async def new_notebook(client, title: str) -> str:
    return result_of(await notebook_call(client, "create", title=title, language="javascript"))["notebookId"]


async def test_notebook_operations_end_to_end(settings, alice_token):
    examples = operation_examples("notebook")
    async with thoughtbox(alice_token) as client:
        created = result_of(await client.call_tool("notebook", examples["create"]))
        assert created["notebook"]["title"] == "My Analysis" and created["notebook"]["language"] == "typescript"
        assert created["notebook"]["template"] == "sequential-feynman" and created["cells"]

        plain = result_of(await notebook_call(client, "create", title="Pool maths", language="javascript"))
        notebook_id = plain["notebookId"]
        assert plain["cells"] == []
        listed = result_of(await client.call_tool("notebook", examples["list"]))
        assert {entry["notebookId"] for entry in listed["notebooks"]} == {created["notebookId"], notebook_id}
        assert listed["count"] == 2

        note = result_of(await notebook_call(client, "add_cell", notebookId=notebook_id, cellType="markdown",
                                             content="# How many connections do we need?"))
        code = result_of(await notebook_call(client, "add_cell", notebookId=notebook_id, cellType="code",
                                             content="console.log('hello', 6 * 7)", filename="pool.js"))
        cell_id = code["cellId"]
        assert code["cell"]["filename"] == "pool.js" and code["cell"]["outputs"]["status"] == "idle"

        ran = result_of(await notebook_call(client, "run_cell", notebookId=notebook_id, cellId=cell_id))
        assert ran["outputs"]["status"] == "completed" and ran["outputs"]["exitCode"] == 0
        assert ran["outputs"]["stdout"].strip() == "hello 42" and isinstance(ran["outputs"]["durationMs"], int)

        updated = result_of(await notebook_call(client, "update_cell", notebookId=notebook_id, cellId=cell_id,
                                                content="throw new Error('pool exhausted')"))
        assert updated["cell"]["content"] == "throw new Error('pool exhausted')"
        failed = result_of(await notebook_call(client, "run_cell", notebookId=notebook_id, cellId=cell_id))
        assert failed["outputs"]["status"] == "failed" and "pool exhausted" in failed["outputs"]["stderr"]

        got = result_of(await notebook_call(client, "get_cell", notebookId=notebook_id, cellId=cell_id))
        assert got["cell"]["outputs"]["status"] == "failed" and got["cellId"] == cell_id
        cells = result_of(await notebook_call(client, "list_cells", notebookId=notebook_id))
        assert [cell["cellId"] for cell in cells["cells"]] == [note["cellId"], cell_id] and cells["count"] == 2

        exported = result_of(await notebook_call(client, "export", notebookId=notebook_id))
        assert exported["path"] is None and "How many connections" in exported["text"]
        saved = result_of(await notebook_call(client, "export", notebookId=notebook_id, path="pool.src.md"))
        assert Path(saved["path"]).is_file() and Path(saved["path"]).read_text() == saved["text"]

        loaded = result_of(await notebook_call(client, "load", path="pool.src.md"))
        assert loaded["notebookId"] != notebook_id and loaded["notebook"]["title"] == "Pool maths"
        assert [cell["content"] for cell in loaded["cells"]] == [cell["content"] for cell in cells["cells"]]
        from_text = result_of(await notebook_call(client, "load", text=exported["text"]))
        assert [cell["cellType"] for cell in from_text["cells"]] == ["markdown", "code"]


@pytest.mark.network
async def test_install_deps_with_a_real_package(alice_token):
    async with thoughtbox(alice_token) as client:
        notebook_id = await new_notebook(client, "Deps")
        installed = result_of(await notebook_call(client, "install_deps", notebookId=notebook_id,
                                                  dependencies=["is-odd"]))
        cell_id = result_of(await notebook_call(client, "add_cell", notebookId=notebook_id, cellType="code",
                                                content="console.log(require('is-odd')(3))",
                                                filename="odd.js"))["cellId"]
        ran = result_of(await notebook_call(client, "run_cell", notebookId=notebook_id, cellId=cell_id))
        bad = await notebook_call(client, "install_deps", notebookId=notebook_id,
                                  dependencies=["git+https://example.com/x.git"])
    assert installed["notebookId"] == notebook_id and "is-odd" in json.dumps(installed)
    assert ran["outputs"]["stdout"].strip() == "true"
    error_of(bad, "VALIDATION_ERROR", "args.dependencies")


async def test_execution_switched_off_is_execution_failed_saying_so(settings, alice_token):
    settings.ENGRAM_NOTEBOOK_EXECUTION = False
    async with thoughtbox(alice_token) as client:
        notebook_id = await new_notebook(client, "Off")
        cell_id = result_of(await notebook_call(client, "add_cell", notebookId=notebook_id, cellType="code",
                                                content="console.log(1)", filename="one.js"))["cellId"]
        refused = await notebook_call(client, "run_cell", notebookId=notebook_id, cellId=cell_id)
    text = error_of(refused, "EXECUTION_FAILED (execution disabled)")
    assert "Code execution is off on this server" in text and "ENGRAM_NOTEBOOK_EXECUTION=true" in text


@pytest.mark.parametrize(("arguments", "code", "field"), [
    ({"operation": "explode", "args": {}}, "VALIDATION_ERROR", "operation"),
    ({"operation": "list_cells", "args": {}}, "VALIDATION_ERROR", "args.notebookId"),
    ({"operation": "list", "args": {"verbose": True}}, "VALIDATION_ERROR", "args.verbose"),
    ({"operation": "add_cell", "args": {"notebookId": "x", "cellType": "sql", "content": ""}}, "VALIDATION_ERROR",
     "args.cellType"),
    ({"operation": "list_cells", "args": {"notebookId": "abc123"}}, "NOTEBOOK_NOT_FOUND", None),
    ({"operation": "get_cell", "args": {"notebookId": "00000000-0000-0000-0000-000000000000", "cellId": "cell_456"}},
     "NOTEBOOK_NOT_FOUND", None),
])
async def test_bad_notebook_calls(alice_token, arguments, code, field):
    async with thoughtbox(alice_token) as client:
        error_of(await client.call_tool("notebook", arguments), code, field)


async def test_unknown_cell_and_bad_filename(alice_token):
    async with thoughtbox(alice_token) as client:
        notebook_id = await new_notebook(client, "Cells")
        unknown = await notebook_call(client, "get_cell", notebookId=notebook_id, cellId="cell_456")
        bad_name = await notebook_call(client, "add_cell", notebookId=notebook_id, cellType="code",
                                       content="1", filename="../escape.js")
    error_of(unknown, "CELL_NOT_FOUND")
    error_of(bad_name, "VALIDATION_ERROR", "args.filename")


async def test_another_users_notebook_is_not_found(alice_token, bob_token):
    async with thoughtbox(alice_token) as client:
        notebook_id = await new_notebook(client, "Mine")
        cell_id = result_of(await notebook_call(client, "add_cell", notebookId=notebook_id, cellType="code",
                                                content="console.log(1)", filename="a.js"))["cellId"]
    async with thoughtbox(bob_token) as client:
        listed = result_of(await notebook_call(client, "list"))
        calls = [await notebook_call(client, operation, notebookId=notebook_id, **extra) for operation, extra in (
            ("list_cells", {}), ("get_cell", {"cellId": cell_id}), ("run_cell", {"cellId": cell_id}),
            ("update_cell", {"cellId": cell_id, "content": "x"}), ("export", {}),
            ("add_cell", {"cellType": "markdown", "content": "x"}))]
    assert listed["notebooks"] == []
    for call in calls:
        error_of(call, "NOTEBOOK_NOT_FOUND")


# mental_models

async def test_mental_models_operations_as_the_seed_shows(alice_token):
    examples = operation_examples("mental_models")
    async with thoughtbox(alice_token) as client:
        got_call = await client.call_tool("mental_models", examples["get_model"])
        listed = result_of(await client.call_tool("mental_models", examples["list_models"]))
        everything = result_of(await client.call_tool("mental_models", {"operation": "list_models"}))
        tags = result_of(await client.call_tool("mental_models", examples["list_tags"]))
        graph = result_of(await client.call_tool("mental_models", examples["get_capability_graph"]))
    got = result_of(got_call)
    model = mental_models.model_get("first-principles")
    assert got["model"] == model.as_dict() and got["markdown"] == model.as_markdown()
    [embedded] = embedded_of(got_call)
    assert embedded["uri"] == "thoughtbox://mental-models/first-principles" and embedded["text"] == got["markdown"]
    assert {entry["name"] for entry in listed["models"]} == {m.name for m in mental_models.models_list("debugging")}
    assert listed["tag"] == "debugging" and all("debugging" in entry["tags"] for entry in listed["models"])
    assert everything["count"] == 15
    assert {tag["name"]: tag["description"] for tag in tags["tags"]} == mental_models.TAGS
    assert all(tag["modelCount"] >= 1 for tag in tags["tags"])
    assert graph == mental_models.capability_graph()


@pytest.mark.parametrize(("arguments", "code", "field"), [
    ({"operation": "get_model", "args": {"model": "six-thinking-caps"}}, "MODEL_NOT_FOUND", None),
    ({"operation": "get_model", "args": {}}, "VALIDATION_ERROR", "args.model"),
    ({"operation": "list_models", "args": {"tag": "astrology"}}, "VALIDATION_ERROR", "args.tag"),
    ({"operation": "list_models", "args": {"model": "five-whys"}}, "VALIDATION_ERROR", "args.model"),
    ({"operation": "summarise"}, "VALIDATION_ERROR", "operation"),
])
async def test_bad_mental_model_calls(alice_token, arguments, code, field):
    async with thoughtbox(alice_token) as client:
        text = error_of(await client.call_tool("mental_models", arguments), code, field)
    if code == "MODEL_NOT_FOUND":
        assert "list_models" in text and "six-thinking-hats" in text


# over HTTP

async def test_over_http_a_client_keeps_its_session_and_reads_resources(live_url, alice_token):
    async with over_http(live_url + "/mcp/thoughtbox/", alice_token) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        first = result_of(await client.call_tool("thoughtbox", thought(1, sessionTitle="Over HTTP")))
        second = result_of(await client.call_tool("thoughtbox", thought(2)))
        index = json.loads((await client.read_resource("thoughtbox://init/sessions")).contents[0].text)
    assert tools == list(THOUGHTBOX_TOOLS)
    assert second["sessionId"] == first["sessionId"] and second["sessionCreated"] is False
    assert [session["title"] for session in index["sessions"]] == ["Over HTTP"]
