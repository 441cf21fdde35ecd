"""The blind spots over REST (/api/v1/cognition/blind-spots/): the regions a dream's REM found thin or disconnected,
and resolving one. Another user's blind spot is not found, as an unknown one is."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from apps.cognition.api.blind_spot_serializers import BlindSpotListQuerySerializer, BlindSpotSerializer
from apps.cognition.selectors.blind_spots import blind_spots_list
from apps.cognition.services.blind_spots import blind_spot_resolve
from apps.core.api.serializers import NoBodySerializer, error_responses, validated

TAGS = ["cognition"]
BLIND_SPOT_ID = OpenApiParameter("blind_spot_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=TAGS)
class BlindSpotListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_blind_spots_list",
        summary="List your blind spots",
        description="Regions a dream's REM found thin (no node answers its synthetic query well) or disconnected "
                    "(what answers it is more than three links away), newest first; `status` filters (open by "
                    "default, resolved, all).",
        parameters=[BlindSpotListQuerySerializer],
        responses={200: BlindSpotSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(BlindSpotListQuerySerializer, request.query_params)
        page = self.paginate_queryset(blind_spots_list(actor=request.user, status=query["status"]))
        return self.get_paginated_response(BlindSpotSerializer(page, many=True).data)


@extend_schema(tags=TAGS, parameters=[BLIND_SPOT_ID])
class BlindSpotResolveView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_blind_spots_resolve",
        summary="Resolve a blind spot",
        description="Marks it resolved (filled, linked, or not worth filling): it leaves the open list. 409 when it "
                    "was resolved already.",
        request=None,
        responses={200: BlindSpotSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, blind_spot_id: str):
        validated(NoBodySerializer, request.data)
        return Response(BlindSpotSerializer(blind_spot_resolve(actor=request.user, blind_spot_id=blind_spot_id)).data)
