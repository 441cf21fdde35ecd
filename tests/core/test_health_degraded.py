"""GET /healthz in each degraded state: database down, pgvector missing, embedding model not loadable, no
Celery worker seen, broker unreachable. Each answers 503, names the part in ``failed`` and says why.

The database cases point the health checks at a real PostgreSQL connection that fails (a socket directory
where no server listens; a database without the vector extension); tests/core/test_faults_database.py stops
a real server under a running Engram.
"""
import tempfile
from datetime import timedelta

import psycopg
import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connection
from django.db.utils import load_backend
from django.urls import reverse
from django.utils import timezone
from tests.broker_support import close_broker_connections

from apps.core import health
from apps.core.models import WorkerHeartbeat
from apps.memories import embeddings
from config.celery import app

pytestmark = pytest.mark.django_db


def degraded(client, part: str) -> dict:
    response = client.get(reverse("healthz"))
    assert response.status_code == 503, response.json()
    body = response.json()
    assert body["status"] == "degraded"
    assert part in body["failed"], body
    assert body["checks"][part]["ok"] is False and body["checks"][part]["detail"], body
    return body


def database_wrapper(**changes):
    """A connection like the default one, changed (no pool: a failing pool would wait out its timeout)."""
    params = {**connection.settings_dict, **changes}
    params["OPTIONS"] = {key: value for key, value in params.get("OPTIONS", {}).items() if key != "pool"}
    return load_backend(params["ENGINE"]).DatabaseWrapper(params, "default")


def test_database_down(client, monkeypatch):
    with tempfile.TemporaryDirectory(prefix="engram-nopg-") as nowhere:
        # Where the server's socket would be if it ran: what a stopped embedded PostgreSQL looks like.
        probe = database_wrapper(HOST=nowhere)
        monkeypatch.setattr(health, "connection", probe)
        body = degraded(client, "database")
    assert body["failed"] == ["database", "pgvector"]  # pgvector is asked through the same connection
    assert "OperationalError" in body["checks"]["database"]["detail"]
    assert body["checks"]["broker"]["ok"] and body["checks"]["embedding_model"]["ok"]


@pytest.fixture
def database_without_pgvector():
    name = f"{connection.settings_dict['NAME']}_novector"
    admin = psycopg.connect(host=connection.settings_dict["HOST"], user=connection.settings_dict["USER"],
                            dbname="postgres", autocommit=True)
    try:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        yield name
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_pgvector_missing(client, monkeypatch, database_without_pgvector):
    probe = database_wrapper(NAME=database_without_pgvector)
    monkeypatch.setattr(health, "connection", probe)
    try:
        body = degraded(client, "pgvector")
    finally:
        probe.close()
    assert body["failed"] == ["pgvector"]
    assert "vector extension is not installed" in body["checks"]["pgvector"]["detail"]


def test_embedding_model_not_loadable(client, settings, monkeypatch):
    for loaded, empty in (("_model", None), ("_text_encoder", None), ("_onnx_encoders", {})):
        monkeypatch.setattr(embeddings, loaded, empty)  # what this process loaded is restored afterwards
    settings.ENGRAM_EMBEDDING_MODEL = "no-such-embedding-model"
    body = degraded(client, "embedding_model")
    assert body["failed"] == ["embedding_model"]
    assert "no-such-embedding-model" in body["checks"]["embedding_model"]["detail"]


@pytest.mark.parametrize(("stale_worker", "detail"), [
    (False, "No Celery worker has been seen"),
    (True, "No Celery worker seen for"),
])
def test_no_live_worker_seen(client, settings, stale_worker, detail):
    settings.ENGRAM_WORKER_STALE_SECONDS = 60
    if stale_worker:
        WorkerHeartbeat.objects.create(hostname="celery@gone", pid=4242,
                                       last_seen=timezone.now() - timedelta(minutes=5))
    body = degraded(client, "worker")
    assert body["failed"] == ["worker"]
    assert detail in body["checks"]["worker"]["detail"]


def test_a_fresh_worker_heartbeat_is_healthy(client, settings):
    settings.ENGRAM_WORKER_STALE_SECONDS = 60
    WorkerHeartbeat.objects.create(hostname="celery@gone", pid=4242, last_seen=timezone.now() - timedelta(minutes=5))
    health.worker_heartbeat("celery@alive")
    response = client.get(reverse("healthz"))
    assert response.status_code == 200, response.json()
    assert response.json()["failed"] == []
    assert response.json()["checks"]["worker"]["workers"] == ["celery@alive"]


def test_the_worker_check_is_off_when_no_worker_is_expected(client, settings):
    settings.ENGRAM_WORKER_STALE_SECONDS = 0
    assert "worker" not in client.get(reverse("healthz")).json()["checks"]


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_writes_its_heartbeat_and_forgets_it_on_a_clean_stop(settings):
    settings.ENGRAM_WORKER_STALE_SECONDS = 60
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10) as worker:
        # The bootstep beats once as the worker starts, before start_worker returns.
        assert WorkerHeartbeat.objects.filter(hostname=worker.hostname).exists()
        assert health.check_worker()["ok"]
    assert not WorkerHeartbeat.objects.filter(hostname=worker.hostname).exists()
    close_broker_connections()


def test_broker_unreachable(client, settings):
    with tempfile.TemporaryDirectory(prefix="engram-nobroker-") as nowhere:
        settings.CELERY_BROKER_URL = f"sqla+postgresql+psycopg://postgres@/engram?host={nowhere}"
        body = degraded(client, "broker")
    assert body["failed"] == ["broker"]
    assert body["checks"]["database"]["ok"]
