"""REST shapes of the gardener (/api/v1/cognition/gardener/): its status and a cycle's report."""
from rest_framework import serializers

from apps.cognition.selectors.gardener import GardenerStatus
from apps.cognition.services.gardener import limits
from apps.cognition.services.gardener.cycle import CycleReport
from apps.core.api.serializers import StrictSerializer


# --- Requests --------------------------------------------------------------------------------------------------

class GardenerRunRequestSerializer(StrictSerializer):
    batch_size = serializers.IntegerField(
        required=False, min_value=1, max_value=limits.BATCH_ITEMS, default=limits.BATCH_ITEMS,
        help_text="Items (links, nodes, cycles) a batch takes at most; batches are sized by time (about 50 ms of "
                  "work each, one transaction each), and a query of yours stops the cycle before the next batch.")
    blocking = serializers.BooleanField(
        required=False, default=False,
        help_text="true: run the cycle in this request and answer its report; false (default): the worker runs it "
                  "and the answer is 202 with your gardener's status.")


# --- Responses -------------------------------------------------------------------------------------------------

class GardenerWindowSerializer(serializers.Serializer):
    round = serializers.IntegerField(help_text="The round: successive cycles go round the whole graph, window by "
                                               "window.")
    index = serializers.IntegerField(help_text="The window's number in its round, from 1.")
    of = serializers.IntegerField(help_text="About how many windows the round takes (graph / max_nodes).")
    nodes = serializers.IntegerField(help_text="Live nodes in the window when it was begun (at most max_nodes).")
    graph = serializers.IntegerField(help_text="Your live nodes when the cycle started.")
    after = serializers.UUIDField(allow_null=True, help_text="The window holds the node ids after this one (null: "
                                                             "from the first).")
    upto = serializers.UUIDField(allow_null=True, help_text="... up to this one (null: to the last).")
    last = serializers.BooleanField(help_text="The round's last window.")


class GardenerCycleSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["queued", "running", "completed", "interrupted", "failed"],
                                     help_text="queued: asked for (page, REST, admin), waiting for the worker.")
    trigger = serializers.ChoiceField(choices=["auto", "manual", "admin"])
    started_at = serializers.DateTimeField(required=False, help_text="Left out while the cycle is queued.")
    finished_at = serializers.DateTimeField(required=False, help_text="Left out while the cycle runs.")
    stop_reason = serializers.CharField(required=False, help_text="done, query (a query of yours), dream, lease, "
                                                                  "error or refused (a queued cycle that could not "
                                                                  "start); left out while the cycle runs.")
    window = GardenerWindowSerializer(required=False, help_text="The part of your graph the cycle tends.")
    step = serializers.CharField(required=False, help_text="While the cycle runs: its step now.")
    counters = serializers.DictField(child=serializers.IntegerField(), help_text="Rows changed by kind, and batches.")
    steps_done = serializers.ListField(child=serializers.CharField(), required=False)
    reversal_hash = serializers.CharField(allow_null=True, help_text="Undoes the whole cycle (undo/<hash>/apply/); "
                                                                      "null when it changed nothing undoable.")
    notes = serializers.ListField(child=serializers.CharField(), required=False,
                                  help_text="Why something did not happen.")


class GardenerRulesSerializer(serializers.Serializer):
    idle_activity = serializers.FloatField()
    idle_seconds_for_cycle = serializers.IntegerField()
    seconds_between_cycles = serializers.IntegerField()
    idle_seconds_for_dream = serializers.IntegerField()
    max_nodes = serializers.IntegerField()
    tick_seconds = serializers.IntegerField()


class GardenerStatusSerializer(serializers.Serializer):
    activity = serializers.FloatField(help_text="EWMA (alpha 0.3 a 30 s tick) of min(1, queries in the tick / 5).")
    idle = serializers.BooleanField()
    low_since = serializers.DateTimeField(allow_null=True)
    last_query_at = serializers.DateTimeField(allow_null=True)
    last_tick_at = serializers.DateTimeField(allow_null=True)
    last_tick_queries = serializers.IntegerField()
    nodes = serializers.IntegerField(help_text="Your live nodes in cubes you may write.")
    running = serializers.BooleanField()
    dream_active = serializers.BooleanField()
    cycle_due = serializers.BooleanField()
    dream_due = serializers.BooleanField()
    waiting = serializers.ListField(child=serializers.CharField(), help_text="Why no cycle starts now.")
    last_cycle_at = serializers.DateTimeField(allow_null=True)
    last_cycle = GardenerCycleSerializer(allow_null=True)
    undoable = serializers.BooleanField(help_text="The last cycle's undo can still be applied.")
    rules = GardenerRulesSerializer()


def cycle_answer(cycle: dict) -> dict:
    """A cycle's report (or a running cycle's progress) without what is unknown yet."""
    answer = {key: value for key, value in cycle.items() if value is not None and key != "dedupe_since"}
    return {**answer, "counters": cycle.get("counters", {}), "reversal_hash": cycle.get("reversal_hash")}


def report_answer(report: CycleReport) -> dict:
    return cycle_answer(report.as_dict())


def status_answer(status: GardenerStatus) -> dict:
    state = status.state
    return {"activity": state.activity, "idle": status.idle, "low_since": state.low_since,
            "last_query_at": state.last_query_at, "last_tick_at": state.last_tick_at,
            "last_tick_queries": state.last_tick_queries, "nodes": status.nodes, "running": status.running,
            "dream_active": status.dream_active, "cycle_due": status.cycle_due, "dream_due": status.dream_due,
            "waiting": status.waiting, "last_cycle_at": state.last_cycle_at,
            "last_cycle": cycle_answer(status.last_cycle) if status.last_cycle else None,
            "undoable": status.undoable,
            "rules": {"idle_activity": limits.IDLE_ACTIVITY, "idle_seconds_for_cycle": limits.IDLE_SECONDS_FOR_CYCLE,
                      "seconds_between_cycles": limits.SECONDS_BETWEEN_CYCLES,
                      "idle_seconds_for_dream": limits.IDLE_SECONDS_FOR_DREAM, "max_nodes": limits.MAX_NODES,
                      "tick_seconds": limits.TICK_SECONDS}}
