"""Django's PostgreSQL backend, for an external server (DATABASE_URL), with the connection pool's
failures explained.

When the pool cannot open a connection (server down, wrong database name or password) it retries in
the background and the caller only learns, after ENGRAM_DB_POOL_TIMEOUT seconds, that it "couldn't get
a connection". Then one direct connection attempt tells why, and its error is raised instead; when that
attempt succeeds, the pool was merely busy and its timeout stands."""
import psycopg
from django.db.backends.postgresql import base

DIAGNOSIS_TIMEOUT_SECONDS = 5


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError as exc:
            if self.pool is None or type(exc).__name__ != "PoolTimeout":
                raise
            self._raise_why_unreachable(conn_params, exc)
            raise

    def _raise_why_unreachable(self, conn_params, pool_timeout) -> None:
        try:
            direct = psycopg.connect(**{**conn_params, "connect_timeout": DIAGNOSIS_TIMEOUT_SECONDS})
        except psycopg.OperationalError as exc:
            raise exc from pool_timeout
        direct.close()
