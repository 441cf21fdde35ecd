"""Every tool of every MCP profile under a fuzzer, through the SDK's own client in process.

Inputs come from each tool's own inputSchema as tools/list serves it: hypothesis draws valid arguments
(see ``strategy``), and a typical full argument set (every property, read off the schema) is mutated into invalid ones:
missing required fields, wrong JSON types, out-of-range numbers, 100k-character strings, NUL and control
characters, deep nesting, unknown fields and another user's ids. Each call must end, within CALL_SECONDS, in a
tool result or in a tool error of the profile's envelope that says what to fix (and, when only the mutated field
is wrong, names it); never in a protocol or transport error, an internal error or a traceback. Bob's data must be
exactly as it was after alice's run. Drawing is derandomized and bounded, so a run is the same on every machine.
Over real HTTP, the mutations a transport sees differently (escapes, size, depth) and bodies no SDK client would
send (100k-deep nesting, a NaN literal, a lone surrogate escape, broken JSON, 5 MB) never get a 5xx.
"""
from __future__ import annotations

import json
import math
import os
import re
import uuid
from copy import deepcopy
from datetime import timezone
from typing import Any

import anyio
import httpx2
import pytest
from channels.db import database_sync_to_async
from django.apps import apps as django_apps
from django.conf import settings
from django.db.models import ForeignKey, Q
from hypothesis import HealthCheck, Phase, given, settings as hypothesis_settings
from hypothesis import strategies as st

from apps.mcp.profiles import PROFILES
from apps.mcp.profiles.thoughtbox import MENTAL_MODEL_OPERATIONS, NOTEBOOK_OPERATIONS
from apps.mcp.schema import advertised_schema
from tests.mcp.support import in_process, over_http

pytestmark = pytest.mark.django_db(transaction=True)

# A hang guard, not a speed requirement: a call that has not answered by then never will.
CALL_SECONDS = 10
# Argument sets drawn per tool (ENGRAM_FUZZ_EXAMPLES=50 for a longer hunt; CI keeps the default).
VALID_EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", 5))
# An error is read by a person or a model: it may quote the input, not repeat 100k characters of it.
MAX_ERROR_CHARS = 2000
# How many bad answers a failure lists (ENGRAM_FUZZ_SHOWN=2000 to see them all while fixing).
MAX_SHOWN = int(os.environ.get("ENGRAM_FUZZ_SHOWN", 40))
# Tools that take {operation, args} with an open args object: each operation's args model, so that every
# operation gets a typical base of its own (the open object alone would only ever reach the dispatcher).
OPERATIONS = {("thoughtbox", "notebook"): NOTEBOOK_OPERATIONS, ("thoughtbox", "mental_models"): MENTAL_MODEL_OPERATIONS}
# Tools whose served schema cannot say which optional fields go together: the seed's top-level oneOf is left out
# (clients refuse combinators) and the service enforces it. Each alternative's fields make a typical base of their
# own, beside the tool's required ones.
ALTERNATIVES = {("context-graph", "store_memory"): (("content",), ("content_base64", "modality"), ("data_uri",))}
TEXT = "Fuzzing Engram: the user prefers dark mode in every editor"
# Deeper than any schema, as deep as the SDK client serialises (pydantic-core stops at 254 levels).
DEPTH = 200
LONG_STRINGS = ("x" * 100_000, ("dark mode " * 10_000)[:100_000])
CONTROL_STRINGS = ("dark\x00mode", "\x01\x07\x08\x1b[31m\t\r\n\x7f\x85\u2028\u202e\ufeff\ud800 mode")
HUGE_NUMBERS = (2**63, -(2**63) - 1, 10**30, 1e308, -1, math.nan, math.inf, 0.5)
WRONG_TYPES = {str: 12345, int: "12", float: "0.5", bool: "true", list: {"0": TEXT}, dict: [TEXT]}
INTERNAL = re.compile(r"internal server error|internal error|internal_error|traceback|File \"/", re.I)


