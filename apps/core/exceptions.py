"""The domain errors that services raise. Each edge (REST, MCP, admin, pages, tasks) maps them once."""
from __future__ import annotations


class DomainError(Exception):
    code = "error"

    def __init__(self, message: str, *, code: str | None = None, extra: dict | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.extra = extra or {}


class NotFound(DomainError):
    code = "not_found"


class PermissionDenied(DomainError):
    code = "permission_denied"


class Conflict(DomainError):
    code = "conflict"


class InvalidInput(DomainError):
    """Bad input. ``extra['field']`` names the field at fault when there is one."""

    code = "invalid_input"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None, extra: dict | None = None):
        extra = dict(extra or {})
        if field is not None:
            extra["field"] = field
        super().__init__(message, code=code, extra=extra)

    @property
    def field(self) -> str | None:
        return self.extra.get("field")


class Unavailable(DomainError):
    """Something Engram relies on cannot do its part right now (a language model endpoint, node or npm for
    notebooks): not the caller's fault, and worth retrying once an operator has looked."""

    code = "unavailable"


DATABASE_RETRY_SECONDS = 5


def database_unavailable() -> Unavailable:
    """What every edge answers when the database does not (an OperationalError: down, restarting, every
    pooled connection busy past ENGRAM_DB_POOL_TIMEOUT, a deadlock): not the caller's fault, and worth
    retrying. REST sends it as a 503 with Retry-After (from extra's retry_after, as for a rate limit), MCP in
    the profile's error envelope."""
    return Unavailable(
        f"The database did not answer in time (busy or restarting). Retry in {DATABASE_RETRY_SECONDS} seconds.",
        code="database_unavailable", extra={"retry_after": DATABASE_RETRY_SECONDS},
    )


def is_vector_mismatch(exc: Exception) -> bool:
    """pgvector refused a vector of this process's model beside the stored ones: they are of another dimension,
    because a model switch (manage.py switch_embedding_model) finished and this process still runs the old model."""
    message = str(exc)
    return type(exc).__name__ == "DataError" and (
        "different halfvec dimensions" in message  # a query's vector against the stored ones
        or (message.startswith("expected ") and " dimensions, not " in message))  # a write into the column


def vectors_switched() -> Unavailable:
    from django.conf import settings

    return Unavailable(
        "The stored vectors were moved to another embedding model than this server's "
        f"(ENGRAM_EMBEDDING_MODEL={settings.ENGRAM_EMBEDDING_MODEL}): the operator must restart Engram with the new "
        "model (`manage.py switch_embedding_model --status` names it).", code="embedding_model_switched",
        extra={"retry_after": DATABASE_RETRY_SECONDS})


class RateLimited(DomainError):
    code = "rate_limited"
