"""Events published by another process (a Celery worker, a management command) reach the sockets of
this one, through the embedded default's channel layer (PostgreSQL LISTEN/NOTIFY)."""
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
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "apps.graph.layers.PostgresNotifyChannelLayer"
    connected, socket = await open_socket([await bearer(user)])
    await socket.subscribe(personal_cube)
    # In a thread, so that this process's event loop keeps listening meanwhile.
    child = await asyncio.to_thread(_store_in_another_process, user.pk, "Stored by a worker in another process")
    assert child.returncode == 0, child.stderr
    event = await socket.event()
    assert event["kind"] == "memories.created"
    assert event["payload"]["nodes"][0]["content"] == "Stored by a worker in another process"
