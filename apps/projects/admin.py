"""Admin for curating Mind: projects, sessions, decisions, issues, sharp edges and episodes.

As for memories, these are made and changed by services (which keep each entity's memory-graph node in
step), so the change forms are read-only and the actions call the services with the curator as the
actor in the services' curator mode: staff with the model's change permission curate every user's
projects and entities (acting as the owner would, so each node follows). A failure is reported with its
reason.
"""
from django.contrib import admin
from django.db.models import Model
from django.urls import reverse
from django.utils.html import format_html

from apps.core.admin import run_for_each
from apps.memories.admin import DeletedFilter
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.services import entity_delete, entity_restore, project_delete, project_restore


def _field_names(model: type[Model]) -> tuple[str, ...]:
    """Every concrete field of the model but the memory node, which is shown as a link instead."""
    return tuple(field.name for field in model._meta.fields if field.name != "node")




class ServiceManagedAdmin(admin.ModelAdmin):
    """Read-only change form, no add or bulk delete: writes go through the services (the actions)."""

    def get_fields(self, request, obj=None):
        return self.get_readonly_fields(request, obj)

    def get_readonly_fields(self, request, obj=None):
        return _field_names(self.model)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # soft delete is the action below; nothing here deletes for good

    @admin.display(description="deleted", boolean=True, ordering="deleted_at")
    def is_deleted(self, obj) -> bool:
        return obj.is_deleted


@admin.register(Project)
class ProjectAdmin(ServiceManagedAdmin):
    list_display = ("name", "owner", "cube", "status", "last_session_at", "updated_at", "is_deleted")
    list_filter = ("status", DeletedFilter, "owner")
    list_select_related = ("owner", "cube")
    search_fields = ("name", "current_goal", "repo_path")
    actions = ["soft_delete", "restore"]

    @admin.action(description="Soft delete selected projects", permissions=["change"])
    def soft_delete(self, request, queryset):
        run_for_each(self, request, queryset, lambda pk: project_delete(actor=request.user, project_id=pk, curator=True),
                      "Soft-deleted")

    @admin.action(description="Restore selected projects", permissions=["change"])
    def restore(self, request, queryset):
        run_for_each(self, request, queryset, lambda pk: project_restore(actor=request.user, project_id=pk, curator=True),
                      "Restored")


@admin.register(Session)
class SessionAdmin(ServiceManagedAdmin):
    list_display = ("project", "owner", "started_at", "ended_at", "mood", "issue_updates")
    list_filter = ("project", "owner")
    list_select_related = ("project", "owner")
    search_fields = ("summary", "mood", "project__name")
    date_hierarchy = "started_at"


class EntityAdmin(ServiceManagedAdmin):
    """Decisions, issues, sharp edges and episodes: soft delete and restore through the entity services,
    which take their memory-graph node along."""

    kind: str
    list_select_related = ("project",)
    search_fields = ("title", "description")
    actions = ["soft_delete", "restore"]

    def get_readonly_fields(self, request, obj=None):
        return (*_field_names(self.model), "node_link")

    @admin.display(description="memory node")
    def node_link(self, entity) -> str:
        if entity.node_id is None:
            return "-"
        return format_html('<a href="{}">{}</a>', reverse("admin:memories_memory_change", args=[entity.node_id]),
                           entity.node_id)

    @admin.action(description="Soft delete selected", permissions=["change"])
    def soft_delete(self, request, queryset):
        run_for_each(self, request, queryset,
                      lambda pk: entity_delete(actor=request.user, kind=self.kind, entity_id=pk, curator=True), "Soft-deleted")

    @admin.action(description="Restore selected", permissions=["change"])
    def restore(self, request, queryset):
        run_for_each(self, request, queryset,
                      lambda pk: entity_restore(actor=request.user, kind=self.kind, entity_id=pk, curator=True), "Restored")


@admin.register(Decision)
class DecisionAdmin(EntityAdmin):
    kind = "decision"
    list_display = ("title", "project", "status", "confidence", "created_at", "is_deleted")
    list_filter = ("status", DeletedFilter, "project")
    search_fields = ("title", "description", "context", "reasoning")


@admin.register(Issue)
class IssueAdmin(EntityAdmin):
    kind = "issue"
    list_display = ("title", "project", "severity", "status", "created_at", "is_deleted")
    list_filter = ("status", "severity", DeletedFilter, "project")
    search_fields = ("title", "description", "current_theory", "resolution")


@admin.register(SharpEdge)
class SharpEdgeAdmin(EntityAdmin):
    kind = "sharp_edge"
    list_display = ("title", "project", "share_with_community", "created_at", "is_deleted")
    list_filter = (DeletedFilter, "share_with_community", "project")
    search_fields = ("title", "description", "workaround", "root_cause")


@admin.register(Episode)
class EpisodeAdmin(EntityAdmin):
    kind = "episode"
    list_display = ("title", "project", "session", "created_at", "is_deleted")
    list_select_related = ("project", "session__project")
    list_filter = (DeletedFilter, "project")
    search_fields = ("title", "narrative")
