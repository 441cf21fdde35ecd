"""Model mode of the eight reasoning services.

- ask_json's parsing, and which model answers (the configured endpoint first, as chat; else the client's model).
- The configured endpoint: a real OpenAI-compatible HTTP server in the test (tests/reasoning/model_server.py). Every
  tool's prompt carries its problem and the caller's evidence, the answer is used, method "llm"; garbage answers
  give the deterministic result with "modelError"; a failing endpoint is "llm_unavailable".
- The client's own model: the SDK's client, with a sampling callback, against a small MCPServer whose tools run the
  services through run_with_client_model, over the handshake-era protocol (requests during the call, from the
  services' threads) and 2026-07-28 (InputRequiredResult rounds: think_parallel's four streams in one round).
"""
import json
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp.client import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CreateMessageResult, ErrorData, InputRequiredResult, TextContent

from apps.chat.llm import LLMUnavailable
from apps.reasoning.analysis.llm import EndpointBackend, ModelAnswerInvalid, ask_json, resolve_backend
from apps.mcp.sampling import run_with_client_model
from apps.reasoning.services.analysis import (
    reasoning_analyze, reasoning_detect_bias, reasoning_think, reasoning_think_parallel,
)
from tests.reasoning.model_server import (  # noqa: F401
    MODEL, TOOL_ANSWERS, Canned, knowledge, model_server, no_model, prompt_of, reasoning_answer,
)
from tests.reasoning.test_analysis_services import TOOLS

BIASED = "All the data I've seen supports my hypothesis that the payment service times out because of the pool."
PAYMENT = "Why does the payment service time out under load?"


@pytest.mark.parametrize(("answer", "expected"), [
    ('{"a": 1}', {"a": 1}),
    ('Sure! Here it is:\n```json\n{"a": {"b": [1, 2]}}\n```\nHope that helps.', {"a": {"b": [1, 2]}}),
    ('Thinking {not json} ... final: {"a": "x}"} trailing', {"a": "x}"}),
    ('```\n[1, 2]\n```\n{"after": true}', {"after": True}),
])
def test_ask_json_finds_the_first_object(answer, expected):
    assert ask_json(Canned(answer), system="s", prompt="p", max_tokens=10, key="k") == expected


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty"), ("   ", "empty"), ("[1, 2, 3]", "no JSON object"), ("I think the answer is 42.", "no JSON object"),
])
def test_ask_json_rejects_answers_without_an_object(answer, reason):
    with pytest.raises(ModelAnswerInvalid) as raised:
        ask_json(Canned(answer), system="s", prompt="p", max_tokens=10, key="k")
    assert reason in raised.value.message and raised.value.code == "model_answer_invalid"


def test_the_configured_endpoint_comes_before_the_clients_model(settings):
    client = Canned("{}", method="sampling")
    settings.ENGRAM_LLM_BASE_URL = None
    assert resolve_backend(client) is client and resolve_backend(None) is None
    settings.ENGRAM_LLM_BASE_URL, settings.ENGRAM_LLM_MODEL = "http://127.0.0.1:9/v1", "llama3.2"
    assert resolve_backend(client) == EndpointBackend(name="llama3.2")


def _subject(arguments: dict) -> str:
    return arguments.get("problem") or arguments.get("reasoning") or arguments.get("text")


@pytest.mark.django_db
@pytest.mark.parametrize("tool", list(TOOLS))
def test_each_tool_asks_the_configured_model_with_its_evidence(tool, user, knowledge, model_server):  # noqa: F811
    service, arguments, keys = TOOLS[tool]
    data = service(actor=user, **arguments)
    assert data["method"] == "llm" and "modelError" not in data, data.get("modelError")
    assert keys <= set(data)
    assert model_server.requests
    for request in model_server.requests:
        prompt = prompt_of(request)
        assert request["model"] == MODEL
        assert _subject(arguments) in prompt
        assert str(knowledge.edge_node.pk) in prompt and "Payment service connection pool exhaustion" in prompt
    answered = json.dumps(data)
    if tool == "detect_bias":
        assert data["biases"][0]["correction"] == TOOL_ANSWERS["detect cognitive biases"]["biases"][0]["correction"]
    elif tool == "detect_emotion":
        assert data["circumplex"]["valence"] == 0.6 and data["discrete"]["primary"] == "joy"
    elif tool in ("assess_confidence", "analyze_reasoning"):
        assert "The model says" in answered
    else:
        assert "The model" in answered


