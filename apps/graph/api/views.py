from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.serializers import error_responses, validated
from apps.graph.api.serializers import SnapshotQuerySerializer, SnapshotSerializer
from apps.graph.selectors import graph_snapshot


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
        snapshot = graph_snapshot(actor=request.user, cube_id=query.get("cube"), kind=query.get("kind"),
                                  sector=query.get("sector"), min_strength=query.get("min_strength"),
                                  date_from=query.get("date_from"), date_to=query.get("date_to"),
                                  limit=query["limit"])
        return Response({"nodes": snapshot.nodes, "edges": snapshot.edges, "total_nodes": snapshot.total_nodes,
                         "shown_nodes": snapshot.shown_nodes, "last_event_id": snapshot.last_event_id})
