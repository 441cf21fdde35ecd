"""REST shapes of the dream (/api/v1/cognition/dreams/): the trigger's body declares trigger_dream's ranges
(services/dream/limits.py), and the answers are apps/cognition/dream_answers.py's."""
from rest_framework import serializers

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream.limits import DREAM_MINUTES, STEPS, SYNTHETIC_QUERIES
from apps.cognition.services.dream.runs import COUNTERS
from apps.core.api.serializers import StrictSerializer

STATUSES = ConsolidationRun.Status.choices


class DreamTriggerSerializer(StrictSerializer):
    phase = serializers.ChoiceField(choices=ConsolidationRun.Phase.choices, required=False, default="full_cycle",
                                    help_text="nrem (replay, link, dedupe, cluster summaries, scratchpad commit), "
                                              "rem (walks, blind spots, leaps, shortcuts) or full_cycle (both).")
    duration_minutes = serializers.IntegerField(required=False, **DREAM_MINUTES.drf(),
                                                help_text=f"Minutes of work before it stops, {DREAM_MINUTES}.")
    synthetic_query_count = serializers.IntegerField(required=False, **SYNTHETIC_QUERIES.drf(),
                                                     help_text=f"REM walks, {SYNTHETIC_QUERIES}.")
    abort_on_query = serializers.BooleanField(required=False, default=True,
                                              help_text="A query of yours stops it at its next batch.")


class DreamStepSerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=STEPS)
    label = serializers.CharField()
    state = serializers.ChoiceField(choices=["done", "running", "next", "pending"])
    batches = serializers.IntegerField()
    items = serializers.IntegerField()


class DreamChangeSerializer(serializers.Serializer):
    counter = serializers.CharField()
    label = serializers.CharField()
    value = serializers.IntegerField()


class DreamRunListItemSerializer(serializers.Serializer):
    dream_run_id = serializers.UUIDField()
    phase = serializers.ChoiceField(choices=ConsolidationRun.Phase.choices)
    status = serializers.ChoiceField(choices=STATUSES)
    phase_completed = serializers.CharField(help_text="The largest phase whose steps all finished, else none.")
    current_step = serializers.ChoiceField(choices=STEPS, allow_null=True,
                                           help_text="Where the next batch starts (null: every step is done).")
    batches = serializers.IntegerField()
    items = serializers.IntegerField()
    stop_reason = serializers.CharField(allow_null=True, help_text="done, budget, minutes, query, interrupt, ...")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class DreamRunSerializer(DreamRunListItemSerializer):
    budget = serializers.DictField(child=serializers.IntegerField())
    seed = serializers.IntegerField()
    abort_on_query = serializers.BooleanField()
    steps = DreamStepSerializer(many=True)
    counters = serializers.DictField(child=serializers.IntegerField(), help_text=f"Keys: {', '.join(COUNTERS)}.")
    changes = DreamChangeSerializer(many=True, help_text="The counters of changes to the graph that are not 0.")
    notes = serializers.ListField(child=serializers.CharField())
    reversal_hash = serializers.CharField(allow_null=True, help_text="restore_from_hash (or the undo page) undoes "
                                                                     "the whole dream; null when nothing changed.")
    was_interrupted = serializers.BooleanField(help_text="Woken by a query of yours.")
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    interrupt_requested_at = serializers.DateTimeField(allow_null=True)
    duration_ms = serializers.IntegerField()
