"""Serializers of the blind spots over REST (/api/v1/cognition/blind-spots/)."""
from rest_framework import serializers

from apps.cognition.models import BlindSpot
from apps.cognition.selectors.blind_spots import OPEN, STATUSES
from apps.core.api.serializers import PageQuerySerializer


class BlindSpotListQuerySerializer(PageQuerySerializer):
    status = serializers.ChoiceField(choices=STATUSES, required=False, default=OPEN,
                                     help_text="open (the default), resolved or all.")


class BlindSpotHitSerializer(serializers.Serializer):
    node_id = serializers.UUIDField()
    score = serializers.FloatField(help_text="Fused retrieval's composite score for the synthetic query.")
    dense = serializers.FloatField(help_text="The hit's dense cosine to the query.")


class BlindSpotSerializer(serializers.ModelSerializer):
    run_id = serializers.UUIDField(allow_null=True, help_text="The dream run whose REM found it.")
    node_ids = serializers.ListField(child=serializers.UUIDField(),
                                     help_text="The walk's nodes in order; the last one's words were the query.")
    hits = BlindSpotHitSerializer(many=True, help_text="The best hits retrieval found for the query.")
    kind_label = serializers.CharField(source="get_kind_display")

    class Meta:
        model = BlindSpot
        fields = ["id", "kind", "kind_label", "query", "node_ids", "hits", "best_score", "run_id", "created_at",
                  "resolved_at"]
        read_only_fields = fields
