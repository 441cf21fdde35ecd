"""Settings for the test suite: the same embedded PostgreSQL, a database of its own."""
import os
import tempfile
from pathlib import Path

from .base import *  # noqa: F401,F403
from .base import DATABASES, REDIS_URL, _sqlalchemy_broker_url

SECRET_KEY = "engram-tests-only-not-secret"
DEBUG = False
# Several test runs may share the embedded server (a developer's and CI's, or parallel helpers):
# ENGRAM_TEST_DB gives each its own database.
DATABASES["default"]["TEST"] = {"NAME": f"test_engram_{os.environ.get('ENGRAM_TEST_DB', 'main')}"}
DATABASES["default"]["CONN_MAX_AGE"] = 0
# Mind exports from tests go to a temporary folder of the run, never into the checkout's var/.
ENGRAM_EXPORT_DIR = Path(tempfile.gettempdir()) / f"engram-test-exports-{os.environ.get('ENGRAM_TEST_DB', 'main')}"
ENGRAM_NOTEBOOK_DIR = Path(tempfile.gettempdir()) / f"engram-test-notebooks-{os.environ.get('ENGRAM_TEST_DB', 'main')}"
ENGRAM_NOTEBOOK_EXECUTION = True
# Media stored by tests (Context Graph's binary nodes) goes to a temporary folder of the run.
MEDIA_ROOT = Path(tempfile.gettempdir()) / f"engram-test-media-{os.environ.get('ENGRAM_TEST_DB', 'main')}"
# The exported ONNX model is kept across runs on this machine (one export, then reused), outside var/.
ENGRAM_EMBEDDING_CACHE_DIR = Path(tempfile.gettempdir()) / "engram-test-models"
# The suite makes many calls as one user: rate limits are off, and their tests switch them on.
ENGRAM_RATE_LIMIT_ENABLED = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# The Celery broker (kombu's SQLAlchemy transport when REDIS_URL is unset) lives in the test database
# too, so a worker started by a test sees the same data and leaves nothing behind.
if not REDIS_URL:
    CELERY_BROKER_URL = _sqlalchemy_broker_url({**DATABASES["default"], "NAME": DATABASES["default"]["TEST"]["NAME"]})

# No worker runs beside most tests: /healthz expects none unless a test sets this (tests/core/test_health_degraded.py).
ENGRAM_WORKER_STALE_SECONDS = 0

# The fuzzers give a tool call 10 s (tests/mcp/test_fuzz.py): a benchmark started there hands its rest to Celery sooner.
ENGRAM_BENCHMARK_INLINE_SECONDS = 3
