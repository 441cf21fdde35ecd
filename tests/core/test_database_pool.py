"""Connections come from a pool (config/settings/base.py); when the pool cannot hand one out in time, the
error says why: the database's own refusal, or that every connection stayed busy."""
import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import OperationalError, connections
from django.db.utils import load_backend

pytestmark = pytest.mark.django_db


def wrapper_for(alias: str, **changes):
    settings_dict = {**connections["default"].settings_dict, "CONN_MAX_AGE": 0,
                     "OPTIONS": {"pool": {"min_size": 1, "max_size": 1, "timeout": 1}}, **changes}
    return load_backend(settings_dict["ENGINE"]).DatabaseWrapper(settings_dict, alias=alias)


def test_the_settings_pool_connections():
    assert connections["default"].settings_dict["OPTIONS"]["pool"]["max_size"] >= 1
    assert connections["default"].settings_dict["CONN_MAX_AGE"] == 0
    assert connections["default"].pool is not None


def test_a_pool_that_cannot_connect_raises_the_databases_own_error():
    wrapper = wrapper_for("pool-no-such-database", NAME="engram_no_such_database")
    try:
        with pytest.raises(OperationalError, match='database "engram_no_such_database" does not exist'):
            wrapper.ensure_connection()
    finally:
        wrapper.close_pool()


def test_a_pool_whose_connections_stay_busy_times_out():
    holder, waiter = wrapper_for("pool-busy"), wrapper_for("pool-busy")  # one alias: one pool of one
    connections["pool-busy"] = holder  # django.contrib.postgres looks the alias up when a connection opens
    try:
        holder.ensure_connection()
        with pytest.raises(OperationalError, match="couldn't get a connection after 1.00 sec"):
            waiter.ensure_connection()
        holder.close()  # back to the pool: the next caller gets it
        waiter.ensure_connection()
        with waiter.cursor() as cursor:
            cursor.execute("SELECT 1")
            assert cursor.fetchone() == (1,)
        waiter.close()
    finally:
        holder.close_pool()
        del connections["pool-busy"]


def settings_with(**environment) -> subprocess.CompletedProcess:
    """Load the local settings in a fresh interpreter with `environment` and print the database entry."""
    code = ("import json, config.settings.local as s; d = s.DATABASES['default']; "
            "print(json.dumps({'pool': d.get('OPTIONS', {}).get('pool'), 'age': d['CONN_MAX_AGE'], "
            "'threads': s.ENGRAM_WEB_THREADS}))")
    return subprocess.run([sys.executable, "-c", code], cwd=settings.BASE_DIR, capture_output=True, text=True,
                          env={**os.environ, **environment}, timeout=120)


@pytest.mark.parametrize(("size", "pool", "age", "threads"), [
    ("4", {"min_size": 2, "max_size": 4, "timeout": 3}, 0, 4),  # as many view threads as connections
    ("1", {"min_size": 1, "max_size": 1, "timeout": 3}, 0, 1),
    ("0", None, 60, 10),  # no pool: each thread keeps its connection for a minute, as before pools
])
def test_the_pool_size_comes_from_the_environment(size, pool, age, threads):
    loaded = settings_with(ENGRAM_DB_POOL_SIZE=size, ENGRAM_DB_POOL_TIMEOUT="3")
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout.strip().splitlines()[-1]) == {"pool": pool, "age": age, "threads": threads}


def test_the_view_threads_come_from_the_environment():
    loaded = settings_with(ENGRAM_DB_POOL_SIZE="4", ENGRAM_WEB_THREADS="6")
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout.strip().splitlines()[-1])["threads"] == 6
    refused = settings_with(ENGRAM_WEB_THREADS="0")
    assert refused.returncode != 0
    assert "ENGRAM_WEB_THREADS=0 must be 1 or more." in refused.stderr


def test_a_negative_pool_size_is_refused_by_name():
    loaded = settings_with(ENGRAM_DB_POOL_SIZE="-1")
    assert loaded.returncode != 0
    assert "ENGRAM_DB_POOL_SIZE=-1 must be 0 (no pool) or more." in loaded.stderr


def test_every_connection_prices_random_reads_as_in_memory():
    # At PostgreSQL's default (4) the planner scanned whole tables where an index read a fifth of the time.
    with connections["default"].cursor() as cursor:
        cursor.execute("SHOW random_page_cost")
        assert float(cursor.fetchone()[0]) == settings.DATABASE_RANDOM_PAGE_COST < 4


def test_a_database_urls_own_options_win():
    url = "postgres://engram@db.invalid:5432/engram?options=-c%20random_page_cost%3D2"
    code = "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS']['options'])"
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.base"}
    out = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], env=env,
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    # libpq applies -c options in order: the URL's setting comes last.
    assert out[-2:] == ["-c", "random_page_cost=2"] and "random_page_cost=1.1" in out
