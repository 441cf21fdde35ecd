"""Undo snapshots kept in parts (services/dream/parts.py): two writers appending to one entry at once (a worker that
lost its lease and the one that took over) append one after the other under the next numbers, never both under one
(which the (entry, seq) uniqueness refused with an IntegrityError)."""
from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection, connections, transaction

from apps.cognition.models import UndoEntry, UndoPart
from apps.cognition.services.dream.parts import empty_snapshot
from apps.cognition.services.undo import undo_part_add, undo_record

pytestmark = pytest.mark.django_db


def _part(label: str) -> dict:
    return {**empty_snapshot(), "cubes": [label]}


@pytest.mark.django_db(transaction=True)
def test_two_writers_append_to_one_undo_one_after_the_other(user):
    entry = undo_record(actor=user, operation=UndoEntry.Operation.DREAM, node_ids=[], snapshot=empty_snapshot())
    first_added, go_on = threading.Event(), threading.Event()
    seqs, failures = {}, []

    def writer(name: str, before=None, after=None) -> None:
        try:
            if before is not None:
                before.wait(timeout=60)
            with transaction.atomic():
                seqs[name] = undo_part_add(entry_id=entry.pk, part=_part(name))
                if after is not None:
                    after.set()
                    go_on.wait(timeout=60)  # held open until the second writer waits on it
        except Exception as exc:  # noqa: BLE001 (the failure is the finding)
            failures.append(repr(exc))
        finally:
            connections.close_all()

    first = threading.Thread(target=writer, args=["first"], kwargs={"after": first_added})
    second = threading.Thread(target=writer, args=["second"], kwargs={"before": first_added})
    first.start()
    second.start()
    params = connection.settings_dict
    try:
        with psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"]) as watcher:
            # The second writer is inside its append, waiting on the first's uncommitted one.
            while not watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                                      "datname = %s", [params["NAME"]]).fetchone()[0]:
                watcher.execute("SELECT pg_sleep(0.05)")
    finally:
        go_on.set()
        first.join(timeout=60)
        second.join(timeout=60)
    assert failures == []
    assert seqs == {"first": 0, "second": 1}
    parts = list(UndoPart.objects.filter(entry=entry).order_by("seq").values_list("seq", "snapshot"))
    assert [(seq, snapshot["cubes"]) for seq, snapshot in parts] == [(0, ["first"]), (1, ["second"])]
