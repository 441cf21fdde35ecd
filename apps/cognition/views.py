"""The Context Graph pages: the pulse of each session, the curation inbox, the undo history, the trash, the live
scratchpads and the dream runs, over the same services and selectors as the Context Graph MCP profile (see apps/core/pages.py for how
pages treat errors: someone else's task, undo or node is the 404 page)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from apps.cognition.dream_answers import dream_answer
from apps.cognition.forms import DreamTriggerForm, ReversalForm, ScratchpadClearForm, TaskApproveForm, TrashSearchForm
from apps.cognition.models import CurationTask
from apps.cognition.selectors.dreams import dreams_page
from apps.cognition.selectors.gardener import gardener_status
from apps.cognition.selectors.listings import (
    scratchpad_page, session_detail, sessions_page, tasks_page, trash_page, undo_page,
)
from apps.cognition.selectors.state import neuromodulation_get
from apps.cognition.selectors.tombstones import tombstones_search
from apps.cognition.services.curation import MergeResult
from apps.cognition.services.decisions import Decision, task_approve, task_reject
from apps.cognition.services.dream import dream_get, dream_interrupt, dream_trigger
from apps.cognition.services.gardener import limits as gardener_limits
from apps.cognition.services.gardener.cycle import gardener_request
from apps.cognition.services.scratchpad import scratchpad_clear
from apps.cognition.services.undo import UndoResult, node_restore, undo_apply
from apps.cognition.tasks import dream_queue, gardener_queue
from apps.core.exceptions import Conflict, DomainError, InvalidInput, NotFound
from apps.core.forms import add_service_error
from apps.core.pages import not_found_is_404

CONTEXT_GRAPH_MCP = "/mcp/context-graph/"
# Errors about an approval's note, shown under it: the decision's own (empty), the annotation's (too long, as is).
NOTE_FIELDS = {"note": "Write the correction that settles this ambiguity: it is added to each node.",
               "annotation": None}


@login_required
def pulse(request):
    page, rows = sessions_page(actor=request.user, page=request.GET.get("page"))
    return render(request, "cognition/pulse.html", {"page": page, "rows": rows, "mcp_path": CONTEXT_GRAPH_MCP,
                                                    "levels": neuromodulation_get(actor=request.user)})


@login_required
@not_found_is_404
def session(request, session_id):
    detail = session_detail(actor=request.user, session_id=session_id)
    return render(request, "cognition/session.html", {"detail": detail, "row": detail.row})


# --- the curation inbox ------------------------------------------------------------------------------------------

def _inbox(request, *, note_error_task: str = "", note_error: str = ""):
    open_page, open_rows = tasks_page(actor=request.user, page=request.GET.get("page"))
    closed_page, closed_rows = tasks_page(actor=request.user, closed=True, page=request.GET.get("closed_page"))
    return render(request, "cognition/inbox.html", {
        "open_page": open_page, "open_rows": open_rows, "closed_page": closed_page, "closed_rows": closed_rows,
        "note_error_task": note_error_task, "note_error": note_error, "mcp_path": CONTEXT_GRAPH_MCP,
    })


@login_required
def inbox(request):
    return _inbox(request)


def _undo_link(reversal_hash: str | None) -> str:
    return format_html(' <a href="{}#undo-{}">Undo</a>', reverse("dashboard:cognition-undo"),
                       reversal_hash[:12]) if reversal_hash else ""


def _approved(decision: Decision) -> str:
    """What approving did, in a line, with a link to its undo where it kept one."""
    outcome = decision.outcome
    if isinstance(outcome, MergeResult):
        if outcome.merged is None:
            return format_html("The nodes' priors disagree, so they were linked rather than merged. {}",
                               outcome.relational_note or "")
        return format_html('Merged {} nodes into <a href="{}">“{}”</a>.{}', outcome.nodes_merged,
                           reverse("dashboard:memory-detail", args=[outcome.merged.pk]),
                           outcome.merged.content[:80], _undo_link(outcome.reversal_hash))
    if decision.task.suggested_tool == CurationTask.SuggestedTool.FORGET_CONCEPT:
        deadline = outcome[0].restore_deadline if outcome else None
        return format_html("Moved {} node{} to the trash{}.{}", len(outcome), "" if len(outcome) == 1 else "s",
                           f", restorable until {deadline:%b %-d, %Y}" if deadline else "",
                           _undo_link(outcome[0].reversal_hash if outcome else None))
    return format_html("Wrote the correction on {} node{}.", len(outcome), "" if len(outcome) == 1 else "s")


@login_required
@require_POST
@not_found_is_404
def task_approve_view(request, task_id):
    form = TaskApproveForm(request.POST)
    form.is_valid()
    try:
        decision = task_approve(actor=request.user, task_id=task_id, note=form.cleaned_data.get("note", ""))
    except InvalidInput as error:
        field = error.extra.get("field")
        if field not in NOTE_FIELDS:
            messages.error(request, error.message)
            return redirect("dashboard:cognition-inbox")
        return _inbox(request, note_error_task=str(task_id), note_error=NOTE_FIELDS[field] or error.message)
    except NotFound as error:
        if error.extra.get("field") == "task_id":
            raise
        messages.error(request, error.message)  # a node of the task is gone since it was opened
        return redirect("dashboard:cognition-inbox")
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("dashboard:cognition-inbox")
    messages.success(request, _approved(decision))
    return redirect("dashboard:cognition-inbox")


@login_required
@require_POST
@not_found_is_404
def task_reject_view(request, task_id):
    try:
        task_reject(actor=request.user, task_id=task_id)
    except (Conflict, InvalidInput) as error:
        messages.error(request, error.message)
    else:
        messages.success(request, "Task rejected: these nodes will not be proposed for it again.")
    return redirect("dashboard:cognition-inbox")


# --- the undo history --------------------------------------------------------------------------------------------

def _plan_summary(result: UndoResult) -> dict:
    plan = result.plan
    return {"hash": plan.entry.reversal_hash, "restored": len(plan.restored_nodes), "added": len(plan.added_nodes),
            "edges": plan.restored_edges, "edges_lost": plan.lost_edges, "removed": plan.removed_nodes,
            "removed_links": plan.removed_links, "removed_annotations": plan.removed_annotations,
            "changed": plan.changed}


def _undo(request, *, preview: dict | None = None):
    page, rows = undo_page(actor=request.user, page=request.GET.get("page"))
    return render(request, "cognition/undo.html", {"page": page, "rows": rows, "preview": preview})


@login_required
def undo(request):
    return _undo(request)


def _reversal_hash(request) -> str:
    form = ReversalForm(request.POST)
    if not form.is_valid():
        raise NotFound("No such undo.")
    return form.cleaned_data["reversal_hash"]


@login_required
@require_POST
@not_found_is_404
def undo_preview(request):
    result = _run_undo(request, lambda: undo_apply(actor=request.user, reversal_hash=_reversal_hash(request),
                                                   preview=True), failed="No preview")
    if result is None:
        return redirect("dashboard:cognition-undo")
    return _undo(request, preview=_plan_summary(result))


def _undone(result: UndoResult) -> str:
    plan = result.plan
    removed = f", removed {len(plan.removed_nodes)} merged node{'s' * (len(plan.removed_nodes) != 1)}" \
        if plan.removed_nodes else ""
    return (f"Undone: the {plan.entry.get_operation_display().lower()} is reversed. "
            f"{len(plan.restored_nodes)} node{'s' * (len(plan.restored_nodes) != 1)} back as they were, "
            f"{plan.restored_edges} link{'s' * (plan.restored_edges != 1)} restored{removed}.")


@login_required
@require_POST
@not_found_is_404
def undo_execute(request):
    result = _run_undo(request, lambda: undo_apply(actor=request.user, reversal_hash=_reversal_hash(request),
                                                   preview=False), failed="Not undone")
    if result is not None:
        messages.success(request, _undone(result))
    return redirect("dashboard:cognition-undo")


def _run_undo(request, call, *, failed: str) -> UndoResult | None:
    """An undo's result, or None with the reason flashed (a changed plan in plain words); not found stays the 404."""
    try:
        return call()
    except Conflict:
        messages.error(request, f"{failed}: the graph has changed since you previewed this undo, so it would no "
                                "longer do what the preview showed. Preview it again on the undo history to see "
                                "what it would do now.")
    except DomainError as error:
        if isinstance(error, NotFound):
            raise
        messages.error(request, f"{failed}: {error.message}")
    return None


