from django.conf import settings
from django.db.backends.postgresql import base

from apps.core.embedded_postgres import ensure_running


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        ensure_running(settings.VAR_DIR)
        return super().get_new_connection(conn_params)
