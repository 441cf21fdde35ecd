"""REST shapes of Context Graph's state (a session's UTL status, neuromodulation, homeostasis): the answers are
apps/cognition/state_answers.py's, the MCP tools' own (without the pulse)."""
from rest_framework import serializers

from apps.cognition.api.serializers import ActivatedSerializer
from apps.cognition.limits import Johari, Stage
from apps.cognition.services.neuromod import MODES
from apps.core.api.serializers import StrictSerializer


# --- Requests --------------------------------------------------------------------------------------------------

class NeuromodulationQuerySerializer(StrictSerializer):
    session_id = serializers.UUIDField(required=False, help_text="Whose levels: one of your sessions (your latest "
                                                                 "when left out).")


# --- Responses -------------------------------------------------------------------------------------------------

class EffectsSerializer(serializers.Serializer):
    importance_weight = serializers.FloatField(help_text="w: the share of a node's rank key taken by its importance.")
    breadth = serializers.IntegerField(help_text="How many more candidates than returned are retrieved and re-ranked.")
    temperature = serializers.FloatField(help_text="T: the softmax temperature on retrieval's scores.")
    learning_rate = serializers.FloatField(help_text="eta = 10 x acetylcholine: a dream's Hebbian step.")
    reorders = serializers.BooleanField(help_text="False at rest: retrieval's order is kept.")


class NeuromodulationBasisSerializer(serializers.Serializer):
    session_id = serializers.UUIDField(allow_null=True)
    entropy = serializers.FloatField()
    coherence = serializers.FloatField()
    learning_score = serializers.FloatField()
    resting = serializers.BooleanField()


class NeuromodulationSerializer(serializers.Serializer):
    dopamine = serializers.FloatField()
    serotonin = serializers.FloatField()
    noradrenaline = serializers.FloatField()
    acetylcholine = serializers.FloatField()
    current_mode = serializers.ChoiceField(choices=MODES)
    effects = EffectsSerializer()
    basis = NeuromodulationBasisSerializer()
    method = serializers.CharField()


class UtlItemSerializer(serializers.Serializer):
    kind = serializers.CharField()
    text = serializers.CharField()
    delta_s = serializers.FloatField()
    created_at = serializers.DateTimeField()
    activated_count = serializers.IntegerField()
    activated = ActivatedSerializer(many=True)


class UtlThresholdsSerializer(serializers.Serializer):
    entropy_high_above = serializers.FloatField()
    coherence_low_below = serializers.FloatField()


class UtlStatusSerializer(serializers.Serializer):
    session_id = serializers.UUIDField()
    entropy = serializers.FloatField()
    coherence = serializers.FloatField()
    learning_score = serializers.FloatField()
    lifecycle_stage = serializers.ChoiceField(choices=Stage.values)
    interactions = serializers.IntegerField()
    johari_quadrant = serializers.ChoiceField(choices=Johari.values)
    entropy_high = serializers.BooleanField()
    coherence_low = serializers.BooleanField()
    thresholds = UtlThresholdsSerializer()
    recent_items = UtlItemSerializer(many=True)
    updated_at = serializers.DateTimeField()


class SuspectSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    importance = serializers.FloatField()
    reasons = serializers.ListField(child=serializers.ChoiceField(choices=["causal_cycle", "conflict"]))


class HealthPartsSerializer(serializers.Serializer):
    balance = serializers.FloatField()
    connectedness = serializers.FloatField()
    consistency = serializers.FloatField()
    immunity = serializers.FloatField()


class HomeostasisSerializer(serializers.Serializer):
    mean_importance = serializers.FloatField()
    importance_variance = serializers.FloatField()
    quarantined_nodes = serializers.IntegerField()
    semantic_cancer_suspects = serializers.IntegerField()
    last_scaling_time = serializers.DateTimeField(required=False, help_text="Left out when importance was never "
                                                                            "scaled.")
    health_score = serializers.FloatField(min_value=0, max_value=1)
    health_parts = HealthPartsSerializer()
    nodes = serializers.IntegerField()
    edges = serializers.IntegerField()
    important_nodes = serializers.IntegerField()
    conflicted_nodes = serializers.IntegerField()
    suspects = SuspectSerializer(many=True)
    method = serializers.CharField()
