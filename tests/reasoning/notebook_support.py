"""Fixtures of the notebook tests (import them into a test module).

- ``notebook_dir``: a fresh ENGRAM_NOTEBOOK_DIR for the test, under the test run's notebook folder (in /tmp,
  which the sandbox's unprivileged users can pass through; pytest's tmp_path is private to root).
- ``esbuild``: the esbuild binary for TypeScript cells: the checkout's (``make frontend``) when it is built,
  else the same pinned version installed once per machine with npm into a cache folder in /tmp.
- ``loopback_server``: a real HTTP server on 127.0.0.1 that records requests, for the network test.
"""
import json
import os
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from tests.optional import npm_registry_missing


@pytest.fixture
def notebook_dir(settings):
    base = Path(django_settings.ENGRAM_NOTEBOOK_DIR)
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    folder = Path(tempfile.mkdtemp(dir=base, prefix="t-"))
    folder.chmod(0o711)
    settings.ENGRAM_NOTEBOOK_DIR = folder
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _pinned_esbuild_version() -> str:
    package = json.loads((Path(django_settings.BASE_DIR) / "frontend" / "package.json").read_text())
    return package["devDependencies"]["esbuild"]


@pytest.fixture(scope="session")
def esbuild_binary() -> str:
    built = Path(django_settings.BASE_DIR) / "frontend" / "node_modules" / ".bin" / "esbuild"
    if os.access(built, os.X_OK):
        return str(built)
    version = _pinned_esbuild_version()
    cache = Path(tempfile.gettempdir()) / f"engram-test-esbuild-{version}"
    binary = cache / "node_modules" / ".bin" / "esbuild"
    if not os.access(binary, os.X_OK):
        if (reason := npm_registry_missing()) is not None:
            # `make test` builds the frontend first, so only a bare pytest run gets here: say how to mend it.
            pytest.fail(f"{reason}, and esbuild is neither built nor cached in {cache}: run `make frontend`, "
                        "then run the tests again.")
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(cache),
                        f"esbuild@{version}"], check=True, capture_output=True, timeout=300)
    cache.chmod(0o755)  # the notebooks' unprivileged users run it
    return str(binary)


@pytest.fixture
def esbuild(settings, esbuild_binary):
    settings.ENGRAM_NOTEBOOK_ESBUILD = esbuild_binary
    return esbuild_binary


class LoopbackServer:
    def __init__(self):
        self.requests: list[str] = []
        recorded = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                recorded.append(self.path)
                body = b"reached"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):  # keep the test output quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def loopback_server():
    server = LoopbackServer()
    yield server
    server.close()
