"""Startup checks: an external PostgreSQL without pgvector, and rate limits below 1, are refused with a
message that names the fix."""
import socket
from urllib.parse import quote

import pytest
from django.db import connection

from apps.core.checks import NO_PGVECTOR, pgvector_available, rate_limits_configured
from tests.core.scratch_postgres import scratch_postgres


@pytest.fixture(scope="module")
def postgres_without_pgvector() -> str:
    """A PostgreSQL of this module's own on which pgvector is not installed, as an external server may be."""
    with scratch_postgres(pgvector=False) as url:
        yield url


def test_check_refuses_a_database_url_without_pgvector(manage_env, run_manage, postgres_without_pgvector):
    result = run_manage("check", "--database", "default", env=manage_env(DATABASE_URL=postgres_without_pgvector))

    assert result.returncode != 0
    assert NO_PGVECTOR in result.stderr
    assert "core.E001" in result.stderr


def test_serve_refuses_a_database_url_without_pgvector_before_migrating(manage_env, run_manage,
                                                                        postgres_without_pgvector):
    result = run_manage("serve", "--no-worker", env=manage_env(DATABASE_URL=postgres_without_pgvector))

    assert result.returncode != 0
    assert NO_PGVECTOR in result.stderr
    assert "Operations to perform" not in result.stdout


def test_check_names_a_database_url_whose_database_does_not_exist(manage_env, run_manage):
    # The embedded server answers (over its socket), but has no such database.
    url = f"postgresql://postgres@{quote(connection.settings_dict['HOST'], safe='')}/engram_no_such_database"
    result = run_manage("check", "--database", "default", env=manage_env(DATABASE_URL=url))

    assert result.returncode != 0
    assert "core.E002" in result.stderr
    assert "engram_no_such_database" in result.stderr


def test_check_names_an_unreachable_database_url(manage_env, run_manage):
    with socket.socket() as probe:  # a port the kernel just handed out and nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgres://postgres@127.0.0.1:{port}/engram"
    result = run_manage("check", "--database", "default", env=manage_env(DATABASE_URL=url))

    assert result.returncode != 0
    assert "core.E002" in result.stderr
    assert f"port {port} failed" in result.stderr


@pytest.mark.django_db
def test_check_accepts_an_external_database_with_pgvector(settings):
    # The embedded server has pgvector: seen as an external one, it passes.
    settings.EMBEDDED_DATABASE = False

    assert pgvector_available(None, databases=["default"]) == []


def test_check_leaves_the_embedded_database_alone(settings):
    settings.EMBEDDED_DATABASE = True

    assert pgvector_available(None, databases=["default"]) == []


def test_check_needs_the_database_to_be_asked_for(settings):
    # Plain `manage.py check` (no --database) must not open a connection.
    settings.EMBEDDED_DATABASE = False

    assert pgvector_available(None, databases=None) == []


def test_rate_limits_below_one_are_refused_at_startup(settings):
    settings.ENGRAM_RATE_LIMIT_ENABLED = True
    assert rate_limits_configured(None) == []
    settings.ENGRAM_RATE_LIMIT_BURST = 0
    [error] = rate_limits_configured(None)
    assert error.id == "core.E003" and "ENGRAM_RATE_LIMIT_BURST=0 must be at least 1" in error.msg
    settings.ENGRAM_RATE_LIMIT_ENABLED = False
    assert rate_limits_configured(None) == []
