"""Settings for bench/: the same embedded PostgreSQL (or DATABASE_URL's server), a database of its own.

ENGRAM_BENCH_DB names the database (default ``engram_bench``); bench/common.py creates and migrates
it on first use and keeps it between runs, so a generated corpus is built once. The user's own
``engram`` database is never touched.
"""
from config.env import env_str

from .base import *  # noqa: F401,F403
from .base import DATABASES, REDIS_URL, _sqlalchemy_broker_url

SECRET_KEY = "engram-bench-only-not-secret"
DEBUG = False
DATABASES["default"]["NAME"] = env_str("ENGRAM_BENCH_DB", "engram_bench")
# Benchmarks call the same view hundreds of times as one user: the per-user limits would refuse them.
ENGRAM_RATE_LIMIT_ENABLED = False
# The SQL broker (when REDIS_URL is unset) lives in the benchmark database too: a worker a benchmark starts takes
# only that benchmark's tasks, never those of the user's engram database.
if not REDIS_URL:
    CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", _sqlalchemy_broker_url(DATABASES["default"]))
