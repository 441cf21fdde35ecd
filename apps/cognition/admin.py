"""Admin for Context Graph (apps/cognition). Its rows are made and changed by services, so every change form is
read-only and every action calls a service with the curator as the actor, in the services' curator mode
(apps/cognition/services/curators.py: staff with the model's change permission act in the row owner's graph, and the
records name the curator). Vectors are never rendered (a session item's vector, an undo snapshot's rows)."""
import json

from django.contrib import admin

from apps.accounts.models import User
from apps.cognition.dream_answers import dream_steps
from apps.cognition.models import (
    ActivityState, Annotation, BenchmarkRun, BlindSpot, CgSession, ConsolidationRun, CurationTask, Event, NodeProfile,
    ScratchpadItem, SessionItem, Tombstone, UndoEntry,
)
from apps.cognition.services.blind_spots import blind_spot_resolve
from apps.cognition.services.decisions import task_approve, task_reject
from apps.cognition.services.dream import dream_interrupt
from apps.cognition.services.gardener.cycle import gardener_request
from apps.cognition.services.quarantine import node_release
from apps.cognition.services.scratchpad import scratchpad_clear
from apps.cognition.services.undo import node_restore, undo_apply, undo_plan
from apps.cognition.tasks import gardener_queue
from apps.core.admin import run_for_each
from apps.core.exceptions import DomainError

TEXT_PREVIEW_CHARS = 80


def _preview(text: str) -> str:
    return text if len(text) <= TEXT_PREVIEW_CHARS else text[:TEXT_PREVIEW_CHARS] + "…"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Read-only change form, no add, no delete: writes go through the services (the actions)."""

    # Fields never shown: vectors and snapshots of vectors.
    hidden_fields: tuple[str, ...] = ()

    def get_fields(self, request, obj=None):
        return self.get_readonly_fields(request, obj)

    def get_readonly_fields(self, request, obj=None):
        return tuple(field.name for field in self.model._meta.fields if field.name not in self.hidden_fields)

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        # A row's page is a view page (nothing to save); the actions still need the change permission.
        return obj is None and super().has_change_permission(request)


@admin.register(CurationTask)
class CurationTaskAdmin(ReadOnlyAdmin):
    list_display = ("task_type", "owner", "status", "priority", "suggested_tool", "reason_preview", "created_at")
    list_filter = ("status", "task_type", "priority", "owner")
    list_select_related = ("owner",)
    search_fields = ("reason",)
    date_hierarchy = "created_at"
    actions = ["approve", "reject"]

    @admin.display(description="reason")
    def reason_preview(self, task):
        return _preview(task.reason)

    @admin.action(description="Approve selected tasks (run the suggested tool)", permissions=["change"])
    def approve(self, request, queryset):
        run_for_each(self, request, queryset,
                     lambda pk: task_approve(actor=request.user, task_id=pk, curator=True), "Approved")

    @admin.action(description="Reject selected tasks", permissions=["change"])
    def reject(self, request, queryset):
        run_for_each(self, request, queryset,
                     lambda pk: task_reject(actor=request.user, task_id=pk, curator=True), "Rejected")


@admin.register(UndoEntry)
class UndoEntryAdmin(ReadOnlyAdmin):
    list_display = ("reversal_hash", "operation", "owner", "created_at", "expires_at", "used_at")
    list_filter = ("operation", "owner")
    list_select_related = ("owner",)
    search_fields = ("reversal_hash",)
    hidden_fields = ("snapshot",)
    actions = ["apply_undo"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("snapshot")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The page shows the undo's plan as the owner would see it, inertly: a view keeps no preview digest, so
        opening the page never makes a later apply (here, or the owner's) fail because the graph moved on."""
        try:
            plan = undo_plan(actor=request.user, reversal_hash=object_id, curator=True).as_dict()
        except DomainError as error:
            preview = {"error": error.message}
        else:
            preview = {"rows": [
                ("Brings back nodes", ", ".join(plan["adds"]["nodes"]) or "none"),
                ("Brings back edges", plan["adds"]["edges"]),
                ("Removes nodes", ", ".join(plan["removes"]["nodes"]) or "none"),
                ("Removes edges", plan["removes"]["edges"]),
                ("Removes annotations", plan["removes"]["annotations"]),
                ("Changes back", json.dumps(plan["changes"]) if plan["changes"] else "nothing"),
                ("Edges that cannot come back", plan["edges_lost"]),
            ]}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "undo_preview": preview})

    @admin.action(description="Apply the selected undos", permissions=["change"])
    def apply_undo(self, request, queryset):
        run_for_each(self, request, queryset, lambda pk: undo_apply(
            actor=request.user, reversal_hash=pk, preview=False, curator=True), "Applied")


