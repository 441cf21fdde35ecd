"""Events published by another process (a Celery worker, a management command) reach the sockets of
this one, through the configured channel layer: PostgreSQL LISTEN/NOTIFY on the embedded default,
Redis when REDIS_URL is set (`make test-redis`)."""
import asyncio
import os
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

# The child uses the test database, as pytest-django does for this process: settings first, then setup.
STORE_IN_ANOTHER_PROCESS = """
import sys
import django
from django.conf import settings
settings.DATABASES["default"]["NAME"] = sys.argv[1]
django.setup()
from apps.accounts.models import User
from apps.memories.services import memory_store
memory_store(actor=User.objects.get(pk=int(sys.argv[2])), content=sys.argv[3])
"""


def _store_in_another_process(user_pk: int, content: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-c", STORE_IN_ANOTHER_PROCESS, settings.DATABASES["default"]["NAME"], str(user_pk), content],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=180,
    )


async def test_a_memory_stored_by_another_process_reaches_an_open_socket(user, personal_cube, open_socket, bearer):
    expected = "channels_redis.core.RedisChannelLayer" if settings.REDIS_URL else "apps.graph.layers.PostgresNotifyChannelLayer"
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == expected
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)
    # In a thread, so that this process's event loop keeps listening meanwhile.
    child = await asyncio.to_thread(_store_in_another_process, user.pk, "Stored by a worker in another process")
    assert child.returncode == 0, child.stderr
    event = await socket.event()
    assert event["kind"] == "memories.created"
    assert event["payload"]["nodes"][0]["content"] == "Stored by a worker in another process"


async def test_an_idle_subscription_still_receives(user, personal_cube, open_socket, bearer, db_call, store):
    # Longer than a blocking read of the Redis layer (5 s): redis-py 8 timed those out and the
    # consumer died, so a page left idle for a few seconds never heard of another change.
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)
    await asyncio.sleep(6)
    await db_call(store, user, "Stored after a quiet spell")
    event = await socket.event()
    assert event["payload"]["nodes"][0]["content"] == "Stored after a quiet spell"
