from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from apps.core.api.serializers import PageQuerySerializer, error_responses, validated
from apps.cubes.api.serializers import CubeSerializer
from apps.cubes.models import CUBE_ID_PATTERN
from apps.cubes.selectors import cube_get_with_stats, cube_list_with_stats


@extend_schema(tags=["cubes"])
class CubeListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_list",
        summary="List the cubes you can read",
        description="Your personal cube first, then the others by name, each with your role and its memory count.",
        parameters=[PageQuerySerializer],
        responses={200: CubeSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(cube_list_with_stats(actor=request.user))
        return self.get_paginated_response(CubeSerializer(page, many=True).data)


@extend_schema(tags=["cubes"])
class CubeDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_get",
        summary="Get a cube",
        parameters=[OpenApiParameter("cube_id", OpenApiTypes.STR, OpenApiParameter.PATH, pattern=CUBE_ID_PATTERN)],
        responses={200: CubeSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, cube_id: str):
        return Response(CubeSerializer(cube_get_with_stats(actor=request.user, cube_id=cube_id)).data)
