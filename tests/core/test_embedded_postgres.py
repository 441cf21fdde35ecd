"""`manage.py embedded_postgres`: status of the shared server. (`stop` is not run here: the test
database lives on that very server.)"""
import os
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from apps.core import embedded_postgres


def test_status_reports_the_running_server_and_its_socket_dir():
    out = StringIO()

    call_command("embedded_postgres", "status", stdout=out)

    assert "is running" in out.getvalue()
    assert f"socket dir {settings.DATABASES['default']['HOST']}" in out.getvalue()


def test_status_names_a_live_postmaster():
    server = embedded_postgres.status(settings.VAR_DIR)

    assert server is not None
    os.kill(server.pid, 0)  # raises if no such process
    assert str(server.socket_dir) == settings.DATABASES["default"]["HOST"]


def test_status_of_a_var_dir_without_a_server_is_none(tmp_path):
    assert embedded_postgres.status(tmp_path) is None


def test_command_refuses_when_database_url_is_set(settings):
    settings.EMBEDDED_DATABASE = False

    with pytest.raises(CommandError, match="DATABASE_URL is set"):
        call_command("embedded_postgres", "stop")


def test_commands_leave_a_stopped_server_stopped(manage_env, run_manage, tmp_path):
    # Loading the settings starts nothing; status and stop must not leave a server running.
    env = manage_env()  # its own var/ under tmp_path, where no server runs yet

    for action, says in (("status", "is not running"), ("stop", "was not running")):
        result = run_manage("embedded_postgres", action, env=env)

        assert result.returncode == 0, result.stderr
        assert says in result.stdout
        assert embedded_postgres.status(tmp_path / "var") is None


def test_shared_buffers_default_is_a_quarter_of_memory_within_bounds(monkeypatch):
    monkeypatch.delenv("ENGRAM_DB_SHARED_BUFFERS", raising=False)
    megabytes = int(embedded_postgres.shared_buffers().removesuffix("MB"))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    assert megabytes == max(128, min(256, memory // 4))


@pytest.mark.parametrize("value", ["lots", "512", "0MB", "1 GB", "-1GB"])
def test_a_bad_shared_buffers_setting_names_the_variable_and_the_form(monkeypatch, value):
    monkeypatch.setenv("ENGRAM_DB_SHARED_BUFFERS", value)
    with pytest.raises(ValueError, match=r"ENGRAM_DB_SHARED_BUFFERS must be a size such as 512MB"):
        embedded_postgres.shared_buffers()


@pytest.mark.slow
def test_a_new_server_starts_with_the_configured_shared_buffers(manage_env, run_manage, tmp_path):
    env = manage_env(ENGRAM_DB_SHARED_BUFFERS="160MB")
    try:
        shown = run_manage("shell", "-c", "from django.db import connection\n"
                           "with connection.cursor() as c:\n c.execute('SHOW shared_buffers'); print(c.fetchone()[0])",
                           env=env)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip().splitlines()[-1] == "160MB"
    finally:
        run_manage("embedded_postgres", "stop", env=env)
    assert embedded_postgres.status(tmp_path / "var") is None


@pytest.mark.django_db(transaction=True)
def test_a_connection_checks_the_server_again_only_when_its_process_is_gone(monkeypatch):
    import subprocess

    from django.db import connection

    from apps.core.embedded_db import base

    checks = []
    real = base.ensure_running
    monkeypatch.setattr(base, "ensure_running", lambda var_dir: checks.append(var_dir) or real(var_dir))
    monkeypatch.setattr(base, "_server_pid", embedded_postgres.status(settings.VAR_DIR).pid)
    for _ in range(3):
        connection.close()
        connection.ensure_connection()
    assert checks == []  # the server's process lives: no pid file read, no runtime dir touched
    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(base, "_server_pid", gone.pid)  # as if the server had stopped since
    connection.close()
    connection.ensure_connection()
    assert checks == [settings.VAR_DIR] and base._server_pid == embedded_postgres.status(settings.VAR_DIR).pid
