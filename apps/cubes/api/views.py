"""REST views of cubes, sharing and access checks. Each parses its input, calls the cube service or selector,
and formats the answer; errors reach the client in the API's one envelope (apps/core/api/errors.py).
Writes answer with the cube as the list shows it (your role, its memory count), read back by selector."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.core.api.serializers import NoBodySerializer, PageQuerySerializer, error_responses, validated
from apps.cubes.api.serializers import (
    CUBE_ALIASES, AccessCheckSerializer, AccessDecisionSerializer, CubeCreateSerializer, CubeDeleteQuerySerializer,
    CubeDetailSerializer, CubeSerializer, CubeUpdateSerializer, MembershipSerializer, ShareSerializer,
)
from apps.cubes.models import CUBE_ID_PATTERN
from apps.cubes.selectors import access_check, cube_get_with_stats, cube_list_with_stats, cube_members, cube_statistics
from apps.cubes.services import (
    cube_delete, cube_register, cube_restore, cube_revoke, cube_share, cube_unregister, cube_update,
)

CUBE_ID = OpenApiParameter("cube_id", OpenApiTypes.STR, OpenApiParameter.PATH, pattern=CUBE_ID_PATTERN)
MEMBER = OpenApiParameter("user", OpenApiTypes.STR, OpenApiParameter.PATH, description="Username or user id.")


def _cube_response(request, cube_id: str, status_code: int = status.HTTP_200_OK) -> Response:
    return Response(CubeSerializer(cube_get_with_stats(actor=request.user, cube_id=cube_id)).data, status=status_code)


@extend_schema(tags=["cubes"])
class CubeListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_list",
        summary="List the cubes you can read",
        description="Your personal cube first, then the others by name, each with your role and its memory count. "
                    "Unregistered cubes are left out.",
        parameters=[PageQuerySerializer],
        responses={200: CubeSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(cube_list_with_stats(actor=request.user))
        return self.get_paginated_response(CubeSerializer(page, many=True).data)

    @extend_schema(
        operation_id="cubes_create",
        summary="Register a cube",
        description="You own it. Ids are unique across Engram (409 cube_exists otherwise); the name defaults to "
                    "the id; `path` is information only.",
        request=CubeCreateSerializer,
        responses={201: CubeSerializer, **error_responses(400, 401, 403, 409)},
    )
    def post(self, request):
        data = validated(CubeCreateSerializer, request.data)
        cube = cube_register(actor=request.user, cube_id=data.pop("id"), **data)
        return _cube_response(request, cube.pk, status.HTTP_201_CREATED)


@extend_schema(tags=["cubes"], parameters=[CUBE_ID])
class CubeDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_get",
        summary="Get a cube with its statistics",
        description="Statistics count live memories: by kind, their bytes (content and metadata) and last access.",
        responses={200: CubeDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, cube_id: str):
        with CUBE_ALIASES.reported():
            cube = cube_get_with_stats(actor=request.user, cube_id=cube_id)
            cube.statistics = cube_statistics(actor=request.user, cube_id=cube_id)
        return Response(CubeDetailSerializer(cube).data)

    @extend_schema(
        operation_id="cubes_update",
        summary="Update a cube",
        description="Owner or admin member. Only the fields given change.",
        request=CubeUpdateSerializer,
        responses={200: CubeSerializer, **error_responses(400, 401, 403, 404)},
    )
    def patch(self, request, cube_id: str):
        changes = validated(CubeUpdateSerializer, request.data)
        with CUBE_ALIASES.reported():
            cube_update(actor=request.user, cube_id=cube_id, **changes)
        return _cube_response(request, cube_id)

    @extend_schema(
        operation_id="cubes_delete",
        summary="Unregister or delete a cube",
        description="Owner only; never your personal cube. By default the cube is unregistered: hidden with its "
                    "memories from everyone until restored. `?hard=true` deletes it and its memories for good.",
        parameters=[CubeDeleteQuerySerializer],
        responses={204: None, **error_responses(400, 401, 403, 404)},
    )
    def delete(self, request, cube_id: str):
        hard = validated(CubeDeleteQuerySerializer, request.query_params)["hard"]
        with CUBE_ALIASES.reported():
            (cube_delete if hard else cube_unregister)(actor=request.user, cube_id=cube_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["cubes"], parameters=[CUBE_ID])
class CubeRestoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_restore",
        summary="Restore an unregistered cube",
        description="Owner only. The cube and its memories come back for everyone it is shared with.",
        request=None,
        responses={200: CubeSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, cube_id: str):
        validated(NoBodySerializer, request.data)
        with CUBE_ALIASES.reported():
            cube_restore(actor=request.user, cube_id=cube_id)
        return _cube_response(request, cube_id)


@extend_schema(tags=["cubes"], parameters=[CUBE_ID])
class CubeMembersView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_members_list",
        summary="List a cube's members",
        description="Anyone who can read the cube sees who shares it (the owner is the cube's `owner`).",
        parameters=[PageQuerySerializer],
        responses={200: MembershipSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, cube_id: str):
        validated(PageQuerySerializer, request.query_params)
        with CUBE_ALIASES.reported():
            page = self.paginate_queryset(cube_members(actor=request.user, cube_id=cube_id))
        return self.get_paginated_response(MembershipSerializer(page, many=True).data)

    @extend_schema(
        operation_id="cubes_members_share",
        summary="Share a cube",
        description="Owner or admin member. Grants the user a role (reader, writer or admin); sharing again with "
                    "a member changes the role. Not with yourself or the owner.",
        request=ShareSerializer,
        responses={200: MembershipSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, cube_id: str):
        data = validated(ShareSerializer, request.data)
        with CUBE_ALIASES.reported():
            membership = cube_share(actor=request.user, cube_id=cube_id, user=data["user"], role=data["role"])
        return Response(MembershipSerializer(membership).data)


@extend_schema(tags=["cubes"], parameters=[CUBE_ID, MEMBER])
class CubeMemberView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cubes_members_revoke",
        summary="Revoke a member's access",
        description="Owner or admin member. 404 naming the user when they are not a member.",
        responses={204: None, **error_responses(401, 403, 404)},
    )
    def delete(self, request, cube_id: str, user: str):
        with CUBE_ALIASES.reported():
            cube_revoke(actor=request.user, cube_id=cube_id, user=user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["access"])
class AccessCheckView(generics.GenericAPIView):
    @extend_schema(
        operation_id="access_check",
        summary="May you do this?",
        description="Answers with the rules every service enforces: read needs any role, write (memories) writer, "
                    "admin (rename, share, revoke) admin, delete (the cube) the owner; 'admin' resources need staff.",
        request=AccessCheckSerializer,
        responses={200: AccessDecisionSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        decision = access_check(actor=request.user, **validated(AccessCheckSerializer, request.data))
        return Response(AccessDecisionSerializer(decision).data)
