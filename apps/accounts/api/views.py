from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.accounts.api.serializers import TokenCreatedSerializer, TokenCreateSerializer, TokenSerializer
from apps.accounts.models import ApiToken
from apps.accounts.selectors import token_list
from apps.accounts.services import token_create, token_revoke
from apps.core.api.serializers import PageQuerySerializer, error_responses, validated
from apps.core.exceptions import NotFound

SHOWN_ONCE = "Store this token now: Engram keeps only its hash, so it cannot be shown again."


@extend_schema(tags=["tokens"])
class TokenListCreateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="tokens_list",
        summary="List your API tokens",
        description="Your own tokens, newest first, revoked and expired ones included. The token itself is never "
                    "shown again after creation; `prefix` helps you recognise it.",
        parameters=[PageQuerySerializer],
        responses={200: TokenSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(token_list(actor=request.user))
        return self.get_paginated_response(TokenSerializer(page, many=True).data)

    @extend_schema(
        operation_id="tokens_create",
        summary="Create an API token",
        description="Returns the token once, in `token`. Needs the write scope; a token can only create "
                    "tokens with scopes it holds itself (admin holds all).",
        request=TokenCreateSerializer,
        responses={201: TokenCreatedSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        data = validated(TokenCreateSerializer, request.data)
        issuer = request.auth if isinstance(request.auth, ApiToken) else None
        issued = token_create(actor=request.user, issuer=issuer, **data)
        body = {**TokenSerializer(issued.token).data, "token": issued.raw, "warning": SHOWN_ONCE}
        return Response(body, status=status.HTTP_201_CREATED)


@extend_schema(tags=["tokens"])
class TokenRevokeView(generics.GenericAPIView):
    @extend_schema(
        operation_id="tokens_revoke",
        summary="Revoke an API token",
        description="The token stops working at once. Revoking a revoked token is not an error.",
        parameters=[OpenApiParameter("token_id", OpenApiTypes.INT, OpenApiParameter.PATH)],
        responses={204: None, **error_responses(401, 403, 404)},
    )
    def delete(self, request, token_id: str):
        if not token_id.isdigit():
            raise NotFound("Token not found.")
        token_revoke(actor=request.user, token_id=int(token_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
