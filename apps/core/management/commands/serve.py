"""`manage.py serve`: everything `make run` needs in one process tree.

Checks the database, migrates, collects static files, makes sure there is an admin account, starts
a Celery worker (with beat) as a child process and serves the ASGI app with uvicorn. Ctrl-C or
SIGTERM stops the web server and the worker; the embedded PostgreSQL keeps running so that the
next start is fast (`make stop` stops it).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import uvicorn
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from apps.core.exceptions import Conflict
from apps.core.services import admin_ensure

WORKER_STOP_SECONDS = 30
# Wildcard addresses are fine to listen on but not to browse to (nor in ALLOWED_HOSTS).
WILDCARD_HOSTS = {"0.0.0.0", "::", ""}


class Command(BaseCommand):
    help = "Migrate, then serve Engram (web, API, MCP) with a Celery worker, until Ctrl-C."
    # handle() runs every check itself, with the database, before it touches anything.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-worker", action="store_true",
            help="Start no Celery worker (when one runs elsewhere, as in docker-compose.yml).",
        )

    def handle(self, *args, host: str, port: int, no_worker: bool, verbosity: int, **options):
        self.check(databases=["default"])
        call_command("migrate", interactive=False, verbosity=verbosity)
        call_command("collectstatic", interactive=False, verbosity=0)
        base_url = f"http://{'127.0.0.1' if host in WILDCARD_HOSTS else host}:{port}"
        login_line = self._login_line(base_url)
        # The checks and migrations left a connection open in this thread; requests use their own.
        connections.close_all()

        worker = None if no_worker else self._start_worker()
        try:
            self._print_banner(base_url, login_line, worker)
            server = uvicorn.Server(
                uvicorn.Config("config.asgi:application", host=host, port=port, lifespan="on", log_level="info")
            )
            if worker is not None:
                threading.Thread(target=_stop_server_when_worker_exits, args=(worker, server), daemon=True).start()
            # uvicorn catches SIGINT/SIGTERM while it serves and re-raises them once it has stopped;
            # these handlers take that second delivery, so that shutdown goes on to stop the worker.
            signal.signal(signal.SIGINT, _shutting_down)
            signal.signal(signal.SIGTERM, _shutting_down)
            server.run()
            if worker is not None and worker.poll() is not None:
                raise CommandError(f"The Celery worker exited with status {worker.returncode}: see its output above.")
            if not server.started:
                raise CommandError("The web server did not start: see the error above.")
        finally:
            if worker is not None:
                self._stop_worker(worker)

    def _login_line(self, base_url: str) -> str:
        try:
            user, password = admin_ensure()
        except Conflict as exc:
            return self.style.WARNING(exc.message)
        if password is None:
            return f"Log in at {base_url}/ with your existing account ({user.get_username()} is a superuser)."
        return (
            f"Log in at {base_url}/ and {base_url}/admin/ as {user.get_username()} with password "
            + self.style.WARNING(password)
            + " (shown only this once: change it in the admin)."
        )

    def _start_worker(self) -> subprocess.Popen:
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker", "-B",
            "--loglevel=INFO", "--concurrency=1",
            "--schedule", str(settings.VAR_DIR / "celerybeat-schedule"),
        ]
        # A session of its own keeps a terminal's Ctrl-C away from the worker: this command stops
        # it with exactly one SIGTERM (a second signal would make Celery abandon running tasks).
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=os.environ.copy(), start_new_session=True)

    def _stop_worker(self, worker: subprocess.Popen) -> None:
        if worker.poll() is not None:
            return
        self.stdout.write("Stopping the Celery worker...")
        worker.terminate()
        try:
            worker.wait(timeout=WORKER_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.stderr.write(f"The Celery worker did not stop within {WORKER_STOP_SECONDS} s: killing it.")
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()

    def _print_banner(self, base_url: str, login_line: str, worker: subprocess.Popen | None) -> None:
        database = "embedded PostgreSQL under var/" if settings.EMBEDDED_DATABASE else "PostgreSQL at DATABASE_URL"
        lines = [
            "",
            self.style.SUCCESS("Engram is starting."),
            f"  Dashboard   {base_url}/",
            f"  Admin       {base_url}/admin/",
            f"  API docs    {base_url}/api/docs/",
            f"  MCP         {base_url}/mcp/",
            f"  Health      {base_url}/healthz",
            f"  Database    {database}",
            f"  Worker      {'none (--no-worker)' if worker is None else f'Celery, pid {worker.pid}'}",
            "",
            login_line,
            "Stop with Ctrl-C.",
            "",
        ]
        self.stdout.write("\n".join(lines))


def _stop_server_when_worker_exits(worker: subprocess.Popen, server: uvicorn.Server) -> None:
    # Serving on without the worker would hide the failure: background work would silently stop.
    worker.wait()
    server.should_exit = True


def _shutting_down(signum, frame) -> None:
    """Take a stop signal that uvicorn has already acted on."""
