"""A PostgreSQL database backend that starts the embedded server (apps/core/embedded_postgres.py)
when a process first connects and finds it down: no command has to remember to start it, and
merely loading the settings starts nothing. Pool failures are explained as in apps.core.postgres_db."""
from django.conf import settings

from apps.core.embedded_postgres import ensure_running
from apps.core.postgres_db import base


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        ensure_running(settings.VAR_DIR)
        return super().get_new_connection(conn_params)
