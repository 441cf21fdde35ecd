"""GET /healthz: is every component Engram depends on reachable (database, pgvector, embedding model,
broker, channel layer, and a Celery worker seen lately)? For load balancers and people. Any failing part
makes the answer 503, names it in ``failed`` and says why in its check's ``detail``.

Unauthenticated, so it reports states and versions but never a secret: the broker URL is shown
with its password masked and every error text is scrubbed of the configured passwords.
"""
from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from kombu import Connection
from kombu.utils.url import maybe_sanitize_url

TIMEOUT_SECONDS = 2


def _secrets() -> list[str]:
    found = [settings.DATABASES["default"].get("PASSWORD")]
    try:
        found.append(urlsplit(settings.CELERY_BROKER_URL).password)
    except ValueError:  # a malformed broker URL: the broker check reports it
        pass
    return [secret for secret in found if secret]


def _error(exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    for secret in _secrets():
        text = text.replace(secret, "***")
    return text


def check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        major, minor = divmod(connection.pg_version, 10000)
        return {"ok": True, "detail": f"PostgreSQL {major}.{minor}"}
    except Exception as exc:
        return {"ok": False, "detail": _error(exc)}


def check_pgvector() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except Exception as exc:
        return {"ok": False, "version": None, "detail": _error(exc)}
    if row is None:
        return {"ok": False, "version": None, "detail": "The vector extension is not installed: run migrate."}
    return {"ok": True, "version": row[0]}


def check_embedding_model() -> dict:
    try:
        from apps.memories.embeddings import model_status

        return model_status()
    except Exception as exc:
        return {
            "ok": False,
            "model": settings.ENGRAM_EMBEDDING_MODEL,
            "dimensions": settings.ENGRAM_EMBEDDING_DIMENSIONS,
            "detail": _error(exc),
        }


def check_broker() -> dict:
    url = settings.CELERY_BROKER_URL
    shown = maybe_sanitize_url(url)
    try:
        with Connection(url, connect_timeout=TIMEOUT_SECONDS) as broker:
            # No pause between the two attempts: a health check must answer quickly.
            broker.ensure_connection(max_retries=1, interval_start=0, timeout=TIMEOUT_SECONDS)
            if broker.transport.driver_type == "sql":
                _ping_sql_broker(broker.hostname)
    except Exception as exc:
        return {"ok": False, "url": shown, "detail": _error(exc)}
    return {"ok": True, "url": shown}


def check_channel_layer() -> dict:
    """A real round trip through the live graph's channel layer: join a throwaway group, send to it, and
    receive the message (Redis; or PostgreSQL NOTIFY on the embedded default)."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from apps.graph.groups import health_probe_group

    layer = get_channel_layer()
    if layer is None:
        return {"ok": False, "backend": None, "detail": "No channel layer is configured (CHANNEL_LAYERS)."}
    backend = type(layer).__name__

    async def round_trip() -> None:
        channel, group = await layer.new_channel(), health_probe_group(uuid.uuid4().hex)
        await layer.group_add(group, channel)
        try:
            await layer.group_send(group, {"type": "health.probe"})
            await asyncio.wait_for(layer.receive(channel), TIMEOUT_SECONDS)
        finally:
            await layer.group_discard(group, channel)

    try:
        async_to_sync(round_trip)()
    except Exception as exc:
        return {"ok": False, "backend": backend, "detail": _error(exc) or type(exc).__name__}
    return {"ok": True, "backend": backend}


def check_worker() -> dict:
    """Has a Celery worker written its heartbeat within ENGRAM_WORKER_STALE_SECONDS? None ever, or only
    stale ones (a worker killed, or stuck so that its timer cannot run), means background work has stopped."""
    from apps.core.models import WorkerHeartbeat

    max_age = settings.ENGRAM_WORKER_STALE_SECONDS
    try:
        seen = list(WorkerHeartbeat.objects.order_by("-last_seen").values_list("hostname", "last_seen")[:20])
    except Exception as exc:
        return {"ok": False, "detail": _error(exc)}
    if not seen:
        return {"ok": False, "detail": "No Celery worker has been seen: start one (`manage.py serve` does; "
                                       "docker-compose.yml runs `worker`)."}
    now = timezone.now()
    alive = [hostname for hostname, last_seen in seen if (now - last_seen).total_seconds() <= max_age]
    last_seen = seen[0][1].isoformat()
    if not alive:
        age = round((now - seen[0][1]).total_seconds())
        return {"ok": False, "last_seen": last_seen,
                "detail": f"No Celery worker seen for {age} s (a worker writes its heartbeat every "
                          f"{settings.ENGRAM_WORKER_HEARTBEAT_SECONDS} s; stale after {max_age} s)."}
    return {"ok": True, "workers": alive, "last_seen": last_seen}


def worker_heartbeat(hostname: str) -> None:
    """A worker is alive (its bootstep calls this on start and then every ENGRAM_WORKER_HEARTBEAT_SECONDS)."""
    from apps.core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update_or_create(hostname=hostname,
                                             defaults={"pid": os.getpid(), "last_seen": timezone.now()})


def worker_gone(hostname: str) -> None:
    """A worker stopped cleanly: forget it at once rather than let it go stale."""
    from apps.core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.filter(hostname=hostname).delete()


def _ping_sql_broker(database_url: str) -> None:
    # kombu's SQLAlchemy transport "connects" without opening a database connection; open one.
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    connect_args = {"connect_timeout": TIMEOUT_SECONDS} if database_url.startswith("postgresql") else {}
    engine = create_engine(database_url, poolclass=NullPool, connect_args=connect_args)
    try:
        with engine.connect() as db:
            db.execute(text("SELECT 1"))
    finally:
        engine.dispose()


# Every component's check, by name: GET /healthz runs them all (all_checks(), with the worker's), and so does
# MemGOS's health_check (timing the database's).
CHECKS: dict[str, Callable[[], dict]] = {
    "database": check_database,
    "pgvector": check_pgvector,
    "embedding_model": check_embedding_model,
    "broker": check_broker,
    "channel_layer": check_channel_layer,
}


def all_checks() -> dict[str, Callable[[], dict]]:
    """CHECKS, plus the worker's when a worker is expected (ENGRAM_WORKER_STALE_SECONDS > 0)."""
    if settings.ENGRAM_WORKER_STALE_SECONDS > 0:
        return {**CHECKS, "worker": check_worker}
    return CHECKS


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {name: check() for name, check in all_checks().items()}
    failed = [name for name, check in checks.items() if not check["ok"]]
    return JsonResponse({"status": "degraded" if failed else "ok", "failed": failed, "checks": checks},
                        status=503 if failed else 200)
