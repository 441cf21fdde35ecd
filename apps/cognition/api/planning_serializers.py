"""REST shapes of Context Graph's planning and benchmarks (search plans, reflection, retrieval comparison, recall
benchmarks): the bodies declare the ranges of apps/cognition/limits.py, and the answers are
apps/cognition/planning_answers.py's, the MCP tools' own (without the pulse)."""
from rest_framework import serializers

from apps.cognition.api.serializers import NodeSummarySerializer
from apps.cognition.limits import (
    COMPARE_MAX_GROUND_TRUTH, COMPARE_TOP_K, GOAL_MAX_CHARS, GOAL_MIN_CHARS, HAYSTACK_SIZE, NEEDLE_COUNT, PLAN_QUERIES,
    REFLECT_STEPS,
)
from apps.cognition.models import BenchmarkRun
from apps.cognition.needles import TEST_TYPES
from apps.cognition.services.benchmark import BASELINES, DEFAULT_METHODS, METHODS
from apps.cognition.services.plan import DEFAULT_QUERY_TYPES, QUERY_TYPES
from apps.core.api.serializers import StrictSerializer
from apps.memories.validation import MAX_QUERY_CHARS

GOAL_HELP = f"What you are trying to find or achieve, {GOAL_MIN_CHARS}-{GOAL_MAX_CHARS} characters."


# --- Requests --------------------------------------------------------------------------------------------------

class SearchPlanRequestSerializer(StrictSerializer):
    goal = serializers.CharField(min_length=GOAL_MIN_CHARS, max_length=GOAL_MAX_CHARS, help_text=GOAL_HELP)
    query_types = serializers.ListField(child=serializers.ChoiceField(choices=QUERY_TYPES), required=False,
                                        min_length=1, max_length=len(QUERY_TYPES),
                                        help_text=f"Perspectives, one query each (default {list(DEFAULT_QUERY_TYPES)}).")
    max_queries = serializers.IntegerField(required=False, **PLAN_QUERIES.drf())


class ReflectRequestSerializer(StrictSerializer):
    goal = serializers.CharField(min_length=GOAL_MIN_CHARS, max_length=GOAL_MAX_CHARS, help_text=GOAL_HELP)
    session_id = serializers.UUIDField(required=False, help_text="The session to reflect on (default: your latest).")
    max_steps = serializers.IntegerField(required=False, **REFLECT_STEPS.drf())


class CompareRequestSerializer(StrictSerializer):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text="The test query run against every method.")
    top_k = serializers.IntegerField(required=False, **COMPARE_TOP_K.drf())
    methods = serializers.ListField(child=serializers.ChoiceField(choices=METHODS), required=False, min_length=1,
                                    max_length=len(METHODS), help_text=f"Default {list(DEFAULT_METHODS)}.")
    ground_truth_node_ids = serializers.ListField(child=serializers.UUIDField(), required=False,
                                                  max_length=COMPARE_MAX_GROUND_TRUTH,
                                                  help_text="Known-good nodes: precision and recall need them.")


class BenchmarkRequestSerializer(StrictSerializer):
    test_type = serializers.ChoiceField(choices=TEST_TYPES, required=False)
    needle_count = serializers.IntegerField(required=False, **NEEDLE_COUNT.drf())
    haystack_size = serializers.IntegerField(required=False, **HAYSTACK_SIZE.drf())
    baseline_model = serializers.ChoiceField(choices=BASELINES, required=False,
                                             help_text="Anything but none compares with the local model's dense "
                                                       "cosine (baseline_used says so).")
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2 ** 31 - 1,
                                    help_text="The generator's seed (default 20): the same seed, the same corpus.")


# --- Responses -------------------------------------------------------------------------------------------------

class PlannedQuerySerializer(serializers.Serializer):
    query = serializers.CharField()
    type = serializers.CharField(help_text=f"The query's perspective: one of {', '.join(QUERY_TYPES)}.")
    rationale = serializers.CharField()
    expected_recall = serializers.FloatField()


class SearchPlanSerializer(serializers.Serializer):
    queries = PlannedQuerySerializer(many=True)
    execution_strategy = serializers.ChoiceField(choices=["parallel", "sequential", "cascade"])
    token_estimate = serializers.IntegerField()
    goal_pool_size = serializers.IntegerField()
    union_recall = serializers.FloatField()
    method = serializers.CharField()


class UtlStateSerializer(serializers.Serializer):
    entropy = serializers.FloatField()
    coherence = serializers.FloatField()
    learning_score = serializers.FloatField()
    interactions = serializers.IntegerField()
    lifecycle_stage = serializers.CharField()


class ThresholdsSerializer(serializers.Serializer):
    entropy_high = serializers.FloatField()
    coherence_low = serializers.FloatField()


class ReflectStepSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    tool = serializers.CharField()
    arguments = serializers.DictField()
    why = serializers.CharField()


class ReflectionSerializer(serializers.Serializer):
    goal = serializers.CharField()
    session_id = serializers.UUIDField(allow_null=True)
    utl = UtlStateSerializer()
    thresholds = ThresholdsSerializer()
    steps = ReflectStepSerializer(many=True)
    steps_left_out = serializers.IntegerField()
    notes = serializers.ListField(child=serializers.CharField())
    method = serializers.CharField()


class CompareResultsSerializer(serializers.Serializer):
    cosine_baseline = NodeSummarySerializer(many=True, required=False)
    fuse_moe = NodeSummarySerializer(many=True, required=False)
    causal_pathfinding = NodeSummarySerializer(many=True, required=False)
    hyperbolic_entailment = NodeSummarySerializer(many=True, required=False)


class CompareMetricsSerializer(serializers.Serializer):
    precision = serializers.DictField(child=serializers.FloatField())
    recall = serializers.DictField(child=serializers.FloatField())
    overlap = serializers.FloatField(required=False, help_text="Mean pairwise Jaccard of the methods' results, %.")
    overlap_pairs = serializers.DictField(child=serializers.FloatField())
    latency_ms = serializers.DictField(child=serializers.FloatField())
    relevant_set = serializers.CharField(allow_null=True)


class ComparisonSerializer(serializers.Serializer):
    results = CompareResultsSerializer()
    metrics = CompareMetricsSerializer()
    recommendation = serializers.CharField()
    methods = serializers.DictField(child=serializers.CharField(), help_text="What each method really computes.")
    top_k = serializers.IntegerField()


class BenchmarkProgressSerializer(serializers.Serializer):
    phase = serializers.ChoiceField(choices=BenchmarkRun.Phase.choices)
    stored = serializers.IntegerField()
    total_items = serializers.IntegerField()
    queried = serializers.IntegerField()
    total_queries = serializers.IntegerField()
    percent = serializers.FloatField()


class BenchmarkRunSerializer(serializers.Serializer):
    run_id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=BenchmarkRun.Status.choices)
    test_type = serializers.ChoiceField(choices=TEST_TYPES)
    baseline_used = serializers.CharField(allow_null=True)
    progress = BenchmarkProgressSerializer()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    fuse_moe_accuracy = serializers.FloatField(required=False)
    baseline_accuracy = serializers.FloatField(required=False)
    improvement_percent = serializers.FloatField(required=False)
    p95_latency_ms = serializers.IntegerField(required=False)
    test_details = serializers.DictField(required=False)
    recommendation = serializers.CharField(required=False)
    error = serializers.CharField(required=False)
    poll = serializers.CharField(required=False)
