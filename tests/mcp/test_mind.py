"""The Mind profile through the SDK's own client (in process, and once over real HTTP): the seed's ten
tools and schemas, its examples end to end, the current session per MCP client, the seed's error
codes, isolation between users and scopes."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from mcp.client import Client

from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.services import edge_add, issue_add, project_create
from tests.mcp.mind_support import (
    MIND_TOOLS, assert_schema_is_seed, over_http_legacy, result_data, seed_description, seed_tools,
)
from tests.mcp.support import in_process, over_http, stdio_parameters
from tests.projects.seed_examples import CRYPTO_EDGE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

SEED = seed_tools()

# The seed's own examples, as it writes them.
START_SPAWNER = {"project_name": "spawner"}
END_SESSION = {
    "summary": "Implemented core data models for Mind",
    "progress": ["Created Project, Decision, Issue models", "Set up SQLite schema"],
    "still_open": ["MCP tool implementations", "Sync logic"],
    "next_steps": ["Implement storage layer", "Add embedding generation"],
    "mood": "Productive, clear direction",
}
VIBEMEMO_DECISION = {
    "title": "Build Mind from scratch instead of forking VibeMemo",
    "description": "Create our own memory system rather than extending existing",
    "context": "After analyzing VibeMemo and finding we couldn't access source",
    "reasoning": "Full control, simpler architecture, no external dependencies",
    "alternatives": [{"option": "Fork VibeMemo", "rejected_because": "Can't verify source quality"}],
    "confidence": 0.8,
    "revisit_if": "We need features VibeMemo already has",
    "trigger_phrases": ["why not vibememo", "build vs fork"],
}
# The decision that mind_get_context's example finds.
SUPABASE_DECISION = {
    "title": "Use Supabase for backend",
    "description": "Supabase hosts the database, auth and the webhook handlers",
    "context": "Webhooks from the payment provider need more time than an edge function gets",
    "reasoning": "Vercel Edge timeout too short for webhooks, and we want native Postgres",
    "alternatives": [{"option": "Cloudflare Workers", "rejected_because": "No native Postgres"}],
}
SUPABASE_QUERY = {"query": "why did we choose supabase"}
CRYPTO_CHECK = {"code": "const token = crypto.randomUUID()", "context": {"runtime": "edge"}}
SAFARI_ISSUE = {"title": "Safari login loses the session cookie", "description": "Login works everywhere but Safari",
                "severity": "blocking", "symptoms": ["401 after redirect on Safari"]}
SAFARI_ATTEMPT = {
    "add_attempt": {"what": "Tried SameSite=None on cookies", "result": "Still failing on Safari",
                    "learned": "Not a cookie scope issue"},
    "current_theory": "Safari ITP might be blocking cross-domain cookies entirely",
}
VIBEMEMO_ISSUE = {"title": "VibeMemo source access", "description": "We cannot read VibeMemo's source"}


def data_of(result) -> dict:
    payload = result_data(result)
    assert result.is_error is False, payload
    return payload


def error_of(result, code: str) -> dict:
    payload = result_data(result)
    assert result.is_error is True
    assert set(payload) == {"error"}
    error = payload["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == code, error
    assert error["message"].strip() and error["details"]["suggestion"].strip()
    assert "Traceback" not in json.dumps(error)
    return error


def assert_returns_seed_shape(tool: str, data: dict) -> None:
    returns = SEED[tool]["returns"]
    assert {name for name, seed in returns.items() if seed.required} <= set(data) <= set(returns), (tool, data)


async def call(client, tool: str, arguments: dict) -> dict:
    data = data_of(await client.call_tool(tool, arguments))
    assert_returns_seed_shape(tool, data)
    return data


@database_sync_to_async
def count(model) -> int:
    return model.objects.count()


@pytest.fixture
def alice_project(user):
    """Alice's project with an open issue and a project sharp edge, written through the services."""
    project = project_create(actor=user, name="secret-app", current_goal="Ship billing")
    issue_add(actor=user, project_id=project.pk, title="Stripe webhook signature fails",
              description="The signature check rejects every webhook", severity="blocking")
    edge_add(actor=user, project_id=project.pk, title="Raw body needed for Stripe signatures",
             workaround="Read the raw body before parsing JSON",
             detection_patterns=[{"type": "code", "pattern": "request\\.json\\(", "description": "parsed body"}])
    return project


