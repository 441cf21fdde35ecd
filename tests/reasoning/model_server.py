"""A small OpenAI-compatible model server for the reasoning tests, answering each request with what the test says.

It stands in for a remote model (Ollama, vLLM, OpenAI): a real HTTP server on the loopback interface, in a thread of
the test process, that records each chat completion request and answers with ``answer(request)`` (the assistant's
text, usually JSON for the tool the request is about). Engram reaches it over HTTP as it would a real endpoint.
It also holds the memory graph the analysis tests reason over (``knowledge``). Tests import the fixtures:
``from tests.reasoning.model_server import knowledge, model_server  # noqa: F401``.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest

from apps.projects.services import decision_add, edge_add, project_create
from tests.chat.conftest import completion_handler, serving_endpoint

MODEL = "fake-reasoner-1"


@dataclass
class Canned:
    """A backend object answering every request with ``answer``, for unit tests of answer parsing only (the model
    over HTTP is the server below)."""

    answer: str
    method: str = "llm"
    name: str = "canned"
    prompts: list[str] = field(default_factory=list)

    def complete(self, *, system, prompt, max_tokens, key):
        self.prompts.append(prompt)
        return self.answer


def prompt_of(request: dict) -> str:
    """Everything a request said to the model (system and user messages), as one text."""
    return "\n".join(message["content"] for message in request["messages"])


def system_of(request: dict) -> str:
    return next(message["content"] for message in request["messages"] if message["role"] == "system")


# A valid answer for each reasoning tool, told apart by its system prompt. The analyses of think,
# analyze_systematically, think_parallel and decompose_problem read their keys from ANALYSIS_ANSWER.
TOOL_ANSWERS = {
    "detect cognitive biases": {"biases": [
        {"type": "confirmation", "severity": 0.7, "confidence": 0.8, "evidence": ["only confirming data was read"],
         "correction": "Seek out data that could refute the hypothesis"}]},
    "read the emotion": {"circumplex": {"valence": 0.6, "arousal": 0.5, "dominance": 0.2, "confidence": 0.8},
                         "discrete": {"emotions": [{"emotion": "joy", "score": 0.75}], "confidence": 0.7}},
    "how much confidence": {"dimensions": {"evidenceQuality": 0.6, "reasoningCoherence": 0.7, "completeness": 0.5,
                                           "uncertaintyLevel": 0.3, "biasFreedom": 0.9},
                            "warnings": ["The model says: pool size was never measured"],
                            "recommendations": ["The model says: measure pool waits"]},
    "review the quality": {"quality": {"coherence": 0.7, "completeness": 0.6, "logicalValidity": 0.8,
                                       "evidenceSupport": 0.5},
                           "strengths": ["The model says: clear cause"], "weaknesses": ["The model says: no data"],
                           "recommendations": ["The model says: collect pool metrics"]},
}
ANALYSIS_ANSWER = {
    "conclusion": "The model concludes: grow the connection pool",
    "reasoning": ["The model reasons: timeouts follow pool exhaustion"],
    "insights": ["The model notes: the pool has only 10 connections"],
    "steps": ["Define: timeouts under load", "Analyse: pool exhaustion"], "confidence": 0.7,
    "findings": [{"content": "The model finds: pool exhaustion causes the timeouts", "role": "insight",
                  "topic": "pool", "importance": 0.8, "confidence": 0.7}],
    "subProblems": [{"id": "a", "description": "The model splits off: measure pool usage under load", "parent": None},
                    {"id": "b", "description": "The model splits off: resize the connection pool", "parent": None}],
    "dependencies": [{"from": "a", "to": "b", "type": "sequential"}],
}


def reasoning_answer(system: str) -> str:
    """The valid JSON answer to a reasoning tool's request, by its system prompt."""
    return json.dumps(next((reply for needle, reply in TOOL_ANSWERS.items() if needle in system), ANALYSIS_ANSWER))


@dataclass
class ModelServer:
    """What the model received (``requests``), and how it answers: ``answer(request)`` is the assistant text;
    ``status`` other than 200 answers that HTTP status instead. By default: a valid answer for each tool."""

    base_url: str
    answer: Callable[[dict], str] = lambda request: reasoning_answer(system_of(request))
    requests: list[dict] = field(default_factory=list)
    status: int = 200
    _lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    """Chat's fake model handler (its replies and quiet log), answering each request by ``server.answer``."""
    class Handler(completion_handler(server)):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with server._lock:
                server.requests.append(request)
            if self.path != "/v1/chat/completions" or server.status != 200:
                self._send(server.status if server.status != 200 else 404, {"error": {"message": "unavailable"}})
                return
            self._send(200, {
                "id": "chatcmpl-r", "object": "chat.completion", "model": request["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": server.answer(request)},
                             "finish_reason": "stop"}],
            })

    return Handler


@pytest.fixture
def model_server(settings):
    """A running model server, configured as Engram's endpoint."""
    with serving_endpoint(settings, _handler, ModelServer, model=MODEL, api_key=None) as server:
        yield server


@pytest.fixture
def no_model(settings):
    """No endpoint configured, whatever the environment says."""
    settings.ENGRAM_LLM_BASE_URL = None


@dataclass(frozen=True)
class Knowledge:
    """What alice's memory graph knows about the payment service (and one unrelated memory), and bob's secret."""

    memory: object
    unrelated: object
    thought: object
    decision_node: object
    edge_node: object
    bobs: object


@pytest.fixture
def knowledge(user, other_user, store):
    """alice: a memory, a thought, a Mind decision and a sharp edge about the payment service timing out under
    load, and a gardening memory; bob: a memory about his own payment service."""
    project = project_create(actor=user, name="checkout", current_goal="Keep payments fast under load")
    decision = decision_add(
        actor=user, project_id=project.pk, title="Use PgBouncer for the payment service database connections",
        reasoning="Connection pool exhaustion made the payment service time out under load.").decision
    edge = edge_add(actor=user, project_id=project.pk, title="Payment service connection pool exhaustion",
                    description="Requests to the payment service hang and time out when every pool connection is busy.",
                    workaround="Raise the pool size and set a pool checkout timeout.")
    decision.refresh_from_db()
    edge.refresh_from_db()
    return Knowledge(
        memory=store(user, "The payment service times out under heavy load because its database connection pool "
                           "has only 10 connections."),
        unrelated=store(user, "My favourite gardening task in spring is planting tomatoes."),
        thought=store(user, "Thought 2: maybe the payment service timeouts come from slow queries, not the pool.",
                      kind="thought"),
        decision_node=decision.node,
        edge_node=edge.node,
        bobs=store(other_user, "Bob's payment service times out under load because of a bad load balancer rule."),
    )
