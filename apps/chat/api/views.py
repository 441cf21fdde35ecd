"""REST views of chat. Each parses its input, calls one service or selector of apps.chat, and formats the
answer; errors reach the client in the API's one envelope (apps/core/api/errors.py), where an unreachable
language model is a 503 (apps.core.exceptions.Unavailable)."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.chat.api.serializers import (
    ChatHistoryQuerySerializer, ChatReplySerializer, ChatRequestSerializer, ChatSessionDetailSerializer,
    ChatSessionSerializer,
)
from apps.chat.selectors import chat_history, chat_session_list
from apps.chat.services import chat_clear, chat_send
from apps.core.api.serializers import PageQuerySerializer, error_responses, validated

SESSION_ID = OpenApiParameter("session_id", OpenApiTypes.STR, OpenApiParameter.PATH,
                              description='A chat session id ("chat_" and 32 hex digits).')


@extend_schema(tags=["chat"])
class ChatView(generics.GenericAPIView):
    @extend_schema(
        operation_id="chat_send",
        summary="Chat with your memories",
        description="Retrieves the `top_k` memories most relevant to `query` from the cubes you can read (or "
                    "`cube_ids`), keeps those that reach the relevance floor, and answers with them and the "
                    "session's recent history: with the language model configured by ENGRAM_LLM_BASE_URL, or, "
                    "with none, extractively (the memories' sentences that share words with the query, each "
                    "memory cited once as [n]). When no memory is relevant the response says so and suggests a "
                    "search, context_used is empty and method is none. Both turns are stored in the session. 503 "
                    "llm_unavailable when the configured model cannot be reached.",
        request=ChatRequestSerializer,
        responses={200: ChatReplySerializer, **error_responses(400, 401, 403, 404, 503)},
    )
    def post(self, request):
        data = validated(ChatRequestSerializer, request.data)
        return Response(ChatReplySerializer(chat_send(actor=request.user, **data)).data)


@extend_schema(tags=["chat"])
class ChatSessionListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="chat_sessions_list",
        summary="List your chat sessions",
        description="Your sessions, latest activity first, each with its number of messages. A session starts "
                    "with a POST /api/v1/chat/ without session_id.",
        parameters=[PageQuerySerializer],
        responses={200: ChatSessionSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(chat_session_list(actor=request.user))
        return self.get_paginated_response(ChatSessionSerializer(page, many=True).data)


@extend_schema(tags=["chat"], parameters=[SESSION_ID])
class ChatSessionDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="chat_sessions_get",
        summary="Get a chat session with its messages",
        description="One page of the session's messages, oldest first (`limit`, `offset`), and their total.",
        parameters=[ChatHistoryQuerySerializer],
        responses={200: ChatSessionDetailSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, session_id: str):
        query = validated(ChatHistoryQuerySerializer, request.query_params)
        history = chat_history(actor=request.user, session_id=session_id, **query)
        return Response(ChatSessionDetailSerializer({
            "session": history.session, "total": history.total, "messages": history.messages, **query,
        }).data)

    @extend_schema(
        operation_id="chat_sessions_clear",
        summary="Clear a chat session",
        description="Deletes the session and all its messages, for good.",
        responses={204: None, **error_responses(401, 403, 404)},
    )
    def delete(self, request, session_id: str):
        chat_clear(actor=request.user, session_id=session_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
