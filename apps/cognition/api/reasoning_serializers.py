"""REST shapes of Context Graph's reasoning (causal queries, paths and expansions, entailment): the query strings
declare the ranges of apps/cognition/limits.py, and the answers are apps/cognition/causal_answers.py's, the MCP
tools' own (without the pulse)."""
from rest_framework import serializers

from apps.cognition.api.serializers import EdgeSummarySerializer
from apps.cognition.limits import (
    CAUSAL_PATH_HOPS, ENTAILMENT_DEPTH, EXPAND_HOPS, EXPAND_MIN_WEIGHT, EXPAND_MIN_WEIGHT_DEFAULT,
)
from apps.cognition.selectors.entailment import DIRECTIONS
from apps.cognition.services.causal import EXPAND_DIRECTIONS, INTERVENTIONS, PATH_TYPES
from apps.core.api.serializers import StrictSerializer
from apps.memories.validation import MAX_QUERY_CHARS

CONCEPT_HELP = "A concept's name or words (matched to your own nodes by meaning) or a node_id."


# --- Requests --------------------------------------------------------------------------------------------------

class CausalQueryQuerySerializer(StrictSerializer):
    action = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text=CONCEPT_HELP)
    outcome = serializers.CharField(max_length=MAX_QUERY_CHARS, required=False,
                                    help_text="Only this node's relation to the action. " + CONCEPT_HELP)
    intervention_type = serializers.ChoiceField(choices=INTERVENTIONS, required=False,
                                                help_text="do (the default), observe or counterfactual.")


class CausalPathQuerySerializer(StrictSerializer):
    start_concept = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text=CONCEPT_HELP)
    end_concept = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text=CONCEPT_HELP)
    max_hops = serializers.IntegerField(required=False, **CAUSAL_PATH_HOPS.drf())
    path_type = serializers.ChoiceField(choices=PATH_TYPES, required=False)
    include_alternatives = serializers.BooleanField(required=False, default=False)


class CausalExpandQuerySerializer(StrictSerializer):
    concept = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text=CONCEPT_HELP)
    direction = serializers.ChoiceField(choices=EXPAND_DIRECTIONS, required=False)
    max_hops = serializers.IntegerField(required=False, **EXPAND_HOPS.drf())
    min_weight = serializers.FloatField(required=False, default=EXPAND_MIN_WEIGHT_DEFAULT, **EXPAND_MIN_WEIGHT.drf())


class EntailmentQuerySerializer(StrictSerializer):
    direction = serializers.ChoiceField(choices=DIRECTIONS, required=False)
    max_depth = serializers.IntegerField(required=False, **ENTAILMENT_DEPTH.drf())


# --- Responses -------------------------------------------------------------------------------------------------

class ConceptSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    node_name = serializers.CharField()
    match_score = serializers.FloatField()
    matched_by = serializers.ChoiceField(choices=["id", "meaning"])


class CausalResultSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    node_name = serializers.CharField()
    relation = serializers.ChoiceField(choices=["effect", "cause", "common_cause"])
    effect_strength = serializers.FloatField()
    hops = serializers.IntegerField()
    path = serializers.ListField(child=serializers.UUIDField(), help_text="From the action to the node.")
    edges = EdgeSummarySerializer(many=True)
    via = serializers.UUIDField(required=False, help_text="observe: the cause the node shares with the action.")
    loses_support = serializers.BooleanField(required=False)
    remaining_support = serializers.FloatField(required=False)
    supported_by = serializers.UUIDField(required=False)


class CausalQuerySerializer(serializers.Serializer):
    intervention_type = serializers.ChoiceField(choices=INTERVENTIONS)
    action = ConceptSerializer()
    outcome = ConceptSerializer(required=False)
    effect_strength = serializers.FloatField(required=False, help_text="With outcome: its best path (or trek) "
                                                                       "product of weights, 0 when not reached.")
    outcome_loses_support = serializers.BooleanField(required=False)
    results = CausalResultSerializer(many=True)
    still_supported = CausalResultSerializer(many=True, required=False)
    narrative = serializers.CharField()
    method = serializers.CharField()
    nodes_visited = serializers.IntegerField()
    truncated = serializers.BooleanField()


class PathItemSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    node_name = serializers.CharField()
    edge_type = serializers.ChoiceField(choices=["causal", "semantic", "temporal", "hierarchical"], required=False)
    edge_weight = serializers.FloatField(required=False)
    link_type = serializers.CharField(required=False)
    direction = serializers.ChoiceField(choices=["forward", "backward"], required=False)


class CausalPathSerializer(serializers.Serializer):
    path_found = serializers.BooleanField()
    narrative = serializers.CharField()
    path = PathItemSerializer(many=True)
    hop_count = serializers.IntegerField()
    path_confidence = serializers.FloatField()
    alternative_paths = serializers.ListField(child=PathItemSerializer(many=True), required=False)
    alternative_confidences = serializers.ListField(child=serializers.FloatField(), required=False)
    start_match = ConceptSerializer()
    end_match = ConceptSerializer()
    nodes_visited = serializers.IntegerField()
    truncated = serializers.BooleanField()


class CausalChainSerializer(serializers.Serializer):
    nodes = serializers.ListField(child=serializers.UUIDField(), help_text="Cause first.")
    edges = EdgeSummarySerializer(many=True)
    strength = serializers.FloatField()
    narrative = serializers.CharField()
    direction = serializers.ChoiceField(choices=["effects", "causes"])


class CausalExpansionSerializer(serializers.Serializer):
    concept = ConceptSerializer()
    direction = serializers.ChoiceField(choices=EXPAND_DIRECTIONS)
    paths = CausalChainSerializer(many=True)
    nodes_visited = serializers.IntegerField()
    truncated = serializers.BooleanField()
    method = serializers.CharField()


class EntailedNodeSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    node_name = serializers.CharField()
    relation = serializers.ChoiceField(choices=["ancestor", "descendant"])
    depth = serializers.IntegerField()
    confidence = serializers.FloatField()


class EntailmentSerializer(serializers.Serializer):
    ancestors = serializers.ListField(child=serializers.UUIDField())
    descendants = serializers.ListField(child=serializers.UUIDField())
    entailment_confidence = serializers.FloatField()
    method = serializers.CharField()
    node_id = serializers.UUIDField()
    direction = serializers.ChoiceField(choices=DIRECTIONS)
    max_depth = serializers.IntegerField()
    nodes = EntailedNodeSerializer(many=True)
    edges = EdgeSummarySerializer(many=True)
    nodes_visited = serializers.IntegerField()
    truncated = serializers.BooleanField()
