"""A PostgreSQL database backend that starts the embedded server (apps/core/embedded_postgres.py)
when a process first connects and finds it down: no command has to remember to start it, and
merely loading the settings starts nothing. Pool failures are explained as in apps.core.postgres_db."""
import os

from django.conf import settings

from apps.core.embedded_postgres import ensure_running, status
from apps.core.postgres_db import base

# The server process this process last found running: while it lives, a connection needs no other check
# (reading pgdata's pid file and preparing the runtime dir on every pooled connection cost ~3% of a store).
_server_pid: int | None = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process (the server may run as its own user): it exists
        return True
    return True


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        global _server_pid
        if _server_pid is None or not _alive(_server_pid):
            ensure_running(settings.VAR_DIR)
            info = status(settings.VAR_DIR)
            _server_pid = info.pid if info is not None else None
        try:
            return super().get_new_connection(conn_params)
        except Exception:
            _server_pid = None  # the next connection checks the server again (it may have stopped, its pid reused)
            raise
