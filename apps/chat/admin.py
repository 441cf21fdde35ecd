"""Admin for chat sessions and messages: a read-only view for staff, to look into what a conversation used.
Sessions can be deleted here (as clearing does); nothing is added or edited, since turns are only ever
written by chat_send, with the memories they used."""
from django.contrib import admin
from django.db.models import Count

from apps.chat.models import ChatMessage, ChatSession

MESSAGE_FIELDS = ("role", "content", "created_at", "context_used", "token_count", "method", "model")


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ChatMessageInline(admin.TabularInline):
    model = ChatMessage
    fields = MESSAGE_FIELDS
    readonly_fields = MESSAGE_FIELDS
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ChatSession)
class ChatSessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "title", "owner", "message_count", "last_activity", "created_at")
    list_select_related = ("owner",)
    search_fields = ("id", "title", "owner__username")
    date_hierarchy = "last_activity"
    inlines = [ChatMessageInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(message_total=Count("messages"))

    @admin.display(description="messages", ordering="message_total")
    def message_count(self, obj) -> int:
        return obj.message_total


@admin.register(ChatMessage)
class ChatMessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "session", "role", "method", "model", "token_count", "created_at")
    list_filter = ("role", "method")
    list_select_related = ("session",)
    search_fields = ("content", "session__id", "session__owner__username")
    fields = ("session", *MESSAGE_FIELDS)
    readonly_fields = fields
