"""Helpers for tests that run `manage.py` in a child process, as a person or CI would."""
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection


@pytest.fixture
def manage_env(tmp_path: Path):
    """The environment for a child `manage.py`: test settings and a var/ of its own."""
    def make(**overrides: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env.update(DJANGO_SETTINGS_MODULE="config.settings.test", HF_HUB_OFFLINE="1")
        env.update(ENGRAM_VAR_DIR=str(tmp_path / "var"))
        env.update(overrides)
        return env

    return make


@pytest.fixture
def run_manage():
    def run(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env,
            capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
        )

    return run


@pytest.fixture
def child_database_url(transactional_db) -> str:
    """A DATABASE_URL for this run's test database on the embedded server, so that a child process
    sees what the test committed (and the flush after a transactional test removes what it wrote)."""
    params = connection.settings_dict
    return f"postgresql://{params['USER']}@{quote(params['HOST'], safe='')}/{params['NAME']}"