# --- the trash ---------------------------------------------------------------------------------------------------

@login_required
def trash(request):
    form = TrashSearchForm(request.GET or None)
    context = {"form": form, "hits": None, "page": None, "now": timezone.now()}
    if form.is_bound and form.is_valid() and form.cleaned_data["q"]:
        try:
            context["hits"] = tombstones_search(actor=request.user, query=form.cleaned_data["q"])
        except InvalidInput as error:
            add_service_error(form, error)
    if context["hits"] is None:
        context["page"] = trash_page(actor=request.user, page=request.GET.get("page"))
    return render(request, "cognition/trash.html", context)


@login_required
@require_POST
@not_found_is_404
def trash_restore(request, node_id):
    result = _run_undo(request, lambda: node_restore(actor=request.user, node_id=node_id), failed="Not restored")
    if result is not None:
        messages.success(request, format_html('Restored <a href="{}">the node</a>. {}',
                                              reverse("dashboard:memory-detail", args=[node_id]), _undone(result)))
    return redirect("dashboard:cognition-trash")


# --- scratchpads -------------------------------------------------------------------------------------------------

@login_required
def scratchpad(request):
    page = scratchpad_page(actor=request.user, page=request.GET.get("page"))
    return render(request, "cognition/scratchpad.html", {"page": page, "mcp_path": CONTEXT_GRAPH_MCP})