@pytest.fixture(autouse=True)
def no_language_model(settings):
    """The reasoning tools and chat answer without a language model endpoint, even on a machine that has one: the
    fuzzer is about Engram's answers, and a model's latency would turn the hang guard into a speed test."""
    settings.ENGRAM_LLM_BASE_URL = ""


# The JSON Schema keywords of the tools' inputSchemas. hypothesis-jsonschema 0.23.1 (its latest) cannot draw an
# object with hypothesis 6.170 (its `many(...).more()` is gone), so valid arguments are drawn here, with the same
# hypothesis strategies, for exactly these keywords: a schema using another one fails the run rather than being
# half-understood.
KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "enum", "minimum", "maximum",
            "minLength", "maxLength", "pattern", "format", "description", "default", "minItems", "maxItems"}


def strategy(schema: dict) -> st.SearchStrategy:
    unknown = set(schema) - KEYWORDS
    assert not unknown, f"the fuzzer does not know the schema keywords {unknown}"
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        if "properties" not in schema:  # an open object (MemGOS's metadata, Thoughtbox's args): any JSON object
            return st.dictionaries(st.text(max_size=10), JSON, max_size=4)
        properties = {name: strategy(sub) for name, sub in schema["properties"].items()}
        required = set(schema.get("required", []))
        return st.fixed_dictionaries({name: value for name, value in properties.items() if name in required},
                                     optional={name: value for name, value in properties.items()
                                               if name not in required})
    if kind == "array":
        low = schema.get("minItems", 0)
        return st.lists(strategy(schema.get("items", {})), min_size=low, max_size=min(schema.get("maxItems", 4),
                                                                                    max(low, 4)))
    if kind in ("number", "integer"):
        low, high = schema.get("minimum"), schema.get("maximum")
        fractions = st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)
        # The whole numbers of a fractional range (temporary_scratchpad's 0.3-0.9 has none).
        whole_low, whole_high = (None if low is None else math.ceil(low)), (None if high is None else math.floor(high))
        if kind == "number" and None not in (whole_low, whole_high) and whole_low > whole_high:
            return fractions
        whole = st.integers(min_value=whole_low, max_value=whole_high)
        return whole if kind == "integer" else whole | fractions
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if schema.get("format") == "date-time":
            return st.datetimes(timezones=st.just(timezone.utc)).map(lambda moment: moment.isoformat())
        if schema.get("format") == "uuid":
            return st.uuids().map(str)
        if "pattern" in schema:
            text = st.from_regex(schema["pattern"], fullmatch=True)
        else:
            text = st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 40), 40))
        return text.filter(lambda value: schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 10**9))
    assert not kind, f"the fuzzer does not know the schema type {kind!r}"
    return JSON


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)


def drawn(schema: dict, count: int) -> list[dict]:
    """``count`` valid argument sets drawn from the schema by hypothesis, the same on every run."""
    values: list[dict] = []

    @hypothesis_settings(max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
                         suppress_health_check=list(HealthCheck))
    @given(strategy(schema))
    def draw(value):
        values.append(value)

    draw()
    return values[:count]


def typical(schema: dict, *, required_only: bool = False) -> Any:
    """A plausible value of every property the schema has (or of the required ones only: optional fields may
    conflict, like a revision of thought 1), so that mutations reach past the first check."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        if "properties" not in schema:
            return {"note": TEXT}
        required = schema.get("required", [])
        return {name: typical(sub, required_only=required_only) for name, sub in schema["properties"].items()
                if name in required or not required_only}
    if kind == "array":
        return [typical(schema.get("items", {"type": "string"}), required_only=required_only)] * \
            max(schema.get("minItems", 1), 1)
    if kind in ("number", "integer"):
        # The smallest whole number from 1 that the range allows: cheap where a number costs (think_parallel's
        # timeout is its 1000 ms floor), and 1 where the range is 0-1.
        return max(schema.get("minimum", 1), 1) if schema.get("maximum", 1) >= 1 else schema["maximum"]
    if kind == "boolean":
        return True
    if schema.get("format") == "date-time":
        return "2026-01-02T03:04:05Z"
    if schema.get("format") == "uuid":
        return "5a1c3f0e-8d2b-4c6a-9e7f-0b1d2c3e4f5a"
    return TEXT


def normalised(key: str) -> str:
    return key.replace("_", "").lower()


def is_id(key) -> bool:
    # A reversal hash (Context Graph's undo) names a thing of the caller's as an id does.
    return isinstance(key, str) and normalised(key).endswith(("id", "ids", "hash"))


def grounded(value: Any, ids: dict[str, Any], tool: str) -> Any:
    """The arguments with every id-like field naming the caller's own data, so that the call can succeed."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = normalised(key)
            own = ids.get(f"{name}@{tool}", ids.get(name))
            # Id-like fields, and fields that name the caller's data under another word (Context Graph's citation
            # tags), given for this tool.
            named = is_id(key) or f"{name}@{tool}" in ids
            out[key] = own if own is not None and named else grounded(item, ids, tool)
        return out
    if isinstance(value, list):
        return [grounded(item, ids, tool) for item in value]
    return value