async def test_tools_list_is_the_seed(alice_token):
    async with in_process(alice_token, profile="mind") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == list(MIND_TOOLS)
    for name, tool in tools.items():
        # Engram's one addition to the seed's parameters: file_glob on detection patterns.
        extras = frozenset({"detection_patterns.file_glob"}) if name == "mind_add_edge" else frozenset()
        assert_schema_is_seed(tool.input_schema, SEED[name]["params"], where=name, extras=extras)
        assert tool.description.startswith(seed_description(name)), name
    assert "file_glob" in tools["mind_add_edge"].description
    decision = tools["mind_add_decision"].input_schema["properties"]
    assert decision["confidence"] == {"type": "number", "minimum": 0, "maximum": 1, "default": 0.7,
                                      "description": "0.0 to 1.0 (default: 0.7)"}
    assert tools["mind_get_context"].input_schema["properties"]["include_global"]["default"] is True
    assert tools["mind_get_context"].input_schema["properties"]["types"]["items"]["enum"] == [
        "decision", "issue", "sharp_edge", "episode"]


async def test_seed_examples_in_one_session(user, alice_token, settings, tmp_path):
    settings.ENGRAM_EXPORT_DIR = tmp_path
    async with in_process(alice_token, profile="mind") as client:
        started = await call(client, "mind_start_session", START_SPAWNER)
        assert started["project"]["name"] == "spawner" and isinstance(started["primer"], str)
        assert started["open_issues"] == [] and started["pending_decisions"] == []
        project_id = started["project"]["id"]

        project = (await call(client, "mind_update_project", {
            "current_goal": "Implement memory MCP", "add_to_stack": ["nextjs", "supabase"],
            "open_threads": ["Sync logic"]}))["project"]
        assert project["id"] == project_id and project["current_goal"] == "Implement memory MCP"
        assert project["stack"] == ["nextjs", "supabase"] and project["open_threads"] == ["Sync logic"]

        vibememo = await call(client, "mind_add_decision", VIBEMEMO_DECISION)
        assert "superseded" not in vibememo
        decision = vibememo["decision"]
        assert decision["project_id"] == project_id and decision["confidence"] == 0.8
        assert decision["alternatives"] == VIBEMEMO_DECISION["alternatives"]
        assert decision["trigger_phrases"] == ["why not vibememo", "build vs fork"] and decision["status"] == "active"
        supabase = (await call(client, "mind_add_decision", SUPABASE_DECISION))["decision"]
        assert supabase["confidence"] == 0.7  # the seed's default

        vibememo_issue = (await call(client, "mind_add_issue", VIBEMEMO_ISSUE))["issue"]
        assert vibememo_issue["severity"] == "major" and vibememo_issue["status"] == "open"
        investigating = await call(client, "mind_update_issue", {"issue_id": vibememo_issue["id"],
                                                                 "status": "investigating"})
        assert investigating["issue"]["status"] == "investigating"

        safari = (await call(client, "mind_add_issue", SAFARI_ISSUE))["issue"]
        assert safari["severity"] == "blocking" and safari["symptoms"] == ["401 after redirect on Safari"]
        first = (await call(client, "mind_update_issue", {"issue_id": safari["id"], **SAFARI_ATTEMPT}))["issue"]
        assert first["current_theory"] == SAFARI_ATTEMPT["current_theory"]
        [attempt] = first["attempts"]
        assert {key: attempt[key] for key in ("what", "result", "learned")} == SAFARI_ATTEMPT["add_attempt"]
        assert attempt["at"]
        second = (await call(client, "mind_update_issue", {
            "issue_id": safari["id"], "add_attempt": {"what": "Moved auth to the same domain", "result": "Works"},
            "status": "resolved", "resolution": "Same-domain auth"}))["issue"]
        assert [item["what"] for item in second["attempts"]] == ["Tried SameSite=None on cookies",
                                                                 "Moved auth to the same domain"]
        assert second["status"] == "resolved" and second["resolved_at"]

        edge = (await call(client, "mind_add_edge", CRYPTO_EDGE))["edge"]
        assert edge["is_global"] is True and edge["project_id"] is None and edge["share_with_community"] is True
        assert [pattern["pattern"] for pattern in edge["detection_patterns"]] == [
            "crypto\\.randomUUID|crypto\\.createHash", "edge.*crypto|crypto.*edge"]

        checked = await call(client, "mind_check_edges", CRYPTO_CHECK)
        [warning] = checked["warnings"]
        assert set(warning) == {"edge", "matched_pattern", "severity", "recommendation"}
        assert warning["edge"]["title"] == CRYPTO_EDGE["title"]
        assert warning["edge"]["workaround"] == CRYPTO_EDGE["workaround"]
        assert warning["matched_pattern"]["type"] == "code" and warning["severity"] == "high"
        assert warning["recommendation"]
        # Each edge warns once a session.
        assert (await call(client, "mind_check_edges", CRYPTO_CHECK))["warnings"] == []

        context = await call(client, "mind_get_context", SUPABASE_QUERY)
        assert context["decisions"][0]["title"] == "Use Supabase for backend"
        assert context["decisions"][0]["reasoning"].startswith("Vercel Edge timeout too short for webhooks")
        assert context["decisions"][0]["alternatives"] == [{"option": "Cloudflare Workers",
                                                            "rejected_because": "No native Postgres"}]
        only_issues = await call(client, "mind_get_context", {"query": "Safari cookies", "types": ["issue"]})
        assert only_issues["decisions"] == only_issues["edges"] == only_issues["episodes"] == []
        assert only_issues["issues"][0]["id"] == safari["id"]

        ended = await call(client, "mind_end_session", END_SESSION)
        assert ended["session_id"] == started["session_id"] and ended["captured"] is True
        assert ended["episode_created"]  # the session produced decisions, issues and an edge
        # The session is over: writes that need it say so.
        error_of(await client.call_tool("mind_add_issue", VIBEMEMO_ISSUE), "SESSION_NOT_ACTIVE")

        again = await call(client, "mind_start_session", START_SPAWNER)
        assert again["session_id"] != started["session_id"] and again["project"]["id"] == project_id
        assert again["project"]["current_goal"] == "Implement memory MCP"
        assert again["project"]["last_session_next_steps"] == END_SESSION["next_steps"]
        assert [(issue["title"], issue["status"]) for issue in again["open_issues"]] == [
            ("VibeMemo source access", "investigating")]
        assert END_SESSION["summary"] in again["primer"]

        exported = await call(client, "mind_export", {"project_id": project_id, "include_sessions": True})
        everything = await call(client, "mind_export", {})
    path = Path(exported["path"])
    assert path.is_absolute() and path.is_file() and path.is_relative_to(tmp_path / str(user.pk))
    # A project's export leaves out global edges; an export of everything has them (and sessions only on request).
    assert exported["entities"] == {"projects": 1, "decisions": 2, "issues": 2, "edges": 0, "episodes": 1,
                                    "sessions": 2}
    assert everything["entities"] == {**exported["entities"], "edges": 1, "sessions": 0}
    assert "Use Supabase for backend" in path.read_text()
    assert CRYPTO_EDGE["title"] in Path(everything["path"]).read_text()
    episode = await database_sync_to_async(Episode.objects.get)(pk=ended["episode_created"])
    assert str(episode.session_id) == started["session_id"]


