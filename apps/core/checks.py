"""System checks for what Engram needs from its environment."""
from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register
from django.db import DatabaseError, connections

NO_PGVECTOR = (
    "The PostgreSQL at DATABASE_URL has no pgvector extension: install pgvector "
    "(https://github.com/pgvector/pgvector) or unset DATABASE_URL to use the embedded database."
)


@register(Tags.database)
def pgvector_available(app_configs, databases=None, **kwargs) -> list[Error]:
    # The embedded server ships pgvector. An external one may not, and without this check the
    # first migration would fail on CREATE EXTENSION with a message that names no remedy.
    if settings.EMBEDDED_DATABASE or not databases or "default" not in databases:
        return []
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            available = cursor.fetchone() is not None
    except DatabaseError as exc:
        return [Error(f"Cannot query the PostgreSQL at DATABASE_URL: {exc}".strip(), id="core.E002")]
    if not available:
        return [Error(NO_PGVECTOR, id="core.E001")]
    return []


@register()
def rate_limits_configured(app_configs, **kwargs) -> list[Error]:
    # A limit below 1 would otherwise surface on the first API call; say so when the server starts.
    from django.core.exceptions import ImproperlyConfigured

    from apps.core.ratelimit import rate_limit_windows

    if not settings.ENGRAM_RATE_LIMIT_ENABLED:
        return []
    try:
        rate_limit_windows()
    except ImproperlyConfigured as exc:
        return [Error(str(exc), id="core.E003")]
    return []