def paths(value: Any, prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    """Every field of the arguments (into objects and the first item of arrays), as (path, value)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append(((*prefix, key), item))
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list) and value:
        found.append(((*prefix, 0), value[0]))
        found.extend(paths(value[0], (*prefix, 0)))
    return found


def replaced(arguments: dict, path: tuple, new: Any) -> dict:
    copy = deepcopy(arguments)
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


def removed(arguments: dict, path: tuple) -> dict:
    copy = deepcopy(arguments)
    target = copy
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return copy


def nested(depth: int) -> Any:
    value: Any = TEXT
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


def mutations(base: dict, required: list[str], other_ids: list[str]):
    """(kind, path, arguments) for every invalid variant of ``base``."""
    yield "unknown_field", ("unexpectedField",), {**base, "unexpectedField": TEXT}
    yield "deep_nesting", ("deeplyNested",), {**base, "deeplyNested": nested(DEPTH)}
    for name in required:
        yield "missing", (name,), removed(base, (name,))
    for path, value in paths(base):
        if isinstance(value, dict):
            if len(path) > 0 and value:
                yield "missing", (*path, next(iter(value))), removed(base, (*path, next(iter(value))))
            yield "unknown_field", (*path, "unexpectedField"), replaced(base, path, {**value, "unexpectedField": 1})
        if isinstance(value, (dict, list)):
            yield "deep_nesting", path, replaced(base, path, nested(DEPTH))
        yield "wrong_type", path, replaced(base, path, WRONG_TYPES[type(value)])
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for number in HUGE_NUMBERS:
                yield "huge_number", path, replaced(base, path, number)
        if isinstance(value, str):
            for text in LONG_STRINGS:
                yield "long_string", path, replaced(base, path, text)
            for text in CONTROL_STRINGS:
                yield "control_chars", path, replaced(base, path, text)
        if is_id(path[-1]) or (len(path) > 1 and path[-1] == 0 and is_id(path[-2])):
            for other in other_ids:
                yield "other_users_id", path, replaced(base, path, other)


def brief(value: Any, depth: int = 0) -> Any:
    """The arguments as a failure message shows them: long strings and deep nesting summarised."""
    if depth > 6:
        return "<nested deeper>"
    if isinstance(value, str) and len(value) > 80:
        return f"<{len(value)} chars: {value[:20]!r}...>"
    if isinstance(value, dict):
        return {key: brief(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [brief(item, depth + 1) for item in value]
    return value


def fix_of(payload: dict) -> str:
    """The envelope's advice: ThoughtMCP's suggestion, Thoughtbox's error.suggestion, Mind's and MemGOS's
    error.details.suggestion, Context Graph's error.data.suggestion."""
    error = payload.get("error")
    if isinstance(error, dict):
        return (error.get("suggestion") or (error.get("details") or {}).get("suggestion")
                or (error.get("data") or {}).get("suggestion") or "")
    return payload.get("suggestion") or ""


def spellings(name: str) -> set[str]:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", lambda match: "_" + match.group(1).lower(), name)
    camel = re.sub(r"_([a-z])", lambda match: match.group(1).upper(), name)
    return {name.lower(), snake.lower(), camel.lower()}


def problem(result, *, names_field: tuple | None) -> str | None:
    """What is wrong with a tool's answer, or None. ``names_field``: the path of the one field at fault."""
    text = " ".join(getattr(block, "text", "") for block in result.content)
    whole = text + json.dumps(result.structured_content or {}, ensure_ascii=False)
    if INTERNAL.search(whole):
        return f"internal error or traceback: {text[:300]}"
    if not result.is_error:
        return None
    payload = result.structured_content or {}
    if len(text) > MAX_ERROR_CHARS:
        return f"an error of {len(text)} characters (echoing the input?): {text[:300]}"
    if not fix_of(payload).strip():
        return f"an error without a fix: {text[:300]}"
    if names_field is not None:
        names = set().union(*(spellings(part) for part in names_field if isinstance(part, str)))
        if not any(name in whole.lower() for name in names):
            return f"the error does not name {'.'.join(map(str, names_field))}: {text[:300]}"
    return None


# Data of one user through the tools themselves: every kind of id a tool takes.

async def payload_of(client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content[0].text)
    return result.structured_content


async def make_data(raw_token: str, username: str) -> dict[str, Any]:
    """A memory, a cube with a memory, a chat session, an MCP client session, a project with an issue and a
    Mind session, a thought session, a notebook with a code cell, a Context Graph session: their ids, by normalised
    field name."""
    ids: dict[str, Any] = {"userid": username}
    async with in_process(raw_token, "thoughtmcp") as client:
        stored = await payload_of(client, "store_memory", {
            "content": f"{username} keeps the build green", "userId": username, "sessionId": "fuzz",
            "primarySector": "semantic"})
    async with in_process(raw_token, "memgos") as client:
        cube = f"{username}-fuzz-cube"
        await payload_of(client, "register_cube", {"cube_id": cube, "name": f"{username}'s cube"})
        added = await payload_of(client, "add_memory", {"memory_content": f"{username} deploys on Fridays",
                                                        "mem_cube_id": cube})
        chat = await payload_of(client, "chat", {"query": "When do I deploy?", "cube_ids": [cube]})
        session = await payload_of(client, "session_info", {})
    async with in_process(raw_token, "mind") as client:
        started = await payload_of(client, "mind_start_session", {"project_name": f"{username}'s project"})
        project = started["project"]["id"]
        issue = await payload_of(client, "mind_add_issue", {"title": "Flaky login", "description": "Fails at times",
                                                            "project_id": project})
    async with in_process(raw_token, "thoughtmcp") as client:
        notes = [(await payload_of(client, "store_memory", {
            "content": f"{username} note {n}: the staging server restarts nightly", "userId": username,
            "sessionId": "fuzz", "primarySector": "semantic"}))["data"]["memoryId"] for n in range(5)]
    async with in_process(raw_token, "context-graph") as client:
        # A node in the trash by hash, and one by id, for the undo tools; a pair to merge; one to forget.
        forgotten = await payload_of(client, "forget_concept", {"node_id": notes[3], "reason": "obsolete"})
        await payload_of(client, "forget_concept", {"node_id": notes[4], "reason": "obsolete"})
    ids.update({"sourcenodeids@merge_concepts": notes[:2], "nodeid@forget_concept": notes[2],
                "reversalhash@restore_from_hash": forgotten["reversal_hash"], "nodeid@restore_concept": notes[4]})
    async with in_process(raw_token, "thoughtbox") as client:
        thought = await payload_of(client, "thoughtbox", {"thought": "First", "thoughtNumber": 1, "totalThoughts": 2,
                                                          "nextThoughtNeeded": True})
        notebook = await payload_of(client, "notebook", {"operation": "create", "args": {"title": "Fuzz"}})
        notebook_id = notebook["notebookId"]
        cell = await payload_of(client, "notebook", {"operation": "add_cell", "args": {
            "notebookId": notebook_id, "cellType": "code", "content": "console.log(6 * 7)", "filename": "answer.js"}})
    async with in_process(raw_token, "context-graph") as client:
        # A scratchpad note starts a Context Graph session under the id it names.
        ids["graphsessionid"] = str(uuid.uuid4())
        await payload_of(client, "temporary_scratchpad", {"action": "store", "session_id": ids["graphsessionid"],
                                                          "agent_id": "fuzz", "content": f"{username} is fuzzing"})
    ids.update({
        "memoryid": stored["data"]["memoryId"],
        "memgosmemoryid": added["memory_id"],
        "cubeid": cube, "memcubeid": cube, "resourceid": cube, "cubeids": [cube],
        "chatsessionid": chat["session_id"], "mcpsessionid": session["session"]["session_id"],
        "projectid": project, "issueid": issue["issue"]["id"],
        "thoughtsessionid": thought["sessionId"], "notebookid": notebook_id,
        "cellid": cell["cellId"],
    })
    # Tools whose id field names a different kind of thing than its name says.
    ids.update({"sessionid@chat_history": ids["chatsessionid"], "sessionid@session_info": ids["mcpsessionid"],
                "sessionid@export_reasoning_chain": ids["thoughtsessionid"],
                "citationtags@hydrate_citation": [f"[node_{ids['memoryid'].replace('-', '')[:12]}]"]})
    return ids


def profile_ids(ids: dict[str, Any], profile: str) -> dict[str, Any]:
    """The ids as one profile's tools name them (MemGOS's memory ids are of memories in its cube)."""
    out = dict(ids)
    if profile == "memgos":
        out["memoryid"] = ids["memgosmemoryid"]
    if profile == "context-graph":  # its nodes are memories; a reference is to another one
        out.update(nodeid=ids["memoryid"], referencenodeid=ids["memgosmemoryid"], sessionid=ids["graphsessionid"])
    return out


def other_ids(ids: dict[str, Any]) -> list[str]:
    """Every id of another user's data, each to be tried in every id-like field."""
    kinds = ("userid", "memoryid", "memgosmemoryid", "cubeid", "chatsessionid", "mcpsessionid", "projectid",
             "issueid", "thoughtsessionid", "notebookid", "cellid", "graphsessionid")
    return [str(ids[kind]) for kind in kinds if ids.get(kind) is not None]


# Bob's data, row by row: what alice's run must not change.

APPS = ("memories", "cubes", "projects", "reasoning", "chat", "mcp", "graph", "cognition")
# What make_data gives bob, so that the comparison is never one of empty lists.
BOBS_DATA = ("memories.Memory", "cubes.Cube", "projects.Project", "projects.Issue", "projects.Session",
             "reasoning.ThoughtSession", "reasoning.Notebook", "reasoning.Cell", "chat.ChatSession",
             "chat.ChatMessage", "mcp.McpClientSession", "cognition.CgSession", "cognition.ScratchpadItem")


def _plain(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else value


@database_sync_to_async
def rows_of(user) -> dict[str, list]:
    """Every row the user owns in the data apps, and every row that hangs off one of them. Queries counted for the
    gardener are written by a background thread about a second later: they are written first, so that a count of
    the user's own setup queries is not taken for a change someone else made."""
    from apps.cognition.services.gardener.activity import activity_flush

    activity_flush()
    models = [model for model in django_apps.get_models() if model._meta.app_label in APPS]
    user_model = django_apps.get_model(settings.AUTH_USER_MODEL)

    def keys_to(model, target) -> list[str]:
        return [field.name for field in model._meta.get_fields()
                if isinstance(field, ForeignKey) and field.related_model is target]

    snapshot, owned = {}, {}
    for model in models:
        fields = keys_to(model, user_model)
        if fields:
            query = model.objects.filter(Q(*[Q(**{field: user}) for field in fields], _connector=Q.OR))
            owned[model] = list(query.values_list("pk", flat=True))
            snapshot[model._meta.label] = sorted(
                ([(name, _plain(value)) for name, value in row.items()] for row in query.values()), key=str)
    for model in models:
        parents = [(field, owned[target]) for target in owned for field in keys_to(model, target)]
        if parents and model not in owned:
            query = model.objects.filter(Q(*[Q(**{f"{field}__in": pks}) for field, pks in parents], _connector=Q.OR))
            snapshot[model._meta.label] = sorted(
                ([(name, _plain(value)) for name, value in row.items()] for row in query.values()), key=str)
    return snapshot


# The run.

async def fuzz_call(client, tool: str, arguments: dict, *, names_field: tuple | None) -> tuple[str | None, bool]:
    """(what went wrong or None, whether the tool succeeded)."""
    try:
        with anyio.fail_after(CALL_SECONDS):
            result = await client.call_tool(tool, arguments)
    except TimeoutError:
        return f"no answer within {CALL_SECONDS} s", False
    except Exception as exc:  # a protocol or transport error: the call did not end in a tool result
        return f"{type(exc).__name__}: {str(exc)[:300]}", False
    return problem(result, names_field=names_field), not result.is_error


def bases(profile: str, tool) -> list[list[dict]]:
    """The typical argument sets of a tool, each as candidates (every property, then the required ones only): one,
    or one per operation of an {operation, args} tool."""
    operations = OPERATIONS.get((profile, tool.name))
    alternatives = ALTERNATIVES.get((profile, tool.name))
    if alternatives:
        full, required = typical(tool.input_schema), set(tool.input_schema.get("required", []))
        return [[{name: value for name, value in full.items() if name in required or name in fields}] * 2
                for fields in alternatives]
    if not operations:
        return [[typical(tool.input_schema), typical(tool.input_schema, required_only=True)]]
    return [[{"operation": name, "args": typical(advertised_schema(model), required_only=only)}
             for only in (False, True)] for name, (model, _) in operations.items()]


def ending_last(tool) -> bool:
    # A delete, or the end of Mind's session, early would leave the later tools without their data or session.
    return "delete" in tool.name or tool.name.endswith("end_session")


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_every_tool_survives_the_fuzzer(profile, user, other_user, alice_token, bob_token):
    alice_ids = profile_ids(await make_data(alice_token, user.username), profile)
    bob_ids = await make_data(bob_token, other_user.username)
    others = other_ids(bob_ids)
    bob_before = await rows_of(other_user)
    assert all(bob_before.get(label) for label in BOBS_DATA), "bob's data was not made"
    failures: list[str] = []
    fuzzed: dict[str, set[str]] = {}
    accepted: dict[str, set[str]] = {}

    async with in_process(alice_token, profile) as client:
        tools = (await client.list_tools()).tools
        for tool in sorted(tools, key=ending_last):
            kinds = fuzzed.setdefault(tool.name, set())

            async def attempt(kind: str, arguments: dict, path: tuple | None = None, names_field=None) -> bool:
                kinds.add(kind)
                trouble, succeeded = await fuzz_call(client, tool.name, arguments, names_field=names_field)
                if succeeded:
                    accepted.setdefault(tool.name, set()).add(kind)
                if trouble:
                    failures.append(f"{profile}.{tool.name} [{kind} {'.'.join(map(str, path or ()))}] "
                                    f"{json.dumps(brief(arguments), ensure_ascii=False)[:400]}: {trouble}")
                return succeeded

            for arguments in drawn(tool.input_schema, VALID_EXAMPLES):
                # As drawn (a new cube's id), and naming alice's own data (the cube she has).
                await attempt("valid", arguments)
                await attempt("valid", grounded(arguments, alice_ids, tool.name))
            required = tool.input_schema.get("required", [])
            for full, minimal in bases(profile, tool):
                full, minimal = grounded(full, alice_ids, tool.name), grounded(minimal, alice_ids, tool.name)
                # Every field is mutated; only when the base itself was accepted is the mutated field the one at
                # fault, so that the error must name it. A refused full base gets its required fields' turn too.
                runs = [(full, await attempt("typical", full))]
                if not runs[0][1] and minimal != full and await attempt("typical", minimal):
                    runs.append((minimal, True))
                for base, base_accepted in runs:
                    for kind, path, arguments in mutations(base, required, others):
                        await attempt(kind, arguments, path, names_field=path if base_accepted else None)

    assert not failures, f"{len(failures)} bad answers:\n" + "\n".join(failures[:MAX_SHOWN])
    assert len(fuzzed) == len(tools) == len(PROFILES[profile].tools)
    for name, kinds in fuzzed.items():
        assert {"valid", "typical", "unknown_field", "deep_nesting"} <= kinds, (name, kinds)
    # A fuzzer that only ever bounced off validation would prove little: every tool did its work at least once.
    assert set(accepted) == set(fuzzed), f"never answered with a result: {set(fuzzed) - set(accepted)}"
    assert await rows_of(other_user) == bob_before, "alice's calls changed bob's data"


# Over real HTTP (uvicorn serving config.asgi): the same mutations where a transport could break first, and
# bodies no SDK client would send. Nothing answers 500, nothing hangs, nothing carries a traceback.

RAW_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}}


