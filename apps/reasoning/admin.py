"""Admin for curating reasoning: thought sessions (with their thoughts) and notebooks (with their cells).

Thoughts are hash-chained and written only by thought_add, so nothing here edits them: the forms are read-only
and the actions call the services for each row's owner (staff with the change permission curate every user's
sessions and notebooks, and the services keep thought nodes in step). "Verify hash chain" recomputes the chain
and reports each break, which is how a curator learns that a row was edited behind the services' back.
"""
from collections.abc import Callable

from django.contrib import admin, messages
from django.db.models import Count

from apps.core.exceptions import DomainError
from apps.memories.admin import DeletedFilter
from apps.core.admin import run_for_each
from apps.projects.admin import ServiceManagedAdmin
from apps.reasoning.models import Cell, Notebook, Thought, ThoughtSession
from apps.reasoning.services.notebooks import notebook_delete, notebook_restore
from apps.reasoning.services.thoughts import chain_verify, session_delete, session_restore

THOUGHT_FIELDS = ("thought_number", "total_thoughts", "thought", "branch_id", "branch_from_thought", "is_revision",
                  "revises_thought", "next_thought_needed", "agent_id", "content_hash", "parent_hash", "created_at")
CELL_FIELDS = ("position", "cell_type", "filename", "content", "status", "exit_code", "duration_ms", "stdout",
               "stderr", "executed_at")


class ReadOnlyInline(admin.StackedInline):
    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def has_add_permission(self, request, obj=None):
        return False


class ThoughtInline(ReadOnlyInline):
    model = Thought
    fields = THOUGHT_FIELDS


class CellInline(ReadOnlyInline):
    model = Cell
    fields = CELL_FIELDS


class OwnerCuratedAdmin(ServiceManagedAdmin):
    """Read-only change form, no add or bulk delete: writes go through the services (the actions), called for
    each row as its owner."""

    list_filter = (DeletedFilter, "owner")
    list_select_related = ("owner",)

    @admin.display(description="deleted", boolean=True, ordering="deleted_at")
    def is_deleted(self, obj) -> bool:
        return obj.deleted_at is not None

    def _for_owners(self, request, queryset, call: Callable, done: str) -> None:
        owners = {row.pk: row.owner for row in queryset.select_related("owner")}
        run_for_each(self, request, queryset, lambda pk: call(owners[pk], pk), done)


@admin.register(ThoughtSession)
class ThoughtSessionAdmin(OwnerCuratedAdmin):
    list_display = ("title", "owner", "thought_total", "completed_at", "updated_at", "is_deleted")
    search_fields = ("title", "tags", "owner__username")
    date_hierarchy = "updated_at"
    inlines = [ThoughtInline]
    actions = ["soft_delete", "restore", "verify_chain"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(thought_count=Count("thoughts"))

    @admin.display(description="thoughts", ordering="thought_count")
    def thought_total(self, obj) -> int:
        return obj.thought_count

    @admin.action(description="Soft delete selected sessions (with their thought nodes)", permissions=["change"])
    def soft_delete(self, request, queryset):
        self._for_owners(request, queryset, lambda owner, pk: session_delete(actor=owner, session_id=pk),
                         "Soft-deleted")

    @admin.action(description="Restore selected sessions", permissions=["change"])
    def restore(self, request, queryset):
        self._for_owners(request, queryset, lambda owner, pk: session_restore(actor=owner, session_id=pk), "Restored")

    @admin.action(description="Verify the hash chain of selected sessions", permissions=["view"])
    def verify_chain(self, request, queryset):
        for session in queryset.select_related("owner"):
            try:
                result = chain_verify(actor=session.owner, session_id=session.pk)
            except DomainError as error:
                self.message_user(request, f"{session.title}: {error.message}", messages.ERROR)
                continue
            if result.valid:
                self.message_user(request, f"{session.title}: chain intact ({result.checked} thoughts).",
                                  messages.SUCCESS)
            else:
                breaks = "; ".join(f"thought {item['thoughtNumber']}: {item['reason']}" for item in result.broken)
                self.message_user(request, f"{session.title}: chain BROKEN - {breaks}", messages.ERROR)


@admin.register(Notebook)
class NotebookAdmin(OwnerCuratedAdmin):
    list_display = ("title", "owner", "language", "template", "cell_total", "updated_at", "is_deleted")
    list_filter = ("language", DeletedFilter, "owner")
    search_fields = ("title", "owner__username")
    inlines = [CellInline]
    actions = ["soft_delete", "restore"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(cell_count=Count("cells"))

    @admin.display(description="cells", ordering="cell_count")
    def cell_total(self, obj) -> int:
        return obj.cell_count

    @admin.action(description="Soft delete selected notebooks", permissions=["change"])
    def soft_delete(self, request, queryset):
        self._for_owners(request, queryset, lambda owner, pk: notebook_delete(actor=owner, notebook_id=pk),
                         "Soft-deleted")

    @admin.action(description="Restore selected notebooks", permissions=["change"])
    def restore(self, request, queryset):
        self._for_owners(request, queryset, lambda owner, pk: notebook_restore(actor=owner, notebook_id=pk),
                         "Restored")
