"""GET /healthz: one JSON verdict over the database, pgvector, the embedding model, the broker and the
channel layer."""
import pytest
from django.db import connection
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_healthz_is_ok_when_every_component_answers(client, settings):
    response = client.get(reverse("healthz"))

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    checks = body["checks"]
    assert set(checks) == {"database", "pgvector", "embedding_model", "broker", "channel_layer"}
    assert checks["database"]["ok"] and checks["database"]["detail"].startswith("PostgreSQL ")
    assert checks["pgvector"]["ok"] and checks["pgvector"]["version"]
    assert checks["embedding_model"]["ok"]
    assert checks["embedding_model"]["model"] == settings.ENGRAM_EMBEDDING_MODEL
    assert checks["embedding_model"]["dimensions"] == settings.ENGRAM_EMBEDDING_DIMENSIONS
    assert checks["broker"] == {"ok": True, "url": checks["broker"]["url"]}
    assert checks["channel_layer"] == {"ok": True, "backend": checks["channel_layer"]["backend"]}


def test_healthz_is_degraded_when_the_channel_layer_does_not_deliver(client, settings):
    # A Redis layer on a port nothing listens on: the round trip fails, and says so.
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]}}}
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    try:
        response = client.get(reverse("healthz"))
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    check = response.json()["checks"]["channel_layer"]
    assert check["ok"] is False and check["backend"] == "RedisChannelLayer" and check["detail"]


def test_healthz_is_degraded_with_503_when_the_broker_is_down_and_hides_its_password(client, settings):
    settings.CELERY_BROKER_URL = "redis://:hunter2-secret@127.0.0.1:1/0"

    response = client.get(reverse("healthz"))

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["broker"]["url"] == "redis://:**@127.0.0.1:1/0"
    assert body["checks"]["broker"]["detail"]
    assert body["checks"]["database"]["ok"] is True
    assert "hunter2-secret" not in response.content.decode()


def test_healthz_checks_a_sql_broker_by_connecting_to_it(client, settings):
    # kombu's SQLAlchemy transport reports success without connecting; the check must not.
    # The embedded server (its socket) answers, but has no such database.
    socket_dir = connection.settings_dict["HOST"]
    settings.CELERY_BROKER_URL = (f"sqla+postgresql+psycopg://postgres:hunter2-secret@/engram_no_such_db"
                                  f"?host={socket_dir}")

    response = client.get(reverse("healthz"))

    assert response.status_code == 503
    broker = response.json()["checks"]["broker"]
    assert broker["ok"] is False
    assert "engram_no_such_db" in broker["detail"]
    assert "hunter2-secret" not in response.content.decode()


def test_healthz_is_never_cached(client):
    response = client.get(reverse("healthz"))

    assert "no-cache" in response["Cache-Control"]


def test_healthz_answers_head_and_refuses_post(client):
    assert client.head(reverse("healthz")).status_code in {200, 503}
    assert client.post(reverse("healthz")).status_code == 405