def transport_mutations(base: dict):
    """The mutations a transport sees differently from an in-process call: escapes, size and depth on the wire."""
    yield "deep_nesting", ("deeplyNested",), {**base, "deeplyNested": nested(DEPTH)}
    for path, value in paths(base):
        if isinstance(value, str):
            yield "long_string", path, replaced(base, path, LONG_STRINGS[1])
            # The SDK's HTTP client cannot encode a lone surrogate; RAW_BODIES sends one as a JSON escape.
            for text in (text.replace("\ud800", "") for text in CONTROL_STRINGS):
                yield "control_chars", path, replaced(base, path, text)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            for number in (2**63, 1e308, math.nan):
                yield "huge_number", path, replaced(base, path, number)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_every_tool_over_http_survives_the_worst_inputs(profile, live_url, user, alice_token):
    failures: list[str] = []
    async with over_http(f"{live_url}/mcp/{profile}/", alice_token) as client:
        tools = (await client.list_tools()).tools
        for tool in sorted(tools, key=ending_last):
            base = grounded(typical(tool.input_schema), {"userid": user.username}, tool.name)
            for kind, path, arguments in transport_mutations(base):
                trouble, _ = await fuzz_call(client, tool.name, arguments, names_field=None)
                if trouble:
                    failures.append(f"{profile}.{tool.name} [{kind} {'.'.join(map(str, path))}] over HTTP: {trouble}")
    assert not failures, f"{len(failures)} bad answers:\n" + "\n".join(failures[:MAX_SHOWN])