@admin.register(Tombstone)
class TombstoneAdmin(ReadOnlyAdmin):
    list_display = ("memory_preview", "reason", "actor_label", "created_at", "deadline")
    list_filter = ("reason",)
    list_select_related = ("memory",)
    search_fields = ("memory__content",)
    actions = ["restore"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("memory__search_vector")

    @admin.display(description="node")
    def memory_preview(self, tombstone):
        return _preview(tombstone.memory.content)

    @admin.action(description="Restore selected nodes (the undo of what removed them)", permissions=["change"])
    def restore(self, request, queryset):
        # Only whoever removed a node may undo it: the curator acts in the undo owner's graph.
        run_for_each(self, request, queryset, lambda pk: node_restore(actor=request.user, node_id=pk, curator=True),
                     "Restored")


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "action", "owner", "actor_label", "node_count", "reason_preview")
    list_filter = ("action", "owner")
    list_select_related = ("owner",)
    search_fields = ("reason", "reversal_hash")
    date_hierarchy = "created_at"

    @admin.display(description="nodes")
    def node_count(self, event):
        return len(event.node_ids)

    @admin.display(description="reason")
    def reason_preview(self, event):
        return _preview(event.reason)


class SessionItemInline(admin.TabularInline):
    model = SessionItem
    fields = ("created_at", "kind", "text", "delta_s", "activated")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-created_at",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("vector")

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(CgSession)
class CgSessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner", "agent_id", "interactions", "entropy", "coherence", "updated_at")
    list_filter = ("owner",)
    list_select_related = ("owner",)
    search_fields = ("agent_id",)
    inlines = [SessionItemInline]


@admin.register(SessionItem)
class SessionItemAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "kind", "text_preview", "session", "delta_s")
    list_filter = ("kind",)
    search_fields = ("text",)
    hidden_fields = ("vector",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("vector")

    @admin.display(description="text")
    def text_preview(self, item):
        return _preview(item.text)


@admin.register(NodeProfile)
class NodeProfileAdmin(ReadOnlyAdmin):
    list_display = ("memory_preview", "name", "modality", "domain", "johari", "quarantined", "activations",
                    "last_activated_at")
    list_filter = ("quarantined", "modality", "domain", "johari")
    list_select_related = ("memory",)
    search_fields = ("name", "rationale", "memory__content")
    actions = ["release"]

    @admin.action(description="Release selected quarantined nodes (back into retrieval, with their links)",
                  permissions=["change"])
    def release(self, request, queryset):
        # The curator reviews in the node owner's graph; the release is recorded as the curator's.
        run_for_each(self, request, queryset, lambda pk: node_release(actor=request.user, node_id=pk, curator=True),
                     "Released")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("memory__search_vector")

    @admin.display(description="node")
    def memory_preview(self, profile):
        return _preview(profile.memory.content)


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdmin):
    list_display = ("text_preview", "annotation_type", "author_label", "memory_id", "created_at")
    list_filter = ("annotation_type",)
    search_fields = ("text",)

    @admin.display(description="text")
    def text_preview(self, annotation):
        return _preview(annotation.text)