@login_required
@require_POST
def scratchpad_clear_view(request):
    form = ScratchpadClearForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a scratchpad to clear.")
        return redirect("dashboard:cognition-scratchpad")
    pad = scratchpad_clear(actor=request.user, **form.cleaned_data)
    if pad.cleared:
        messages.success(request, f"Cleared {pad.cleared} item{'s' * (pad.cleared != 1)} of "
                                  f"{form.cleaned_data['agent_id']}'s scratchpad.")
    else:
        messages.info(request, "That scratchpad was already empty.")
    return redirect("dashboard:cognition-scratchpad")


# --- the gardener ------------------------------------------------------------------------------------------------

# What a cycle's counters mean (one, several), in the order the page lists them.
CYCLE_CHANGES = (("edges_pruned", "weak idle link pruned", "weak idle links pruned"),
                 ("merges", "near-duplicate pair merged", "near-duplicate pairs merged"),
                 ("cycles_broken", "causal cycle cut at its weakest link", "causal cycles cut at their weakest link"),
                 ("tasks_opened", "curation task opened", "curation tasks opened"),
                 ("nodes_forgotten", "old unused orphan moved to the trash", "old unused orphans moved to the trash"),
                 ("nodes_purged", "expired node purged for good", "expired nodes purged for good"),
                 ("nodes_scaled", "node's importance scaled", "nodes' importance scaled"))


