"""ThoughtMCP's eight reasoning and metacognitive tools through the SDK's own client: every seed Example Request
end to end without a model (deterministic), with the seed's data keys and componentsUsed; the caller's memories
as evidence (and never another user's); bad input in the seed's envelope; the client's own model through
sampling, in both protocol eras."""
from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from tests.mcp.support import (
    REASONING_TOOLS,
    envelope,
    in_process,
    sampling_client,
    seed_json_blocks,
    seed_sections,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

SECTIONS = seed_sections()
EXAMPLES = [(tool, qualifier, example) for tool in REASONING_TOOLS
            for qualifier, example in seed_json_blocks(SECTIONS[tool], "Example Request").items()]


def seed_response(tool: str, qualifier: str) -> dict:
    responses = seed_json_blocks(SECTIONS[tool], "Success Response")
    return responses.get(qualifier) or next(iter(responses.values()))


@pytest.fixture(autouse=True)
def no_configured_model(settings):
    settings.ENGRAM_LLM_BASE_URL = None


def success_of(result) -> dict:
    payload = envelope(result)
    assert payload["success"] is True, payload
    return payload


@pytest.mark.parametrize(("tool", "qualifier", "example"), EXAMPLES,
                         ids=[f"{tool}-{qualifier or 'example'}" for tool, qualifier, _ in EXAMPLES])
async def test_seed_examples_run_deterministically(alice_token, tool, qualifier, example):
    async with in_process(alice_token) as client:
        payload = success_of(await client.call_tool(tool, example))
    data, seed = payload["data"], seed_response(tool, qualifier)
    assert set(seed["data"]) - {"processingTime", "status"} <= set(data), tool
    assert data["method"] == "deterministic" and isinstance(data["memories"], list)
    if "metadata" in seed:
        assert payload["metadata"]["componentsUsed"] == seed["metadata"]["componentsUsed"], tool
    assert payload["metadata"]["componentsUsed"]


async def test_answers_follow_the_input(alice_token):
    """Not canned: different problems and texts give different answers."""
    async with in_process(alice_token) as client:
        calm = success_of(await client.call_tool("detect_emotion", {"text": "I am grateful and calm today."}))
        furious = success_of(await client.call_tool("detect_emotion", {
            "text": "I am furious! This outage is outrageous and I hate it!"}))
        web = success_of(await client.call_tool("decompose_problem", {"problem": "Build a scalable web application"}))
        etl = success_of(await client.call_tool("decompose_problem", {
            "problem": "Migrate the nightly billing ETL from cron to Airflow", "maxDepth": 2}))
    assert calm["data"]["circumplex"]["valence"] > furious["data"]["circumplex"]["valence"]
    assert calm["data"]["discrete"]["primary"] != furious["data"]["discrete"]["primary"]
    assert web["data"]["problem"] != etl["data"]["problem"] and etl["data"]["maxDepth"] == 2
    assert all(item["depth"] <= 2 for item in etl["data"]["subProblems"])


@pytest.mark.parametrize(("arguments", "components"), [
    ({"text": "What a wonderful surprise!"}, ["emotionAnalyzer", "discreteEmotionClassifier"]),
    ({"text": "What a wonderful surprise!", "includeDiscrete": False}, ["emotionAnalyzer"]),
])
async def test_detect_emotion_components_follow_include_discrete(alice_token, arguments, components):
    async with in_process(alice_token) as client:
        payload = success_of(await client.call_tool("detect_emotion", arguments))
    assert payload["metadata"]["componentsUsed"] == components
    assert ("discrete" in payload["data"]) is (len(components) == 2)


async def test_analyze_reasoning_components_follow_its_options(alice_token):
    async with in_process(alice_token) as client:
        everything = success_of(await client.call_tool("analyze_reasoning", {
            "reasoning": "We should ship because the tests pass.", "includeEmotion": True}))
        bare = success_of(await client.call_tool("analyze_reasoning", {
            "reasoning": "We should ship because the tests pass.", "includeConfidence": False, "includeBias": False}))
    assert everything["metadata"]["componentsUsed"] == ["confidenceAssessor", "biasDetector", "emotionAnalyzer"]
    assert {"confidence", "biases", "emotion"} <= set(everything["data"])
    assert bare["metadata"]["componentsUsed"] == ["reasoningAnalyzer"]
    assert not {"confidence", "biases", "emotion"} & set(bare["data"])


async def test_the_callers_memories_are_evidence_and_only_theirs(user, other_user, alice_token, store):
    mine = await database_sync_to_async(store)(
        user, "The orders table query is slow because the customer_id column has no index.")
    theirs = await database_sync_to_async(store)(
        other_user, "The orders table query is slow because of the customer_id index bloat.")
    async with in_process(alice_token) as client:
        payload = success_of(await client.call_tool("think", {
            "problem": "Why is the orders table query slow on customer_id?", "mode": "analytical"}))
    found = {item["id"] for item in payload["data"]["memories"]}
    assert str(mine.pk) in found and str(theirs.pk) not in found


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("think", {"problem": "Why?", "mode": "sideways"}, "Invalid mode"),
    ("think", {"mode": "analytical"}, "Missing required parameter: problem"),
    ("think_parallel", {"problem": "Why?", "timeout": 10}, "Invalid timeout"),
    ("decompose_problem", {"problem": "Build it", "maxDepth": 9}, "Invalid maxDepth"),
    ("decompose_problem", {"problem": "Build it", "context": {"goals": ["x"]}}, "Unknown parameter: context.goals"),
    ("analyze_systematically", {"problem": "Why?", "preferredFramework": "astrology"}, "Invalid preferredFramework"),
    ("assess_confidence", {"reasoning": "Fine", "evidence": "one"}, "Invalid evidence"),
    ("detect_bias", {"reasoning": "   "}, "reasoning must be a non-empty text"),
    ("detect_emotion", {"text": "Hi", "userId": "alice"}, "Unknown parameter: userId"),
])
async def test_bad_input_is_the_seeds_error_envelope(alice_token, tool, arguments, message):
    async with in_process(alice_token) as client:
        payload = envelope(await client.call_tool(tool, arguments))
    assert payload["success"] is False and payload["error"].startswith(message), payload
    assert payload["suggestion"] and "Traceback" not in payload["error"]