async def test_start_session_brings_pending_decisions_and_relevant_edges(alice_token):
    async with in_process(alice_token, profile="mind") as client:
        await call(client, "mind_start_session", START_SPAWNER)
        decision = (await call(client, "mind_add_decision", VIBEMEMO_DECISION))["decision"]
        edge = (await call(client, "mind_add_edge", CRYPTO_EDGE))["edge"]
        await call(client, "mind_update_project", {"current_goal": "Port the VibeMemo features we need",
                                                   "add_to_stack": ["edge", "crypto"]})
        await call(client, "mind_end_session", END_SESSION)
        started = await call(client, "mind_start_session", START_SPAWNER)
        # The edges that start_session shows count as warned in the new session.
        checked = await call(client, "mind_check_edges", CRYPTO_CHECK)
    assert [item["id"] for item in started["pending_decisions"]] == [decision["id"]]
    assert [item["id"] for item in started["relevant_edges"]] == [edge["id"]]
    assert started["relevant_edges"][0]["workaround"] == CRYPTO_EDGE["workaround"]
    assert checked == {"warnings": []}


async def test_start_session_detects_the_project_from_its_path(alice_token):
    async with in_process(alice_token, profile="mind") as client:
        created = (await call(client, "mind_start_session", {"detect_from_path": "/home/me/code/spawner"}))["project"]
        found = (await call(client, "mind_start_session", {"detect_from_path": "/home/me/code/spawner/src/app"}))
        by_id = (await call(client, "mind_start_session", {"project_id": created["id"]}))["project"]
    assert created["name"] == "spawner" and created["repo_path"] == "/home/me/code/spawner"
    assert found["project"]["id"] == by_id["id"] == created["id"]
    # Starting again ended this client's earlier sessions: one stays open.
    assert await database_sync_to_async(Session.objects.filter(ended_at__isnull=True).count)() == 1


