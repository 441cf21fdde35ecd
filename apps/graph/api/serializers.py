from rest_framework import serializers
from rest_framework.settings import ISO_8601

from apps.core.aliases import Aliases
from apps.core.api.serializers import JSONFloatField, StrictSerializer
from apps.core.limits import NEIGHBOURHOOD_DEPTH, NEIGHBOURHOOD_NODES, SNAPSHOT_NODES, UNIT
from apps.cubes.api.serializers import CubeIdField
from apps.graph.selectors import NODE_KEYWORDS
from apps.memories.api.serializers import SectorField
from apps.memories.models import Memory, MemoryLink
from apps.memories.services.curation import DEFAULT_MANUAL_WEIGHT
from apps.memories.validation import MAX_LABEL_CHARS

DATE_FORMATS = [ISO_8601, "%Y-%m-%d"]
# The graph and curation services' argument names -> the names of the snapshot and link requests and paths.
GRAPH_ALIASES = Aliases({"cube_id": "cube", "source_id": "source", "target_id": "target", "link_type": "type"})


class SnapshotQuerySerializer(StrictSerializer):
    cube = CubeIdField(required=False, help_text="Only this cube; by default every cube you can read.")
    kind = serializers.ChoiceField(choices=Memory.Kind.choices, required=False, help_text="Only nodes of this kind.")
    sector = SectorField(required=False)
    tag = serializers.CharField(required=False, max_length=MAX_LABEL_CHARS,
                                help_text="Only nodes with this tag (exactly as stored).")
    min_strength = serializers.FloatField(required=False, **UNIT.drf(),
                                          help_text="Only nodes at least this strong, 0 to 1.")
    date_from = serializers.DateTimeField(required=False, input_formats=DATE_FORMATS,
                                          help_text="Only nodes created at or after this (ISO 8601 date or date-time).")
    date_to = serializers.DateTimeField(required=False, input_formats=DATE_FORMATS,
                                        help_text="Only nodes created at or before this (ISO 8601 date or date-time).")
    limit = serializers.IntegerField(required=False, default=SNAPSHOT_NODES.default, **SNAPSHOT_NODES.drf(),
                                     help_text=f"Most nodes to return, newest first: {SNAPSHOT_NODES} "
                                               f"(default {SNAPSHOT_NODES.default}).")

    def validate(self, attrs):
        if "date_from" in attrs and "date_to" in attrs and attrs["date_from"] > attrs["date_to"]:
            raise serializers.ValidationError({"date_to": ["date_to must not be before date_from."]})
        return attrs


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField(help_text="The first 200 characters of the memory.")
    kind = serializers.CharField()
    sector = serializers.CharField()
    importance = serializers.FloatField()
    strength = serializers.FloatField()
    salience = serializers.FloatField()
    created_at = serializers.DateTimeField()
    cube = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    keywords = serializers.ListField(child=serializers.CharField(),
                                     help_text=f"The memory's first {NODE_KEYWORDS} keywords.")


class GraphEdgeSerializer(serializers.Serializer):
    source = serializers.UUIDField()
    target = serializers.UUIDField()
    type = serializers.CharField()
    weight = serializers.FloatField()


class SnapshotSerializer(serializers.Serializer):
    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True, help_text="The links among the nodes shown.")
    total_nodes = serializers.IntegerField(help_text="Nodes matching the filters.")
    shown_nodes = serializers.IntegerField(help_text="Nodes returned: showing shown_nodes of total_nodes.")
    last_event_id = serializers.IntegerField(
        help_text="Subscribe on /ws/graph/ with since set to this to receive every later change.")


class NeighbourhoodQuerySerializer(StrictSerializer):
    depth = serializers.IntegerField(required=False, default=NEIGHBOURHOOD_DEPTH.default, **NEIGHBOURHOOD_DEPTH.drf(),
                                     help_text=f"How many links away from the memory, {NEIGHBOURHOOD_DEPTH} "
                                               f"(default {NEIGHBOURHOOD_DEPTH.default}).")
    limit = serializers.IntegerField(required=False, default=NEIGHBOURHOOD_NODES.default, **NEIGHBOURHOOD_NODES.drf(),
                                     help_text=f"Most nodes to return, the memory included: {NEIGHBOURHOOD_NODES} "
                                               f"(default {NEIGHBOURHOOD_NODES.default}).")


class NeighbourhoodNodeSerializer(GraphNodeSerializer):
    depth = serializers.IntegerField(help_text="The fewest links between this node and the memory (0: the memory).")


class NeighbourhoodSerializer(serializers.Serializer):
    centre = serializers.UUIDField(source="centre_id", help_text="The memory the neighbourhood is around.")
    depth = serializers.IntegerField()
    limit = serializers.IntegerField()
    nodes = NeighbourhoodNodeSerializer(many=True, help_text="The memory first, then the nearest and strongest.")
    edges = GraphEdgeSerializer(many=True, help_text="The links among the nodes shown.")
    capped = serializers.BooleanField(help_text="True when memories within depth were left out to keep to limit.")


class BoostSerializer(StrictSerializer):
    amount = JSONFloatField(required=False, default=0.1, **UNIT.drf(),
                            help_text="How much importance to add, 0 to 1 (default 0.1); salience rises by half.")


class LinkCreateSerializer(StrictSerializer):
    source = serializers.UUIDField(help_text="The memory the link starts from.")
    target = serializers.UUIDField(help_text="The memory the link points to.")
    type = serializers.ChoiceField(choices=MemoryLink.LinkType.choices, required=False,
                                   default=MemoryLink.LinkType.SEMANTIC, help_text="The kind of link.")
    weight = JSONFloatField(required=False, **UNIT.drf(),
                            help_text=f"0 to 1 (default {DEFAULT_MANUAL_WEIGHT}).")


class LinkSerializer(serializers.Serializer):
    source = serializers.UUIDField(source="source_id")
    target = serializers.UUIDField(source="target_id")
    type = serializers.CharField(source="link_type")
    weight = serializers.FloatField()
    created = serializers.BooleanField(help_text="False when an existing link took the new type and weight.")


class UnlinkResultSerializer(serializers.Serializer):
    removed = serializers.IntegerField(help_text="Links removed between the two memories (both directions).")
