from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.serializers import error_responses, validated
from apps.graph.api.serializers import (
    GRAPH_ALIASES, BoostSerializer, LinkCreateSerializer, LinkSerializer, NeighbourhoodQuerySerializer,
    NeighbourhoodSerializer, SnapshotQuerySerializer, SnapshotSerializer, UnlinkResultSerializer,
)
from apps.graph.selectors import graph_neighbourhood, graph_snapshot
from apps.memories.api.serializers import MemorySerializer
from apps.memories.api.views import MEMORY_ID
from apps.memories.services import memory_boost
from apps.memories.services.curation import memory_link, memory_unlink


@extend_schema(tags=["graph"])
class GraphSnapshotView(APIView):
    @extend_schema(
        operation_id="graph_snapshot",
        summary="Graph snapshot",
        description="Nodes (live memories, newest first, capped by limit) and the links among them, for one "
                    "cube or every cube you can read. Then follow changes on the /ws/graph/ websocket.",
        parameters=[SnapshotQuerySerializer],
        responses={200: SnapshotSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(SnapshotQuerySerializer, request.query_params)
        with GRAPH_ALIASES.reported():
            snapshot = graph_snapshot(actor=request.user, **GRAPH_ALIASES.arguments(query))
        # The node and edge arrays are JSON already (written by PostgreSQL): sent as they are.
        body = (f'{{"nodes":{snapshot.nodes_json},"edges":{snapshot.edges_json},'
                f'"total_nodes":{snapshot.total_nodes},"shown_nodes":{snapshot.shown_nodes},'
                f'"last_event_id":{snapshot.last_event_id}}}')
        return HttpResponse(body, content_type="application/json")


@extend_schema(tags=["graph"], parameters=[MEMORY_ID])
class NeighbourhoodView(APIView):
    @extend_schema(
        operation_id="graph_neighbourhood",
        summary="A memory's local graph",
        description="The live memories within `depth` links of a memory (every link type, either way) and the "
                    "links among them: the memory first, all of depth 1 before depth 2, the strongest paths first "
                    "within a depth, at most `limit` nodes (`capped` says when some were left out). The memory "
                    "page's local graph.",
        parameters=[NeighbourhoodQuerySerializer],
        responses={200: NeighbourhoodSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, memory_id: str):
        query = validated(NeighbourhoodQuerySerializer, request.query_params)
        found = graph_neighbourhood(actor=request.user, memory_id=memory_id, **query)
        return Response(NeighbourhoodSerializer(found).data)


@extend_schema(tags=["graph"], parameters=[MEMORY_ID])
class MemoryBoostView(APIView):
    @extend_schema(
        operation_id="graph_memory_boost",
        summary="Boost a memory's importance",
        description="Curation: raises importance by `amount` (salience by half of it), capped at 1. The graph "
                    "page's Boost button; open pages receive `memory.boosted`.",
        request=BoostSerializer,
        responses={200: MemorySerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, memory_id: str):
        data = validated(BoostSerializer, request.data)
        memory = memory_boost(actor=request.user, memory_id=memory_id, amount=data["amount"])
        return Response(MemorySerializer(memory).data)


@extend_schema(tags=["graph"])
class LinkCreateView(APIView):
    @extend_schema(
        operation_id="graph_link_create",
        summary="Link two memories",
        description="A manual, directed link from source to target (both live, in cubes you may write). An "
                    "existing link between them takes the new type and weight (200); a new one is 201. Open "
                    "pages receive `memory.relinked` for the source.",
        request=LinkCreateSerializer,
        responses={200: LinkSerializer, 201: LinkSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(LinkCreateSerializer, request.data)
        with GRAPH_ALIASES.reported():
            result = memory_link(actor=request.user, **GRAPH_ALIASES.arguments(data))
        body = LinkSerializer({"source_id": result.link.source_id, "target_id": result.link.target_id,
                               "link_type": result.link.link_type, "weight": result.link.weight,
                               "created": result.created}).data
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


@extend_schema(tags=["graph"], parameters=[
    OpenApiParameter("source", OpenApiTypes.UUID, OpenApiParameter.PATH),
    OpenApiParameter("target", OpenApiTypes.UUID, OpenApiParameter.PATH),
])
class LinkDeleteView(APIView):
    @extend_schema(
        operation_id="graph_link_delete",
        summary="Unlink two memories",
        description="Removes the links between the two memories in both directions (404 when there is none; 400 "
                    "when source and target are the same memory). Open pages receive `memory.relinked` for each "
                    "memory whose outgoing links changed.",
        request=None,
        responses={200: UnlinkResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def delete(self, request, source: str, target: str):
        with GRAPH_ALIASES.reported():
            removed = memory_unlink(actor=request.user, source_id=source, target_id=target)
        return Response(UnlinkResultSerializer({"removed": removed}).data)
