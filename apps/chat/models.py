"""Memory-augmented chat: a user's conversations and their turns.

A session's id is "chat_" + 32 hex digits (MemGOS names sessions by string, e.g. "chat_session_001"), so it
reads as a chat session wherever it is shown. Clearing a session deletes it and its messages for good:
clearing is what a user asks for to make a conversation go away, so nothing of it is kept.
"""
import uuid

from django.conf import settings
from django.db import models

SESSION_ID_PREFIX = "chat_"
MAX_TITLE_CHARS = 200


def new_session_id() -> str:
    return f"{SESSION_ID_PREFIX}{uuid.uuid4().hex}"


class ChatSession(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_session_id, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_sessions")
    title = models.CharField(max_length=MAX_TITLE_CHARS, help_text="The start of the session's first query.")
    # The MCP client (token and MCP session, apps.mcp.server.client_key) whose conversation this is, so each
    # client goes on with its own session when it names none. Empty for sessions started over REST.
    client_key = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_activity = models.DateTimeField()

    class Meta:
        ordering = ["-last_activity"]
        indexes = [models.Index(fields=["owner", "-last_activity"], name="chat_session_owner_activity")]

    def __str__(self) -> str:
        return self.title


class ChatMessage(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    class Method(models.TextChoices):
        LLM = "llm", "Configured language model"
        SAMPLING = "sampling", "MCP client's model (sampling)"
        EXTRACTIVE = "extractive", "Extractive (no model)"
        NONE = "none", "Nothing relevant (no answer composed)"

    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    # The memories an answer was built from: [{memory_id, cube_id, relevance_score}], as the answer numbers them
    # ([1] first); empty when none reached the relevance floor. Ids, not foreign keys: the record of what was used
    # stays true after a memory is deleted.
    context_used = models.JSONField(default=list, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    method = models.CharField(max_length=10, choices=Method.choices, blank=True, help_text="Assistant turns only.")
    model = models.CharField(max_length=200, blank=True, help_text="Assistant turns only.")

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "created_at"], name="chat_message_session_created")]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"
