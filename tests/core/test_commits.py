"""Bookkeeping commits skip the wait for the WAL flush only when they are their own transaction."""
import pytest
from django.db import connection, transaction

from apps.accounts.models import User
from apps.core.commits import unflushed_commit, unflushed_commit_sql


@pytest.mark.django_db(transaction=True)
def test_a_lone_update_commits_unflushed_and_still_writes():
    user = User.objects.create(username="counter")
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {User._meta.db_table} SET first_name = 'x' WHERE id = %s{unflushed_commit_sql()}",
                       [user.pk])
        assert cursor.rowcount == 1
    assert User.objects.filter(unflushed_commit(), pk=user.pk).update(last_name="y") == 1
    user.refresh_from_db()
    assert (user.first_name, user.last_name) == ("x", "y")
    assert unflushed_commit_sql()  # autocommit: the condition is there


@pytest.mark.django_db(transaction=True)
def test_inside_a_callers_transaction_its_commit_setting_is_left_alone():
    user = User.objects.create(username="caller")
    with transaction.atomic(), connection.cursor() as cursor:
        assert unflushed_commit_sql() == "" and not unflushed_commit()
        assert User.objects.filter(unflushed_commit(), pk=user.pk).update(last_name="z") == 1
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