@login_required
def gardener(request):
    status = gardener_status(actor=request.user)
    counters = status.last_cycle.get("counters", {})
    return render(request, "cognition/gardener.html", {
        "status": status, "started": status.last_cycle_started, "outcome": cycle_outcome(status.last_cycle),
        "changes": [(one if counters[name] == 1 else several, counters[name])
                    for name, one, several in CYCLE_CHANGES if counters.get(name)],
        "rules": {"idle_activity": gardener_limits.IDLE_ACTIVITY, "max_nodes": gardener_limits.MAX_NODES,
                  "tick_seconds": gardener_limits.TICK_SECONDS,
                  "idle_minutes_for_cycle": gardener_limits.IDLE_SECONDS_FOR_CYCLE // 60,
                  "minutes_between_cycles": gardener_limits.SECONDS_BETWEEN_CYCLES // 60,
                  "idle_minutes_for_dream": gardener_limits.IDLE_SECONDS_FOR_DREAM // 60},
    })


STOP_REASONS = {"query": "a query of yours came in", "dream": "a dream of yours started",
                "lease": "another cycle of yours was running"}


def cycle_outcome(cycle: dict) -> tuple[str, str] | None:
    """A finished cycle's outcome as a sentence and its kind (success, warning, error), as the page shows it."""
    status = cycle.get("status")
    if status not in ("completed", "interrupted", "failed"):
        return None
    counters = cycle.get("counters") or {}
    changed = sum(counters.get(name, 0) for name, _, _ in CYCLE_CHANGES)
    counted = f"{changed} change{'s' * (changed != 1)}"
    if status == "completed":
        return "success", f"The cycle completed: {counted}."
    if status == "failed" and cycle.get("stop_reason") == "refused":
        return "error", (cycle.get("notes") or ["The cycle did not start."])[-1]
    if status == "failed":
        return "error", f"The cycle failed after {counted}; what its finished batches did is kept and can be undone."
    why = STOP_REASONS.get(cycle.get("stop_reason"), cycle.get("stop_reason"))
    # Stopped early: not a failure, and not a success either.
    return "warning", (f"The cycle stopped before it finished ({why}) after {counted}; what it did is kept and can be "
                       "undone.")


@login_required
@require_POST
def gardener_run_view(request):
    try:
        token = gardener_request(actor=request.user)
    except DomainError as error:
        messages.error(request, f"No cycle ran: {error.message}")
    else:
        gardener_queue(request.user, token)
        messages.info(request, "A cycle is queued: this page follows it as the worker runs it.")
    return redirect("dashboard:cognition-gardener")


# --- dream runs --------------------------------------------------------------------------------------------------

def _dreams(request, *, form: DreamTriggerForm | None = None, preview: dict | None = None, status: int = 200):
    page = dreams_page(actor=request.user, page=request.GET.get("page"))
    return render(request, "cognition/dreams.html", {
        "page": page, "runs": [dream_answer(run) for run in page.object_list], "form": form or DreamTriggerForm(),
        "preview": preview, "mcp_path": CONTEXT_GRAPH_MCP}, status=status)


@login_required
def dreams(request):
    return _dreams(request)


@login_required
@require_POST
def dream_trigger_view(request):
    form = DreamTriggerForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            run = dream_trigger(actor=request.user, phase=data["phase"], duration_minutes=data["duration_minutes"],
                                synthetic_query_count=data["synthetic_query_count"],
                                abort_on_query=data["abort_on_query"])
        except DomainError as error:
            add_service_error(form, error)
        else:
            dream_queue(run)
            messages.success(request, f"Dream {str(run.pk)[:8]} {'resumed' if run.started_at else 'started'}: it "
                                      "works in batches below; the page follows it.")
            return redirect(f"{reverse('dashboard:cognition-dreams')}#dream-{run.pk}")
    return _dreams(request, form=form, status=400)


@login_required
@require_POST
@not_found_is_404
def dream_interrupt_view(request, run_id):
    try:
        dream_interrupt(actor=request.user, run_id=run_id)
    except Conflict as error:
        messages.error(request, error.message)
    else:
        messages.success(request, "Interrupted: the dream stops at its next batch. Start a dream to resume it.")
    return redirect(f"{reverse('dashboard:cognition-dreams')}#dream-{run_id}")


def _dream_undo(request, run_id, *, preview: bool):
    """The dream's undo, previewed on the dreams page or applied (the result flashed), by its run's reversal hash."""
    run = dream_get(actor=request.user, run_id=run_id)
    result = _run_undo(request, lambda: undo_apply(actor=request.user, reversal_hash=run.reversal_hash,
                                                   preview=preview), failed="No preview" if preview else "Not undone")
    if result is not None and preview:
        return _dreams(request, preview={**_plan_summary(result), "run": str(run.pk)})
    if result is not None:
        messages.success(request, _undone(result))
    return redirect(f"{reverse('dashboard:cognition-dreams')}#dream-{run_id}")


@login_required
@require_POST
@not_found_is_404
def dream_undo_preview(request, run_id):
    return _dream_undo(request, run_id, preview=True)


@login_required
@require_POST
@not_found_is_404
def dream_undo(request, run_id):
    return _dream_undo(request, run_id, preview=False)