@pytest.mark.django_db
def test_think_parallel_asks_once_per_stream(user, knowledge, model_server):  # noqa: F811
    data = reasoning_think_parallel(actor=user, problem="Why does the payment service time out under load?")
    assert data["method"] == "llm" and len(model_server.requests) == 4
    systems = {request["messages"][0]["content"].split(" stream ")[0] for request in model_server.requests}
    assert len(systems) == 4


@pytest.mark.django_db
def test_analyze_reasoning_asks_for_each_part(user, knowledge, model_server):  # noqa: F811
    data = reasoning_analyze(actor=user, reasoning=TOOLS["analyze_reasoning"][1]["reasoning"], include_emotion=True)
    assert [data[part]["method"] for part in ("confidence", "emotion")] == ["llm", "llm"]
    assert data["quality"] == TOOL_ANSWERS["review the quality"]["quality"]
    assert len(model_server.requests) == 4


@pytest.mark.django_db
@pytest.mark.parametrize("tool", list(TOOLS))
def test_garbage_answers_fall_back_to_deterministic(tool, user, knowledge, model_server):  # noqa: F811
    model_server.answer = lambda request: "I'd rather not answer in JSON today."
    service, arguments, keys = TOOLS[tool]
    data = service(actor=user, **arguments)
    assert data["method"] == "deterministic" and "no JSON object" in data["modelError"]
    assert keys <= set(data) and data["memories"]


@pytest.mark.django_db
@pytest.mark.parametrize("tool", list(TOOLS))
def test_a_failing_endpoint_is_llm_unavailable(tool, user, model_server):  # noqa: F811
    model_server.status = 503
    service, arguments, _ = TOOLS[tool]
    with pytest.raises(LLMUnavailable) as raised:
        service(actor=user, **arguments)
    assert raised.value.code == "llm_unavailable" and model_server.base_url in raised.value.message


@pytest.mark.django_db
def test_an_unreachable_endpoint_is_llm_unavailable(user, settings):
    settings.ENGRAM_LLM_BASE_URL = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    with pytest.raises(LLMUnavailable) as raised:
        reasoning_detect_bias(actor=user, reasoning=BIASED)
    assert "cannot connect" in raised.value.message and "http://127.0.0.1:9/v1" in raised.value.message


# The client's own model, through MCP sampling.

def reasoning_server(user, rounds: list[str]) -> MCPServer:
    """Three tools over the services, as the thoughtmcp profile's adapters call them; ``rounds`` logs each call."""
    server = MCPServer(name="reasoning-sampling-test")

    async def run(name: str, ctx: Context, call) -> dict[str, Any] | InputRequiredResult:
        rounds.append(name)
        return await run_with_client_model(ctx, call)

    @server.tool()
    async def detect_bias(reasoning: str, ctx: Context) -> dict[str, Any] | InputRequiredResult:
        return await run("detect_bias", ctx, lambda model: reasoning_detect_bias(actor=user, reasoning=reasoning,
                                                                                 model=model))

    @server.tool()
    async def think_parallel(problem: str, ctx: Context) -> dict[str, Any] | InputRequiredResult:
        return await run("think_parallel", ctx, lambda model: reasoning_think_parallel(actor=user, problem=problem,
                                                                                       model=model))

    @server.tool()
    async def analyze_reasoning(reasoning: str, ctx: Context) -> dict[str, Any] | InputRequiredResult:
        return await run("analyze_reasoning", ctx, lambda model: reasoning_analyze(
            actor=user, reasoning=reasoning, include_emotion=True, model=model))

    @server.tool()
    async def think(problem: str, ctx: Context) -> dict[str, Any] | InputRequiredResult:
        return await run("think", ctx, lambda model: reasoning_think(actor=user, problem=problem, mode="creative",
                                                                     model=model))

    return server


def sampling_callback(asked: list, *, decline: bool = False):
    async def sample(context, params):
        asked.append(params)
        if decline:
            return ErrorData(code=-1, message="The user declined to sample")
        return CreateMessageResult(role="assistant", model="client-llm",
                                   content=TextContent(type="text", text=reasoning_answer(params.system_prompt)))
    return sample


