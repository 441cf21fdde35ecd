"""Fixtures of the chat tests: memories in alice's cube, and a small OpenAI-compatible model server.

The server stands in for a remote model (Ollama, vLLM, OpenAI): it is a real HTTP server on the loopback
interface, in a thread of the test process, that records each request and answers a chat completion, or, for a
request with ``stream: true``, streams it as OpenAI does (``data: {chunk}`` lines whose
``choices[0].delta.content`` carry the text, then ``data: [DONE]``). It is not part of Engram; Engram reaches it
over HTTP exactly as it would a real endpoint.
"""
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apps.cubes.services import cube_register

FAKE_MODEL = "fake-llm-1"
FAKE_ANSWER = "Alice's cat is named Miso [1]."
FAKE_PIECES = ["Alice's cat ", "is named ", "Miso [1]."]  # FAKE_ANSWER as the stream sends it


@dataclass
class FakeModelServer:
    """What the fake model received, and how it answers: after ``delay`` seconds, with ``status`` and ``body``
    (None: a completion of FAKE_ANSWER with usage). A streamed answer sends ``pieces`` one chunk each, waiting
    after the first for ``hold`` when it is set (the test releases it once it has seen the first piece arrive),
    then ``data: [DONE]``; with ``break_after_first`` it closes the connection after the first piece instead."""

    base_url: str
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    status: int = 200
    body: dict | None = None
    delay: float = 0.0
    pieces: list[str] = field(default_factory=lambda: list(FAKE_PIECES))
    hold: threading.Event | None = None
    break_after_first: bool = False
    first_piece_sent: threading.Event = field(default_factory=threading.Event)


def completion_handler(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            server.requests.append(request)
            server.headers.append(dict(self.headers))
            time.sleep(server.delay)
            if request.get("stream") and server.status == 200 and server.body is None:
                self._stream(request)
                return
            body = server.body or {
                "id": "chatcmpl-1", "object": "chat.completion", "model": request["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": FAKE_ANSWER},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
            }
            self._send(server.status, body)

        def _stream(self, request: dict) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            for index, piece in enumerate(server.pieces):
                chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": request["model"],
                         "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                if index == 0:
                    server.first_piece_sent.set()
                    if server.break_after_first:
                        return
                    if server.hold is not None:
                        server.hold.wait(timeout=30)
            self.wfile.write(b"data: [DONE]\n\n")

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):  # keep the test output quiet
            pass

    return Handler


@contextmanager
def serving_endpoint(settings, make_handler, make_state, *, model: str, api_key: str | None):
    """Serves ``make_handler(state)`` on a loopback port in a thread and configures it as Engram's model endpoint;
    yields the state (built by ``make_state(base_url=...)``), through which the test sees and steers the server."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    state = make_state(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    httpd.RequestHandlerClass = make_handler(state)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    settings.ENGRAM_LLM_BASE_URL = state.base_url
    settings.ENGRAM_LLM_MODEL = model
    settings.ENGRAM_LLM_API_KEY = api_key
    settings.ENGRAM_LLM_TIMEOUT_SECONDS = 10
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def llm_server(settings):
    """A running fake model server, configured as Engram's endpoint (with an API key)."""
    with serving_endpoint(settings, completion_handler, FakeModelServer, model=FAKE_MODEL, api_key="sk-test") as fake:
        yield fake


@pytest.fixture
def no_llm(settings):
    """No endpoint configured, whatever the environment says."""
    settings.ENGRAM_LLM_BASE_URL = None


@pytest.fixture
def pets_cube(user):
    return cube_register(actor=user, cube_id="alice-pets", name="Pets")


@pytest.fixture
def pet_memories(user, store, pets_cube):
    """Three memories in alice's cube "alice-pets"; the first answers "what is my cat called?"."""
    return [
        store(user, "My cat is named Miso. She is a grey tabby and sleeps all day.", cube_id=pets_cube.pk),
        store(user, "The vet appointment for the dog is on Tuesday at noon.", cube_id=pets_cube.pk),
        store(user, "I prefer green tea over coffee in the morning.", cube_id=pets_cube.pk),
    ]
