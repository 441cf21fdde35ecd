"""`manage.py serve`: a fresh installation gets exactly one admin; the server and its Celery worker
start and stop together."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from django.conf import settings

from apps.accounts.models import User
from apps.core.exceptions import Conflict
from apps.core.services import ADMIN_USERNAME, admin_ensure
from tests.factories import UserFactory


@pytest.mark.django_db
def test_admin_ensure_creates_one_admin_with_a_random_password_once():
    user, password = admin_ensure()

    assert user.username == ADMIN_USERNAME
    assert user.is_superuser and user.is_staff
    assert password and user.check_password(password)

    again, no_password = admin_ensure()

    assert again == user
    assert no_password is None
    assert User.objects.filter(is_superuser=True).count() == 1


@pytest.mark.django_db
def test_admin_ensure_keeps_an_existing_superuser(staff_user):
    user, password = admin_ensure()

    assert (user, password) == (staff_user, None)
    assert not User.objects.filter(username=ADMIN_USERNAME).exists()


@pytest.mark.django_db
def test_admin_ensure_never_takes_over_an_ordinary_account_named_admin():
    ordinary = UserFactory(username=ADMIN_USERNAME)

    with pytest.raises(Conflict, match="createsuperuser"):
        admin_ensure()

    ordinary.refresh_from_db()
    assert not ordinary.is_superuser


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Output:
    """Collects a child's output in a thread, so that the test can wait for a line without blocking."""

    def __init__(self, stream):
        self.text = ""
        self.closed = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            with self._changed:
                self.text += line
                self._changed.notify_all()
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        with self._changed:
            while (match := re.search(pattern, self.text)) is None:
                remaining = deadline - time.monotonic()
                assert not self.closed, f"the process ended with no {pattern!r} in its output:\n{self.text}"
                assert remaining > 0, f"no {pattern!r} in the output within {timeout} s:\n{self.text}"
                self._changed.wait(remaining)
        return match


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def serve(manage_env, child_database_url):
    """Start `manage.py serve` (with its worker) on a free port; kill whatever is left at the end."""
    started = []

    def start() -> tuple[subprocess.Popen, _Output, int]:
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=settings.BASE_DIR, env=manage_env(DATABASE_URL=child_database_url),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        output = _Output(process.stdout)
        started.append((process, output))
        return process, output, port

    yield start
    for process, output in started:
        if process.poll() is None:
            process.kill()
            process.wait()
        # serve starts its worker in a session of its own: a test that failed before serve stopped it
        # must not leave the worker (and its beat and pool processes) running.
        for worker_pid in re.findall(r"Worker\s+Celery, pid (\d+)", output.text):
            try:
                os.killpg(int(worker_pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.slow
def test_serve_starts_web_and_worker_prints_the_admin_password_and_stops_both_on_sigterm(serve):
    server, output, port = serve()
    password = output.wait_for(r"as admin with password (\S+)", timeout=120).group(1)
    worker_pid = int(output.wait_for(r"Worker\s+Celery, pid (\d+)", timeout=5).group(1))
    output.wait_for(r"Uvicorn running on", timeout=120)
    output.wait_for(r"celery@\S+ ready", timeout=120)

    status, body = _get(f"http://127.0.0.1:{port}/healthz")
    assert status == 200, body
    assert json.loads(body)["status"] == "ok"
    assert _get(f"http://127.0.0.1:{port}/admin/login/")[0] == 200
    assert User.objects.get(username=ADMIN_USERNAME).check_password(password)

    server.send_signal(signal.SIGTERM)

    assert server.wait(timeout=60) == 0, output.text
    with pytest.raises(ProcessLookupError):
        os.kill(worker_pid, 0)
    assert output.text.count(password) == 1


@pytest.mark.slow
def test_serve_stops_with_an_error_when_its_worker_dies(serve):
    server, output, _ = serve()
    worker_pid = int(output.wait_for(r"Worker\s+Celery, pid (\d+)", timeout=120).group(1))
    output.wait_for(r"Uvicorn running on", timeout=120)

    os.kill(worker_pid, signal.SIGKILL)

    assert server.wait(timeout=60) == 1, output.text
    output.wait_for(r"The Celery worker exited with status -9", timeout=5)
