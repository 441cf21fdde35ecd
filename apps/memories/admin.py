"""Admin for curating the memory graph. Memories are made and changed by services, so the change
form is read-only and every action (and the delete page) calls a service with the curator as the actor, in
the services' curator mode: staff with the 'change memory' permission curate every user's memories. Vectors are never
rendered: they are in MemoryVector, which has no admin."""
from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.defaultfilters import truncatechars
from django.utils.html import format_html

from apps.core.admin import run_for_each
from apps.core.exceptions import DomainError
from apps.memories.models import Memory, MemoryLink, ModelSwitch
from apps.memories.services import memory_boost, memory_delete, memory_reembed, memory_restore

CONTENT_PREVIEW_CHARS = 80
# A cube's name in the list and the filter sidebar: longer ones are cut (the whole name in the title), so one long
# name cannot stretch the sidebar over the list.
CUBE_NAME_CHARS = 28
MEMORY_FIELDS = (
    "content", "cube", "owner", "kind", "primary_sector", "importance", "salience", "strength", "decay_rate",
    "access_count", "last_accessed_at", "decayed_at", "session_id", "agent_id", "keywords", "tags", "category",
    "context", "metadata", "deleted_at", "deleted_by", "strength_before_delete", "created_at", "updated_at",
)


class DeletedFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("live", "Live"), ("deleted", "Deleted")]

    def queryset(self, request, queryset):
        if self.value() == "live":
            return queryset.filter(deleted_at__isnull=True)
        if self.value() == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


class CubeFilter(admin.RelatedFieldListFilter):
    """The cube filter with each name cut to CUBE_NAME_CHARS, the whole name in its title."""

    template = "admin/memories/truncated_filter.html"


class OutgoingLinkInline(admin.TabularInline):
    model = MemoryLink
    fk_name = "source"
    verbose_name = "outgoing link"
    verbose_name_plural = "outgoing links"
    fields = ("target", "link_type", "weight", "traversal_count", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("target")

    def has_add_permission(self, request, obj=None):
        return False




@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ("content_preview", "cube_name", "owner", "kind", "primary_sector", "state", "importance", "strength",
                    "created_at", "last_accessed_at")
    list_filter = ("kind", "primary_sector", DeletedFilter, ("cube", CubeFilter), "owner")
    list_select_related = ("cube", "owner")
    search_fields = ("content",)
    date_hierarchy = "created_at"
    fields = MEMORY_FIELDS
    readonly_fields = MEMORY_FIELDS
    inlines = [OutgoingLinkInline]
    actions = ["soft_delete", "restore", "reembed", "boost_importance"]

    @admin.display(description="content")
    def content_preview(self, memory):
        return memory.content if len(memory.content) <= CONTENT_PREVIEW_CHARS else memory.content[:CONTENT_PREVIEW_CHARS] + "…"

    @admin.display(description="cube", ordering="cube__name")
    def cube_name(self, memory):
        return format_html('<span title="{}">{}</span>', memory.cube.name, truncatechars(memory.cube.name, CUBE_NAME_CHARS))

    @admin.display(description="state", ordering="deleted_at")
    def state(self, memory):
        return "deleted" if memory.is_deleted else "live"

    def get_queryset(self, request):
        # The generated tsvector can be larger than the content and nothing here shows it.
        return super().get_queryset(request).defer("search_vector")

    def get_actions(self, request):
        # Bulk deletion is the soft delete action; a hard delete is one memory at a time, below.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def has_add_permission(self, request):
        return False  # memories are stored through memory_store (dashboard, REST, MCP, import)

    def delete_model(self, request, obj):
        memory_delete(actor=request.user, memory_id=obj.pk, soft=False, curator=True)

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except DomainError as error:
            self.message_user(request, error.message, messages.ERROR)
            return redirect("admin:memories_memory_change", object_id)

    def _curate(self, request, queryset, service, done: str) -> None:
        """Call ``service`` for every selected memory as the curator (the services' curator mode)."""
        run_for_each(self, request, queryset,
                     lambda pk: service(actor=request.user, memory_id=pk, curator=True), done)

    @admin.action(description="Soft delete selected memories", permissions=["change"])
    def soft_delete(self, request, queryset):
        self._curate(request, queryset, memory_delete, "Soft-deleted")

    @admin.action(description="Restore selected memories", permissions=["change"])
    def restore(self, request, queryset):
        self._curate(request, queryset, memory_restore, "Restored")

    @admin.action(description="Re-embed selected memories (vectors and links)", permissions=["change"])
    def reembed(self, request, queryset):
        self._curate(request, queryset, memory_reembed, "Re-embedded")

    @admin.action(description="Boost importance of selected memories (+0.1)", permissions=["change"])
    def boost_importance(self, request, queryset):
        self._curate(request, queryset, memory_boost, "Boosted")


@admin.register(MemoryLink)
class MemoryLinkAdmin(admin.ModelAdmin):
    list_display = ("source", "link_type", "target", "weight", "traversal_count", "created_at")
    list_filter = ("link_type",)
    list_select_related = ("source", "target")
    search_fields = ("source__content", "target__content")
    fields = ("source", "target", "link_type", "weight", "traversal_count", "created_at", "updated_at")
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("source__search_vector", "target__search_vector")

    def has_add_permission(self, request):
        return False  # links are made by the linking service when memories are stored


@admin.register(ModelSwitch)
class ModelSwitchAdmin(admin.ModelAdmin):
    """Embedding model switches and their progress: started by `manage.py switch_embedding_model`, never here (a
    switch loads a second model and runs for minutes to hours)."""

    list_display = ("model", "status", "done", "total", "created_at", "finished_at")
    list_filter = ("status",)
    fields = ("model", "dimensions", "status", "done", "total", "error", "created_at", "started_at", "updated_at",
              "finished_at")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