@admin.register(ScratchpadItem)
class ScratchpadItemAdmin(ReadOnlyAdmin):
    list_display = ("content_preview", "owner", "agent_id", "session_id", "privacy", "created_at", "expires_at")
    list_filter = ("privacy", "owner")
    list_select_related = ("owner",)
    search_fields = ("content", "agent_id")
    actions = ["clear_pads"]

    @admin.display(description="content")
    def content_preview(self, item):
        return _preview(item.content)

    @admin.action(description="Clear the pads of the selected items (the agent's own items in that session)",
                  permissions=["change"])
    def clear_pads(self, request, queryset):
        # One clear per pad (owner, session, agent): it removes every item of the agent's in that session.
        pads: dict[tuple, object] = {}
        for pk, owner_id, session_id, agent_id in queryset.values_list("pk", "owner_id", "session_id", "agent_id"):
            pads.setdefault((owner_id, session_id, agent_id), pk)
        keys = {pk: (session_id, agent_id) for (_, session_id, agent_id), pk in pads.items()}
        run_for_each(self, request, queryset.filter(pk__in=keys), lambda pk: scratchpad_clear(
            actor=request.user, session_id=keys[pk][0], agent_id=keys[pk][1], curator=True), "Cleared the pads of")


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner", "phase", "status", "current_step", "batches", "stop_reason", "created_at",
                    "finished_at")
    list_filter = ("status", "phase", "owner")
    list_select_related = ("owner",)
    search_fields = ("id", "reversal_hash")
    date_hierarchy = "created_at"
    actions = ["interrupt", "undo"]

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), "steps")

    @admin.display(description="step")
    def current_step(self, run):
        return run.checkpoint.get("phase") or "-"

    @admin.display(description="batches")
    def batches(self, run):
        return run.progress.get("batches", 0)

    @admin.display(description="stopped because")
    def stop_reason(self, run):
        return run.progress.get("stop_reason", "-")

    @admin.display(description="steps (batches, items)")
    def steps(self, run):
        return "; ".join(f"{step['label']}: {step['state']} ({step['batches']}, {step['items']})"
                         for step in dream_steps(run))

    @admin.action(description="Interrupt the selected dreams (they stop at their next batch, resumable)",
                  permissions=["change"])
    def interrupt(self, request, queryset):
        run_for_each(self, request, queryset,
                     lambda pk: dream_interrupt(actor=request.user, run_id=pk, curator=True), "Interrupted")

    @admin.action(description="Undo the selected dreams (everything each changed, by its reversal hash)",
                  permissions=["change"])
    def undo(self, request, queryset):
        hashes = dict(queryset.values_list("pk", "reversal_hash"))
        run_for_each(self, request, queryset, lambda pk: undo_apply(
            actor=request.user, reversal_hash=hashes[pk], preview=False, curator=True), "Undid")
@admin.register(BlindSpot)
class BlindSpotAdmin(ReadOnlyAdmin):
    list_display = ("kind", "owner", "query_preview", "best_score", "created_at", "resolved_at")
    list_filter = ("kind", "owner")
    list_select_related = ("owner",)
    search_fields = ("query",)
    date_hierarchy = "created_at"
    actions = ["resolve"]

    @admin.display(description="query")
    def query_preview(self, spot):
        return _preview(spot.query)

    @admin.action(description="Resolve selected blind spots", permissions=["change"])
    def resolve(self, request, queryset):
        run_for_each(self, request, queryset,
                     lambda pk: blind_spot_resolve(actor=request.user, blind_spot_id=pk, curator=True), "Resolved")


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(ReadOnlyAdmin):
    list_display = ("test_type", "owner", "status", "phase", "needle_count", "haystack_size", "created_at",
                    "finished_at")
    list_filter = ("status", "test_type", "owner")
    list_select_related = ("owner",)
    date_hierarchy = "created_at"
    # Per-query outcomes and the needle map are working state; the report holds the figures.
    hidden_fields = ("outcomes", "needles")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("outcomes", "needles")
@admin.register(ActivityState)
class ActivityStateAdmin(ReadOnlyAdmin):
    list_display = ("owner", "activity", "low_since", "last_query_at", "last_cycle_at", "last_cycle_status",
                    "last_dream_at")
    list_select_related = ("owner",)
    search_fields = ("owner__username",)
    actions = ["run_gardener"]

    @admin.display(description="last cycle")
    def last_cycle_status(self, state):
        return (state.last_cycle or {}).get("status", "—")

    @admin.action(description="Run a gardener cycle now for the selected users", permissions=["change"])
    def run_gardener(self, request, queryset):
        # The curator queues the owner's cycle in the owner's graph (their cubes, their undo); the worker runs it.
        def queue(pk):
            gardener_queue(User.objects.get(pk=pk), gardener_request(actor=request.user, owner_id=pk, curator=True,
                                                                     trigger="admin"))

        run_for_each(self, request, queryset, queue, "Queued a gardener cycle for")