async def test_export_as_markdown_of_all_projects(user, alice_token, alice_project, settings, tmp_path):
    settings.ENGRAM_EXPORT_DIR = tmp_path
    async with in_process(alice_token, profile="mind") as client:
        exported = await call(client, "mind_export", {"format": "markdown"})
    path = Path(exported["path"])
    assert path.suffix == ".md" and path.is_file()
    assert "Stripe webhook signature fails" in path.read_text()
    assert exported["entities"] == {"projects": 1, "decisions": 0, "issues": 1, "edges": 1, "episodes": 0,
                                    "sessions": 0}


async def test_current_session_is_per_mcp_session_and_per_token(user, make_token, alice_token):
    other_token = await database_sync_to_async(make_token)(user, name="laptop")
    async with in_process(alice_token, profile="mind") as first, in_process(alice_token, profile="mind") as second:
        spawner = (await call(first, "mind_start_session", START_SPAWNER))["project"]
        error_of(await second.call_tool("mind_add_issue", VIBEMEMO_ISSUE), "SESSION_NOT_ACTIVE")
        engram = (await call(second, "mind_start_session", {"project_name": "engram"}))["project"]
        in_first = (await call(first, "mind_add_issue", VIBEMEMO_ISSUE))["issue"]
        in_second = (await call(second, "mind_add_issue", VIBEMEMO_ISSUE))["issue"]
        assert (in_first["project_id"], in_second["project_id"]) == (spawner["id"], engram["id"])
        await call(second, "mind_end_session", END_SESSION)
        # Ending the second client's session leaves the first one's open.
        assert (await call(first, "mind_add_decision", SUPABASE_DECISION))["decision"]["project_id"] == spawner["id"]
    async with in_process(other_token, profile="mind") as laptop:
        error_of(await laptop.call_tool("mind_update_project", {"current_goal": "x"}), "SESSION_NOT_ACTIVE")
    open_sessions = await database_sync_to_async(
        lambda: list(Session.objects.filter(ended_at__isnull=True).values_list("project__name", flat=True)))()
    assert open_sessions == ["spawner"]


