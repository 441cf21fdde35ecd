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
