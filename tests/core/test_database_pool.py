"""Connections come from a pool (config/settings/base.py); when the pool cannot hand one out in time, the
error says why: the database's own refusal, or that every connection stayed busy."""
import pytest
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