@pytest.mark.parametrize(("tool", "arguments"), [
    ("mind_add_decision", VIBEMEMO_DECISION),
    ("mind_add_issue", VIBEMEMO_ISSUE),
    ("mind_update_project", {"status": "paused"}),
    ("mind_end_session", END_SESSION),
])
async def test_writes_on_the_current_project_need_a_session(alice_token, tool, arguments):
    async with in_process(alice_token, profile="mind") as client:
        error = error_of(await client.call_tool(tool, arguments), "SESSION_NOT_ACTIVE")
    assert error["message"].startswith("No active session") and "mind_start_session" in error["message"]
    assert "mind_start_session" in error["details"]["suggestion"]
    assert await count(Decision) == await count(Issue) == await count(Project) == 0


async def test_without_a_session_project_id_writes_and_reads_cover_all_projects(alice_token, alice_project):
    project_id = str(alice_project.pk)
    async with in_process(alice_token, profile="mind") as client:
        decision = (await call(client, "mind_add_decision", {**SUPABASE_DECISION, "project_id": project_id}))
        assert decision["decision"]["project_id"] == project_id
        edge = (await call(client, "mind_add_edge", CRYPTO_EDGE))["edge"]
        assert edge["is_global"] is True
        found = await call(client, "mind_get_context", {"query": "stripe webhook signature"})
        assert found["issues"][0]["title"] == "Stripe webhook signature fails"
        code = "const body = await request.json(); const id = crypto.randomUUID()"
        first = await call(client, "mind_check_edges", {"code": code})
        second = await call(client, "mind_check_edges", {"code": code})
    # No session, so nothing to warn once in: both checks warn of both edges.
    titles = {"Raw body needed for Stripe signatures", CRYPTO_EDGE["title"]}
    assert {warning["edge"]["title"] for warning in first["warnings"]} == titles
    assert {warning["edge"]["title"] for warning in second["warnings"]} == titles


async def test_file_glob_limits_a_code_pattern(alice_token):
    edge = {**CRYPTO_EDGE, "detection_patterns": [
        {"type": "code", "pattern": "crypto\\.randomUUID", "description": "Node crypto", "file_glob": "app/api/*"}]}
    async with in_process(alice_token, profile="mind") as client:
        added = (await call(client, "mind_add_edge", edge))["edge"]
        assert added["detection_patterns"][0]["file_glob"] == "app/api/*"
        elsewhere = await call(client, "mind_check_edges", {**CRYPTO_CHECK, "context": {"file_path": "lib/id.ts"}})
        inside = await call(client, "mind_check_edges", {**CRYPTO_CHECK, "context": {"file_path": "app/api/route.ts"}})
    assert elsewhere["warnings"] == []
    assert [warning["matched_pattern"]["file_glob"] for warning in inside["warnings"]] == ["app/api/*"]


async def test_add_issue_and_decision_in_a_session_check_edges_once(alice_token):
    """Mind runs the edge check inside add_issue and add_decision too: what was written is the intent,
    and an issue's symptoms meet the edges' symptoms."""
    cron_edge = {"title": "Friday deploys break the billing cron", "description": "The cron runs on Saturday",
                 "workaround": "Deploy billing changes Monday to Thursday", "symptoms": ["invoice job skipped"],
                 "detection_patterns": [{"type": "intent", "pattern": "deploy.*billing", "description": "d"}]}
    async with in_process(alice_token, profile="mind") as client:
        await call(client, "mind_start_session", START_SPAWNER)
        await call(client, "mind_add_edge", cron_edge)
        # Not call(): "warnings" is Engram's addition to the seed's return shape.
        issue = data_of(await client.call_tool("mind_add_issue", {
            "title": "Invoices missing on Monday", "description": "Saturday's run logged: invoice job skipped"}))
        decision = data_of(await client.call_tool("mind_add_decision", {
            "title": "Deploy billing on Fridays after all", "description": "d", "context": "c", "reasoning": "r"}))
    [warning] = issue["warnings"]
    assert warning["edge"]["title"] == cron_edge["title"] and warning["severity"] == "medium"
    assert "warnings" not in decision  # warned once a session
    assert set(decision) == {"decision"} and set(issue) == {"issue", "warnings"}


