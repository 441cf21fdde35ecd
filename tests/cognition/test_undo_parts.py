"""Undo snapshots kept in parts (services/dream/parts.py): two writers appending to one entry at once (a worker that
lost its lease and the one that took over) append one after the other under the next numbers, never both under one
(which the (entry, seq) uniqueness refused with an IntegrityError); and a gardener cycle of many batches appends its
undo part by part, never rewriting it, and the undo reads it back exactly."""
from __future__ import annotations

import json
import threading

import psycopg
import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from apps.cognition.models import UndoEntry, UndoPart
from apps.cognition.services.dream.parts import empty_snapshot
from apps.cognition.services.gardener.cycle import gardener_run
from apps.cognition.services.undo import undo_apply, undo_part_add, undo_record
from tests.cognition.curation_support import everything
from tests.cognition.test_gardener_windows import graph

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


def test_a_cycle_of_many_batches_appends_its_undo_and_the_undo_reads_it_back(user):
    graph(user, 8)  # 7 weak idle links to prune, importance 0 and 1 to scale
    before = everything()
    with CaptureQueriesContext(connection) as statements:
        report = gardener_run(actor=user, batch_size=1)
    assert (report.counters["edges_pruned"], report.counters["nodes_scaled"]) == (7, 8)
    entry = UndoEntry.objects.get(pk=report.reversal_hash)
    assert entry.snapshot == empty_snapshot()  # never rewritten: each batch appended its part
    parts = list(UndoPart.objects.filter(entry=entry).order_by("seq"))
    assert [part.seq for part in parts] == list(range(15))  # 7 prune batches, 8 scaling batches
    assert not any("UPDATE" in query["sql"] and '"snapshot"' in query["sql"] and "cognition_undoentry" in query["sql"]
                   for query in statements.captured_queries)
    kept = sum(len(json.dumps(part.snapshot)) for part in parts)
    written = sum(len(query["sql"]) for query in statements.captured_queries
                  if "cognition_undo" in query["sql"] and query["sql"].startswith("INSERT"))
    assert kept < written < 3 * kept, (kept, written)
    undo_apply(actor=user, reversal_hash=report.reversal_hash, preview=False)
    assert everything() == before
