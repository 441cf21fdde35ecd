"""Migration 0011: an unfinished dream's long lists move from its checkpoint to DreamList rows, and back."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.cognition.models import ConsolidationRun, DreamList

pytestmark = pytest.mark.django_db(transaction=True)

LINK = [["a", "b", 3, "2026-12-01T00:00:00+00:00"], ["a", "c", 4, "2026-12-02T00:00:00+00:00"]]
KNN = [["a", "b"], ["b", "c"]]
CLUSTERS = [["a", "b", "c"], ["d", "e", "f"]]


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target] if target else executor.loader.graph.leaf_nodes())


def historical(target, model):
    executor = MigrationExecutor(connection)
    return executor.loader.project_state(target).apps.get_model("cognition", model)


def checkpoint(phase, state):
    return {"phase": phase, "cursor": None, "phases_done": [], "state": state, "counters": {}}


def test_unfinished_runs_carry_their_lists_over_and_back(user):
    migrate(("cognition", "0010_activity_state_garden_window"))
    try:
        old = {
            "link": checkpoint("nrem_link", {"pairs": LINK}),
            "knn": checkpoint("nrem_summarise", {"stage": "knn", "pairs": KNN}),
            "clusters": checkpoint("nrem_summarise", {"stage": "summarise", "clusters": CLUSTERS}),
            "replay": checkpoint("nrem_replay", {}),
        }
        # The model as it stood at 0010 (it had merge_hashes, which 0012 drops).
        then = historical(("cognition", "0010_activity_state_garden_window"), "ConsolidationRun")
        runs = {name: then.objects.create(owner_id=user.pk, seed=1, status="interrupted", checkpoint=value)
                for name, value in old.items()}
        done = then.objects.create(owner_id=user.pk, seed=1, status="completed", checkpoint=old["knn"])
        migrate(("cognition", "0011_dream_list"))

        def moved(name):
            run = ConsolidationRun.objects.get(pk=runs[name].pk)
            lists = {key: list(DreamList.objects.filter(run=run, key=key).order_by("seq").values_list("item", flat=True))
                     for key in ("pairs", "clusters")}
            return run.checkpoint["state"], run.checkpoint.get("lists"), {k: v for k, v in lists.items() if v}

        assert moved("link") == ({"pairs": 2}, {"pairs": 2}, {"pairs": LINK})
        assert moved("knn") == ({"stage": "knn", "found": 2}, {"pairs": 1}, {"pairs": [KNN]})
        assert moved("clusters") == ({"stage": "summarise", "clusters": 2}, {"clusters": 2}, {"clusters": CLUSTERS})
        assert moved("replay") == ({}, None, {})
        assert ConsolidationRun.objects.get(pk=done.pk).checkpoint == old["knn"]  # a finished run is left as it was
        migrate(("cognition", "0010_activity_state_garden_window"))
        for name, value in old.items():
            assert ConsolidationRun.objects.get(pk=runs[name].pk).checkpoint == value
    finally:
        migrate(None)