async def test_add_issue_without_a_session_checks_nothing(alice_token, user):
    project = await database_sync_to_async(project_create)(actor=user, name="billing")
    await database_sync_to_async(edge_add)(
        actor=user, project_id=project.pk, title="Deploys", workaround="w",
        detection_patterns=[{"type": "intent", "pattern": "deploy", "description": "d"}])
    async with in_process(alice_token, profile="mind") as client:
        issue = await call(client, "mind_add_issue", {"title": "Deploy failed", "description": "d",
                                                       "project_id": str(project.pk)})
    assert set(issue) == {"issue"}


async def test_get_context_in_a_session_warns_of_intent_edges_once(alice_token):
    deploy_edge = {"title": "Friday deploys break the billing cron", "description": "The cron runs on Saturday",
                   "workaround": "Deploy billing changes Monday to Thursday",
                   "detection_patterns": [{"type": "intent", "pattern": "deploy.*billing", "description": "d"}]}
    query = {"query": "how do we deploy the billing service"}
    async with in_process(alice_token, profile="mind") as client:
        await call(client, "mind_start_session", START_SPAWNER)
        await call(client, "mind_add_edge", deploy_edge)
        first = data_of(await client.call_tool("mind_get_context", query))
        second = data_of(await client.call_tool("mind_get_context", query))
    [warning] = first["warnings"]
    assert warning["edge"]["title"] == deploy_edge["title"] and warning["severity"] == "high"
    assert warning["matched_pattern"]["type"] == "intent"
    assert "warnings" not in second
    assert set(second) == set(SEED["mind_get_context"]["returns"])


UNKNOWN = str(uuid.uuid4())


@pytest.mark.parametrize(("tool", "arguments", "code", "field"), [
    ("mind_start_session", {"project_id": UNKNOWN}, "PROJECT_NOT_FOUND", "project_id"),
    ("mind_add_decision", {**VIBEMEMO_DECISION, "project_id": UNKNOWN}, "PROJECT_NOT_FOUND", "project_id"),
    ("mind_add_issue", {**VIBEMEMO_ISSUE, "project_id": "not-a-uuid"}, "PROJECT_NOT_FOUND", "project_id"),
    ("mind_add_edge", {**CRYPTO_EDGE, "project_id": UNKNOWN}, "PROJECT_NOT_FOUND", "project_id"),
    ("mind_get_context", {"query": "x", "project_id": UNKNOWN}, "PROJECT_NOT_FOUND", "project_id"),
    ("mind_export", {"project_id": UNKNOWN}, "PROJECT_NOT_FOUND", "project_id"),
    ("mind_update_issue", {"issue_id": UNKNOWN, "status": "resolved"}, "ENTITY_NOT_FOUND", "issue_id"),
    ("mind_update_issue", {"issue_id": "iss_01HX", **SAFARI_ATTEMPT}, "ENTITY_NOT_FOUND", "issue_id"),
])
async def test_unknown_ids(alice_token, tool, arguments, code, field):
    async with in_process(alice_token, profile="mind") as client:
        error = error_of(await client.call_tool(tool, arguments), code)
    assert error["details"]["field"] == field


LONG_TITLE = "x" * 301