def _deep_body(depth: int) -> str:
    arguments = '{"userId": "alice", "metadata": ' + "[" * depth + "]" * depth + "}"
    return '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "retrieve_memories", ' \
           '"arguments": ' + arguments + "}}"


RAW_BODIES = {
    "nesting 100k deep": _deep_body(100_000),
    "a NaN literal": '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "retrieve_memories", '
                     '"arguments": {"userId": "alice", "offset": NaN}}}',
    "a lone surrogate escape": '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
                               '"retrieve_memories", "arguments": {"userId": "alice", "text": "\\ud800"}}}',
    "broken JSON": '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": ',
    "a 5 MB string": '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "retrieve_memories", '
                     '"arguments": {"userId": "alice", "text": "' + "x" * 5_000_000 + '"}}}',
}


@pytest.mark.parametrize("body", list(RAW_BODIES))
async def test_bodies_no_client_would_send_get_no_server_error(live_url, alice_token, body):
    url = f"{live_url}/mcp/thoughtmcp/"
    headers = {**RAW_HEADERS, "Authorization": f"Bearer {alice_token}", "MCP-Protocol-Version": "2025-06-18"}
    async with httpx2.AsyncClient(timeout=CALL_SECONDS) as http:
        opened = await http.post(url, json=INITIALIZE, headers=headers)
        assert opened.status_code == 200, opened.text
        if opened.headers.get("mcp-session-id"):
            headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        response = await http.post(url, content=RAW_BODIES[body].encode(), headers=headers)
    assert response.status_code < 500, (response.status_code, response.text[:500])
    assert not INTERNAL.search(response.text), response.text[:500]