@asynccontextmanager
async def sampling_client(user, mode: str = "auto", *, decline: bool = False):
    """The SDK's client over the test server, sampling with reasoning_answer; yields (client, asked, rounds)."""
    asked, rounds = [], []
    async with Client(reasoning_server(user, rounds), mode=mode,
                      sampling_callback=sampling_callback(asked, decline=decline)) as client:
        yield client, asked, rounds


async def call(client: Client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False, result
    return json.loads(result.content[0].text)


PROTOCOLS = ["legacy", "auto"]  # handshake-era, and 2026-07-28 (the SDK client's default)

sampling = pytest.mark.django_db(transaction=True)


@sampling
@pytest.mark.parametrize("mode", PROTOCOLS)
async def test_detect_bias_samples_the_clients_model(mode, user, knowledge, no_model):  # noqa: F811
    async with sampling_client(user, mode) as (client, asked, rounds):
        data = await call(client, "detect_bias", {"reasoning": BIASED})
    assert data["method"] == "sampling" and "modelError" not in data
    assert data["biases"][0]["correction"] == "Seek out data that could refute the hypothesis"
    [params] = asked
    prompt = params.messages[0].content.text
    assert BIASED in prompt and str(knowledge.edge_node.pk) in prompt
    assert "cognitive biases" in params.system_prompt
    assert rounds == (["detect_bias"] if mode == "legacy" else ["detect_bias", "detect_bias"])


@sampling
@pytest.mark.parametrize("mode", PROTOCOLS)
async def test_think_parallel_asks_for_its_four_streams(mode, user, knowledge, no_model):  # noqa: F811
    async with sampling_client(user, mode) as (client, asked, rounds):
        data = await call(client, "think_parallel", {"problem": PAYMENT})
    assert data["method"] == "sampling", data.get("modelError")
    assert {name: stream["status"] for name, stream in data["streams"].items()} == dict.fromkeys(
        ("analytical", "creative", "critical", "synthetic"), "completed")
    assert len(asked) == 4 and len({params.system_prompt for params in asked}) == 4
    assert all(PAYMENT in params.messages[0].content.text for params in asked)
    # 2026-07-28: one round asks for all four streams at once, the retry answers.
    assert len(rounds) == (1 if mode == "legacy" else 2)


@sampling
@pytest.mark.parametrize("mode", PROTOCOLS)
async def test_analyze_reasoning_carries_earlier_answers_across_rounds(mode, user, knowledge, no_model):  # noqa: F811
    async with sampling_client(user, mode) as (client, asked, rounds):
        data = await call(client, "analyze_reasoning", {"reasoning": BIASED})
    assert data["method"] == "sampling"
    assert [data["confidence"]["method"], data["emotion"]["method"]] == ["sampling", "sampling"]
    assert data["biases"][0]["type"] == "confirmation"
    assert len(asked) == 4  # quality, confidence, bias, emotion: each asked once, however many rounds
    assert len(rounds) == (1 if mode == "legacy" else 5)


@sampling
async def test_a_client_that_declines_gives_the_deterministic_result(user, no_model):
    async with sampling_client(user, "legacy", decline=True) as (client, asked, _):
        data = await call(client, "think", {"problem": PAYMENT})
    assert len(asked) == 1
    assert data["method"] == "deterministic" and "The client did not sample" in data["modelError"]


@sampling
@pytest.mark.parametrize("mode", PROTOCOLS)
async def test_without_sampling_the_analysis_is_deterministic(mode, user, no_model):
    rounds = []
    async with Client(reasoning_server(user, rounds), mode=mode) as client:
        data = await call(client, "detect_bias", {"reasoning": BIASED})
    assert data["method"] == "deterministic" and rounds == ["detect_bias"]


@sampling
async def test_the_configured_endpoint_wins_over_the_clients_model(user, model_server):  # noqa: F811
    async with sampling_client(user) as (client, asked, _):
        data = await call(client, "detect_bias", {"reasoning": BIASED})
    assert data["method"] == "llm" and asked == [] and len(model_server.requests) == 1