@pytest.mark.parametrize(("tool", "arguments", "field"), [
    ("mind_add_issue", {**VIBEMEMO_ISSUE, "severity": "urgent"}, "severity"),
    ("mind_update_issue", {"issue_id": UNKNOWN, "status": "done"}, "status"),
    ("mind_update_project", {"status": "deleted"}, "status"),
    ("mind_export", {"format": "xml"}, "format"),
    ("mind_get_context", {"query": "x", "types": ["decision", "memory"]}, "types[1]"),
    ("mind_add_decision", {**VIBEMEMO_DECISION, "confidence": 1.5}, "confidence"),
    ("mind_add_decision", {**VIBEMEMO_DECISION, "alternatives": [{"rejected_because": "no"}]},
     "alternatives[0].option"),
    ("mind_add_decision", {**VIBEMEMO_DECISION, "title": LONG_TITLE}, "title"),
    ("mind_add_issue", {**VIBEMEMO_ISSUE, "symptoms": "crypto is not defined"}, "symptoms"),
    ("mind_add_issue", {**VIBEMEMO_ISSUE, "symptoms": ["s"] * 101}, "symptoms"),
    ("mind_add_edge", {**CRYPTO_EDGE, "detection_patterns": [
        CRYPTO_EDGE["detection_patterns"][0], {"type": "code", "pattern": "crypto(", "description": "bad"}]},
     "detection_patterns[1].pattern"),
    ("mind_add_edge", {**CRYPTO_EDGE, "detection_patterns": [
        {"type": "code", "pattern": "a" * 501, "description": "too long"}]}, "detection_patterns[0].pattern"),
    ("mind_add_edge", {**CRYPTO_EDGE, "detection_patterns": [{"type": "regex", "pattern": "x", "description": "d"}]},
     "detection_patterns[0].type"),
    ("mind_add_edge", {**CRYPTO_EDGE, "detection_patterns": [
        {"type": "intent", "pattern": "deploy", "description": "d", "file_glob": "*.ts"}]},
     "detection_patterns[0].file_glob"),
    ("mind_add_edge", {**CRYPTO_EDGE, "workaround": "w" * 20001}, "workaround"),
    ("mind_check_edges", {"code": "x", "context": {"runtime": "edge", "stack": "nextjs"}}, "context.stack"),
    ("mind_end_session", {"summary": "s", "progress": []}, "still_open"),
    ("mind_start_session", {"projectName": "spawner"}, "projectName"),
])
async def test_bad_input_is_a_validation_error_naming_the_field(alice_token, tool, arguments, field):
    async with in_process(alice_token, profile="mind") as client:
        if tool in ("mind_add_decision", "mind_add_issue", "mind_update_project", "mind_end_session"):
            await call(client, "mind_start_session", START_SPAWNER)
        error = error_of(await client.call_tool(tool, arguments), "VALIDATION_ERROR")
    assert error["details"]["field"] == field, error
    assert field.split("[")[0].split(".")[0] in error["message"]
    assert await count(Decision) == await count(Issue) == await count(SharpEdge) == 0


async def test_unknown_argument_suggestion_speaks_snake_case(alice_token):
    async with in_process(alice_token, profile="mind") as client:
        error = error_of(await client.call_tool("mind_get_context", {"query": "x", "includeGlobal": False}),
                         "VALIDATION_ERROR")
    assert error["message"] == "Unknown parameter: includeGlobal"
    assert "snake_case" in error["details"]["suggestion"]


