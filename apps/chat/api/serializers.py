"""REST shapes of chat. Requests declare types and sizes for clear 400s and the schema; the services own the
rules (bounds, readable cubes, session ownership), so REST and MCP refuse the same things."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.chat.services import MAX_QUERY_LENGTH, context_used_records
from apps.core.api.serializers import JSONCharField, JSONIntegerField, StrictSerializer
from apps.core.limits import CHAT_MAX_TOKENS, CHAT_TOP_K, HISTORY_LIMIT, OFFSET
from apps.cubes.api.serializers import CubeIdField


class ChatRequestSerializer(StrictSerializer):
    query = JSONCharField(max_length=MAX_QUERY_LENGTH, help_text=f"The question, 1 to {MAX_QUERY_LENGTH} characters.")
    session_id = JSONCharField(required=False, max_length=40,
                               help_text="Go on with this session (its history is in the prompt). Omit it to "
                                         "start a new session, titled from this query.")
    top_k = JSONIntegerField(required=False, default=CHAT_TOP_K.default, **CHAT_TOP_K.drf(),
                             help_text="How many memories to answer from.")
    cube_ids = serializers.ListField(child=CubeIdField(), required=False, max_length=100,
                                     help_text="Answer only from these cubes (each must be readable); "
                                               "omitted: every cube you can read.")
    max_tokens = JSONIntegerField(required=False, default=CHAT_MAX_TOKENS.default, **CHAT_MAX_TOKENS.drf(),
                                  help_text="The longest answer, in tokens.")


class ContextUsedSerializer(serializers.Serializer):
    memory_id = serializers.UUIDField()
    cube_id = serializers.CharField()
    relevance_score = serializers.FloatField(help_text="The memory's relevance to the query, 0-1: half its cosine "
                                                       "similarity, half the share of the query's words it holds. "
                                                       "Memories below the relevance floor are not used.")


class ChatReplySerializer(serializers.Serializer):
    """A services.ChatReply."""

    session_id = serializers.CharField(source="session.pk")
    message_id = serializers.IntegerField(source="message.pk")
    response = serializers.CharField()
    context_used = serializers.SerializerMethodField()
    token_count = serializers.IntegerField(help_text="The answer's tokens: the model's count when it reports "
                                                     "one, else an estimate (a token per four characters).")
    method = serializers.CharField(help_text="llm (the configured endpoint), sampling (the MCP client's model), "
                                             "extractive (no model: quoted memories with citations) or none "
                                             "(no memory was relevant: the response says so, context_used is "
                                             "empty and no model was asked).")
    model = serializers.CharField()
    timestamp = serializers.DateTimeField(source="message.created_at")

    @extend_schema_field(ContextUsedSerializer(many=True))
    def get_context_used(self, reply) -> list[dict]:
        return context_used_records(reply.context_used)


class ChatMessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.CharField(help_text="user or assistant.")
    content = serializers.CharField()
    timestamp = serializers.DateTimeField(source="created_at")
    context_used = ContextUsedSerializer(many=True, help_text="Assistant turns: the memories the answer used, [1] "
                                                              "first; empty when none was relevant.")
    token_count = serializers.IntegerField()
    method = serializers.CharField(help_text="Assistant turns: llm, sampling, extractive or none (nothing relevant). "
                                             "Empty for user turns.")
    model = serializers.CharField()


class ChatSessionSerializer(serializers.Serializer):
    session_id = serializers.CharField(source="pk")
    title = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    last_activity = serializers.DateTimeField()
    message_count = serializers.IntegerField()


class ChatHistoryQuerySerializer(StrictSerializer):
    limit = serializers.IntegerField(required=False, default=HISTORY_LIMIT.default, **HISTORY_LIMIT.drf(),
                                     help_text="Messages per page.")
    offset = serializers.IntegerField(required=False, default=OFFSET.default, **OFFSET.drf(), help_text="Messages to skip.")


class ChatSessionDetailSerializer(serializers.Serializer):
    """A selectors.ChatHistory: the session, and one page of its messages, oldest first."""

    session_id = serializers.CharField(source="session.pk")
    title = serializers.CharField(source="session.title")
    created_at = serializers.DateTimeField(source="session.created_at")
    last_activity = serializers.DateTimeField(source="session.last_activity")
    total_messages = serializers.IntegerField(source="total")
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    messages = ChatMessageSerializer(many=True)