@pytest.fixture
def write_only_token(user, make_token):
    return make_token(user, scopes=("write",))


async def test_a_token_without_the_read_scope_is_refused(write_only_token):
    async with in_process(write_only_token) as client:
        payload = envelope(await client.call_tool("detect_bias", {"reasoning": "Everyone agrees, so it is right."}))
    assert payload["success"] is False and "read scope" in payload["error"]


EMOTION_ANSWER = {
    "circumplex": {"valence": 0.9, "arousal": 0.8, "dominance": 0.6, "confidence": 0.9},
    "discrete": {"emotions": [{"emotion": "joy", "score": 0.92}, {"emotion": "pride", "score": 0.4}],
                 "confidence": 0.88},
}


# legacy: the request reaches the client while the call runs; auto (2026-07-28): an InputRequiredResult round.
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_clients_model_answers_through_sampling(alice_token, mode):
    text = "I'm really excited about this new project! It's going to be amazing!"
    async with sampling_client(alice_token, f"```json\n{json.dumps(EMOTION_ANSWER)}\n```", mode,
                                     "thoughtmcp") as (client, asked):
        payload = success_of(await client.call_tool("detect_emotion", {"text": text, "context": "Work communication"}))
    data = payload["data"]
    assert data["method"] == "sampling" and "modelError" not in data
    assert data["circumplex"]["valence"] == 0.9 and data["discrete"]["primary"] == "joy"
    [params] = asked
    assert text in params.messages[-1].content.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unusable_client_answer_falls_back_and_says_why(alice_token, mode):
    async with sampling_client(alice_token, "I would rather not say.", mode, "thoughtmcp") as (client, asked):
        payload = success_of(await client.call_tool("detect_emotion", {"text": "This is wonderful news!"}))
    assert payload["data"]["method"] == "deterministic" and "JSON" in payload["data"]["modelError"]
    assert len(asked) == 1


STREAM_ANSWER = {"conclusion": "Ship retention work first", "findings": [
    {"content": "Retention features return more than a mobile launch this quarter", "role": "recommendation",
     "topic": "retention", "importance": 0.9, "confidence": 0.8}]}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_think_parallel_asks_the_clients_model_once_per_stream(alice_token, mode):
    async with sampling_client(alice_token, json.dumps(STREAM_ANSWER), mode, "thoughtmcp") as (client, asked):
        payload = success_of(await client.call_tool("think_parallel", {
            "problem": "How should we approach the product roadmap for Q1?", "timeout": 30000}))
    data = payload["data"]
    assert data["method"] == "sampling"
    assert "Retention features return more than a mobile launch this quarter" in json.dumps(data)
    streams = sorted(next(name for name in ("analytical", "creative", "critical", "synthetic")
                          if f"the {name} stream" in params.system_prompt) for params in asked)
    assert streams == ["analytical", "creative", "critical", "synthetic"]