async def test_another_users_project_is_not_found(bob_token, alice_project, settings, tmp_path):
    settings.ENGRAM_EXPORT_DIR = tmp_path
    project_id = str(alice_project.pk)
    issue_id = str(await database_sync_to_async(lambda: alice_project.issues.get().pk)())
    async with in_process(bob_token, profile="mind") as client:
        for tool, arguments in (
            ("mind_start_session", {"project_id": project_id}),
            ("mind_get_context", {"query": "stripe webhook", "project_id": project_id}),
            ("mind_add_decision", {**SUPABASE_DECISION, "project_id": project_id}),
            ("mind_add_issue", {**VIBEMEMO_ISSUE, "project_id": project_id}),
            ("mind_add_edge", {**CRYPTO_EDGE, "project_id": project_id}),
            ("mind_export", {"project_id": project_id}),
        ):
            error_of(await client.call_tool(tool, arguments), "PROJECT_NOT_FOUND")
        error_of(await client.call_tool("mind_update_issue", {"issue_id": issue_id, "status": "resolved"}),
                 "ENTITY_NOT_FOUND")
        found = await call(client, "mind_get_context", {"query": "stripe webhook signature"})
        warned = await call(client, "mind_check_edges", {"code": "await request.json()"})
        # The same name is bob's own, new project.
        own = (await call(client, "mind_start_session", {"project_name": "secret-app"}))["project"]
        exported = await call(client, "mind_export", {})
    assert found == {"decisions": [], "issues": [], "edges": [], "episodes": []}
    assert warned == {"warnings": []}
    assert own["id"] != project_id and own["current_goal"] == ""
    assert exported["entities"]["issues"] == exported["entities"]["edges"] == 0
    issue = await database_sync_to_async(Issue.objects.get)(pk=issue_id)
    assert issue.status == "open" and await count(Decision) == 0


async def test_read_only_token_reads_but_cannot_write(user, make_token, alice_project, settings, tmp_path):
    settings.ENGRAM_EXPORT_DIR = tmp_path
    token = await database_sync_to_async(make_token)(user, ("read",))
    async with in_process(token, profile="mind") as client:
        for tool, arguments in (("mind_start_session", START_SPAWNER), ("mind_add_edge", CRYPTO_EDGE),
                                ("mind_add_issue", {**VIBEMEMO_ISSUE, "project_id": str(alice_project.pk)})):
            error = error_of(await client.call_tool(tool, arguments), "FORBIDDEN")
            assert error["message"] == "This token lacks the write scope this tool needs."
        found = await call(client, "mind_get_context", {"query": "stripe webhook"})
        warned = await call(client, "mind_check_edges", {"code": "await request.json()"})
        await call(client, "mind_export", {})
    assert found["issues"] and warned["warnings"]
    assert await count(Project) == 1 and await count(SharpEdge) == 1 and await count(Session) == 0


async def test_over_http_the_session_belongs_to_the_mcp_session(live_url, alice_token):
    url = live_url + "/mcp/mind/"
    async with over_http_legacy(url, alice_token) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == list(MIND_TOOLS)
        started = await call(client, "mind_start_session", START_SPAWNER)
        added = await call(client, "mind_add_decision", VIBEMEMO_DECISION)
        assert added["decision"]["project_id"] == started["project"]["id"]
        async with over_http_legacy(url, alice_token) as other:
            error_of(await other.call_tool("mind_add_decision", VIBEMEMO_DECISION), "SESSION_NOT_ACTIVE")
        # The current protocol has no MCP sessions: its clients share the token's own current session.
        async with over_http(url, alice_token) as modern, over_http(url, alice_token) as another_modern:
            error_of(await modern.call_tool("mind_add_issue", VIBEMEMO_ISSUE), "SESSION_NOT_ACTIVE")
            engram = (await call(modern, "mind_start_session", {"project_name": "engram"}))["project"]
            issue = (await call(another_modern, "mind_add_issue", VIBEMEMO_ISSUE))["issue"]
            assert issue["project_id"] == engram["id"]
        ended = await call(client, "mind_end_session", END_SESSION)
    assert ended["session_id"] == started["session_id"]


async def test_over_stdio_the_process_keeps_one_current_session(alice_token):
    parameters = stdio_parameters(alice_token)
    parameters.args[parameters.args.index("thoughtmcp")] = "mind"
    async with Client(parameters) as client:
        started = await call(client, "mind_start_session", START_SPAWNER)
        issue = (await call(client, "mind_add_issue", VIBEMEMO_ISSUE))["issue"]
        ended = await call(client, "mind_end_session", END_SESSION)
    assert issue["project_id"] == started["project"]["id"] and ended["session_id"] == started["session_id"]
