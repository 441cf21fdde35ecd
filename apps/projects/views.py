"""Mind's pages (/projects/): projects, their decisions, issues, sharp edges, sessions and episodes, the
check-edges tool and exports, for people, over the same services and selectors as REST and MCP.

As on every page (apps/core/pages.py), each view parses its input with a form,
calls one service or selector and renders. Another user's project or entity is the 404 page (nothing
leaks), a service's InvalidInput goes next to the form field it names, other domain errors too (or
above the form). Deletes are soft and reversible; every change is a POST with the CSRF token.
"""
from __future__ import annotations

import uuid
from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods, require_POST

from apps.core.pages import act, not_found_is_404, submit
from apps.projects.forms import (
    AttemptForm, CheckEdgesForm, DecisionForm, EdgeForm, EpisodeForm, ExportForm, IssueForm, IssueUpdateForm,
    ProjectCreateForm, ProjectEditForm, ProjectFilterForm, pattern_rows, patterns_from_rows, show_service_error,
)
from apps.projects.models import Issue
from apps.projects.selectors import (
    ENTITY_LABELS, decision_get, decision_list, edge_get, edge_list, entity_get, episode_get, episode_list, issue_get,
    issue_list, project_get, project_get_shown, project_list, projects_readable, session_list,
)
from apps.projects.services import (
    decision_add, decision_update, edge_add, edge_update, edges_check, entity_delete, entity_restore, episode_update,
    export_list, export_path, issue_add, issue_update, project_create, project_delete, project_export, project_primer,
    project_restore, project_update,
)

# URL segment -> the services' kind.
ENTITY_KINDS: dict[str, str] = {
    "decisions": "decision", "issues": "issue", "edges": "sharp_edge", "episodes": "episode",
}


def _project_page(project_id) -> HttpResponse:
    return redirect("projects:project-detail", project_id=project_id)


def _return_project(request, entity) -> uuid.UUID | None:
    """The project page to go back to: the one the button was on (``?project=``, how a global sharp edge
    knows), else the entity's own. Only an id: the page itself still checks access."""
    raw = request.POST.get("project") or request.GET.get("project")
    try:
        return uuid.UUID(raw) if raw else entity.project_id
    except ValueError:
        return entity.project_id


def _back_to(project_id) -> HttpResponse:
    return _project_page(project_id) if project_id else redirect("projects:project-list")


@login_required
@require_http_methods(["GET", "POST"])
def project_index(request):
    """The list (filtered by status) with the New project form; a POST creates the project."""
    filters = ProjectFilterForm(request.GET)
    filters.is_valid()
    form = ProjectCreateForm(request.POST or None)

    def save():
        project = project_create(actor=request.user, **form.service_arguments())
        messages.success(request, f"Project “{project.name}” created.")
        return _project_page(project.pk)

    response = submit(request, form, save, show_error=show_service_error)
    if response:
        return response
    projects = project_list(actor=request.user, status=filters.cleaned_data.get("status") or None,
                            include_deleted=bool(filters.cleaned_data.get("deleted")))
    return render(request, "projects/project_list.html", {
        "projects": projects, "filters": filters, "form": form, "export_form": ExportForm(),
    })


def _issues_by_severity(issues) -> list[dict]:
    """Open issues in groups, blocking first; the closed ones come last as one group."""
    open_issues = [issue for issue in issues if issue.status not in Issue.CLOSED]
    groups = [
        {"label": label, "severity": value, "issues": [i for i in open_issues if i.severity == value]}
        for value, label in Issue.Severity.choices
    ]
    closed = [issue for issue in issues if issue.status in Issue.CLOSED]
    return [group for group in groups if group["issues"]] + (
        [{"label": "Closed", "severity": "closed", "issues": closed}] if closed else [])


@login_required
@not_found_is_404
def project_detail(request, project_id):
    project = project_get_shown(actor=request.user, project_id=project_id)
    if project.is_deleted:  # its owner (whoever may restore it) sees it read only, to restore it
        return render(request, "projects/project_deleted.html", {"project": project})
    show_deleted = request.GET.get("deleted") == "1"
    # Deleted entities are listed too (marked, with Restore) only when asked for.
    scope = {"actor": request.user, "project_id": project, "include_deleted": show_deleted}
    issues = list(issue_list(**scope))
    return render(request, "projects/project_detail.html", {
        "project": project, "show_deleted": show_deleted,
        "primer": project_primer(actor=request.user, project_id=project).primer,
        "decisions": decision_list(**scope), "edges": edge_list(**scope, include_global=True),
        "episodes": episode_list(**scope),
        "issue_groups": _issues_by_severity(issues),
        "open_issue_count": sum(1 for issue in issues if issue.status not in Issue.CLOSED and not issue.is_deleted),
        "sessions": session_list(actor=request.user, project_id=project),
        "export_form": ExportForm(initial={"project": project.pk}),
    })


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def project_edit(request, project_id):
    project = project_get(actor=request.user, project_id=project_id)
    form = ProjectEditForm.for_instance(project, data=request.POST or None)

    def save():
        project_update(actor=request.user, project_id=project.pk, **form.changes())
        messages.success(request, "Project saved.")
        return _project_page(project.pk)

    return submit(request, form, save, show_error=show_service_error) or render(request, "projects/form.html", {
        "form": form, "project": project, "title": f"Edit {project.name}", "submit": "Save",
    })


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def project_delete_view(request, project_id):
    project = project_get(actor=request.user, project_id=project_id)
    if request.method == "POST":
        if act(request, lambda: project_delete(actor=request.user, project_id=project.pk),
               format_html('Project “{}” moved to the <a href="{}">trash</a>.', project.name, reverse("trash:index")),
               undo_url=reverse("projects:project-restore", args=[project.pk])):
            return redirect("projects:project-list")
        return _project_page(project.pk)
    return render(request, "projects/confirm_delete.html", {
        "what": f"the project “{project.name}”", "cancel_url": reverse("projects:project-detail", args=[project.pk]),
        "note": "Its decisions, issues and sharp edges are hidden with it until you restore it.",
    })


@login_required
@require_POST
@not_found_is_404
def project_restore_view(request, project_id):
    project = project_get(actor=request.user, project_id=project_id, include_deleted=True)
    if act(request, lambda: project_restore(actor=request.user, project_id=project.pk),
            f"Project “{project.name}” restored."):
        return _project_page(project.pk)
    return redirect(reverse("projects:project-list") + "?deleted=on")


def _entity_form_page(request, *, template_context: dict, form, save, rows=None) -> HttpResponse:
    show_error = partial(show_service_error, rows=rows)
    return submit(request, form, save, rows=rows, show_error=show_error) or render(request, "projects/form.html", {
        "form": form, "rows": rows, **template_context,
    })


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def decision_create(request, project_id):
    project = project_get(actor=request.user, project_id=project_id)
    form = DecisionForm(request.POST or None)

    def save():
        added = decision_add(actor=request.user, project_id=project.pk, **form.service_arguments())
        note = f" It supersedes “{added.superseded.title}”." if added.superseded else ""
        messages.success(request, f"Decision recorded.{note}")
        return _project_page(project.pk)

    return _entity_form_page(request, form=form, save=save, template_context={
        "project": project, "title": "Record a decision", "submit": "Record decision"})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def decision_edit(request, entity_id):
    decision = decision_get(actor=request.user, decision_id=entity_id)
    form = DecisionForm.for_instance(decision, data=request.POST or None, editing=True)

    def save():
        decision_update(actor=request.user, decision_id=decision.pk, **form.changes())
        messages.success(request, "Decision saved.")
        return _project_page(decision.project_id)

    return _entity_form_page(request, form=form, save=save, template_context={
        "project": decision.project, "title": "Edit decision", "submit": "Save", "entity": decision,
        "kind": "decisions"})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def episode_edit(request, entity_id):
    episode = episode_get(actor=request.user, episode_id=entity_id)
    form = EpisodeForm.for_instance(episode, data=request.POST or None)

    def save():
        episode_update(actor=request.user, episode_id=episode.pk, **form.changes())
        messages.success(request, "Episode saved.")
        return _project_page(episode.project_id)

    return _entity_form_page(request, form=form, save=save, template_context={
        "project": episode.project, "title": "Edit episode", "submit": "Save", "entity": episode,
        "kind": "episodes"})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def issue_create(request, project_id):
    project = project_get(actor=request.user, project_id=project_id)
    form = IssueForm(request.POST or None)

    def save():
        issue = issue_add(actor=request.user, project_id=project.pk, **form.service_arguments())
        messages.success(request, f"Issue “{issue.title}” opened.")
        return _project_page(project.pk)

    return _entity_form_page(request, form=form, save=save, template_context={
        "project": project, "title": "Open an issue", "submit": "Open issue"})


def _issue_page(request, issue, *, form, attempt_form) -> HttpResponse:
    # Attempts keep their moment as an ISO string (JSON); the page shows it as a date.
    attempts = [{**attempt, "at": parse_datetime(attempt.get("at") or "")} for attempt in issue.attempts]
    return render(request, "projects/issue_detail.html", {
        "issue": issue, "project": issue.project, "attempts": attempts, "form": form, "attempt_form": attempt_form,
    })


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def issue_detail(request, entity_id):
    """The issue with its attempts; its form updates status, theory, resolution and the rest."""
    issue = issue_get(actor=request.user, issue_id=entity_id)
    form = IssueUpdateForm.for_instance(issue, data=request.POST or None)

    def save():
        issue_update(actor=request.user, issue_id=issue.pk, **form.changes())
        messages.success(request, "Issue saved.")
        return redirect("projects:issue-detail", entity_id=issue.pk)

    return submit(request, form, save, show_error=show_service_error) or _issue_page(
        request, issue, form=form, attempt_form=AttemptForm())


@login_required
@require_POST
@not_found_is_404
def issue_attempt(request, entity_id):
    issue = issue_get(actor=request.user, issue_id=entity_id)
    attempt_form = AttemptForm(request.POST)

    def save():
        issue_update(actor=request.user, issue_id=issue.pk, add_attempt=attempt_form.attempt())
        messages.success(request, "Attempt added.")
        return redirect("projects:issue-detail", entity_id=issue.pk)

    return submit(request, attempt_form, save, show_error=show_service_error) or _issue_page(
        request, issue, form=IssueUpdateForm.for_instance(issue), attempt_form=attempt_form)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def edge_create(request, project_id):
    project = project_get(actor=request.user, project_id=project_id)
    form = EdgeForm(request.POST or None)
    rows = pattern_rows(request.POST or None)

    def save():
        edge = edge_add(actor=request.user, project_id=None if form.cleaned_data["is_global"] else project.pk,
                        detection_patterns=patterns_from_rows(rows), **form.service_arguments())
        messages.success(request, f"Sharp edge “{edge.title}” added{' (global)' if edge.is_global else ''}.")
        return _project_page(project.pk)

    return _entity_form_page(request, form=form, rows=rows, save=save, template_context={
        "project": project, "title": "Add a sharp edge", "submit": "Add sharp edge"})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def edge_edit(request, entity_id):
    edge = edge_get(actor=request.user, edge_id=entity_id)
    form = EdgeForm.for_instance(edge, data=request.POST or None, editing=True)
    rows = pattern_rows(request.POST or None, edge.detection_patterns)
    back = _return_project(request, edge)

    def save():
        changes = form.changes()
        patterns = patterns_from_rows(rows)
        if patterns != edge.detection_patterns:
            changes["detection_patterns"] = patterns
        edge_update(actor=request.user, edge_id=edge.pk, **changes)
        messages.success(request, "Sharp edge saved.")
        return _back_to(back)

    return _entity_form_page(request, form=form, rows=rows, save=save, template_context={
        "project": edge.project, "title": "Edit sharp edge", "submit": "Save", "entity": edge, "kind": "edges"})


def _entity(request, segment: str, entity_id):
    kind = ENTITY_KINDS[segment]
    entity = entity_get(actor=request.user, kind=kind, entity_id=entity_id, include_deleted=True)
    return kind, entity, ENTITY_LABELS[kind].lower()


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def entity_delete_view(request, segment: str, entity_id):
    kind, entity, label = _entity(request, segment, entity_id)
    if request.method == "POST":
        back = _return_project(request, entity)
        act(request, lambda: entity_delete(actor=request.user, kind=kind, entity_id=entity.pk),
            format_html('The {} “{}” moved to the <a href="{}">trash</a>.', label, entity.title, reverse("trash:index")),
            undo_url=reverse(f"projects:{segment[:-1]}-restore", args=[entity.pk]) + (f"?project={back}" if back else ""))
        return _back_to(back)
    project_id = _return_project(request, entity)
    return render(request, "projects/confirm_delete.html", {
        "what": f"the {label} “{entity.title}”", "project_id": project_id,
        "cancel_url": reverse("projects:project-detail", args=[project_id]) if project_id
        else reverse("projects:project-list"),
        "note": "It is hidden from the project, from agents and from search until you restore it.",
    })


@login_required
@require_POST
@not_found_is_404
def entity_restore_view(request, segment: str, entity_id):
    kind, entity, label = _entity(request, segment, entity_id)
    act(request, lambda: entity_restore(actor=request.user, kind=kind, entity_id=entity.pk),
         f"The {label} “{entity.title}” was restored.")
    return _back_to(_return_project(request, entity))


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def check_edges(request):
    """Paste code or say what you intend: the sharp edges whose patterns match. Nobody's session is
    involved, so every match is shown (no warn-once suppression)."""
    form = CheckEdgesForm(request.POST or None, projects=projects_readable(actor=request.user),
                          initial={"project": request.GET.get("project", "")})
    warnings = None

    def run():
        nonlocal warnings
        warnings = edges_check(actor=request.user, **form.service_arguments())

    submit(request, form, run, show_error=show_service_error)
    return render(request, "projects/check.html", {"form": form, "warnings": warnings})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def export_index(request):
    """Your export files; a POST (from the list or a project's page) writes a new one."""
    form = ExportForm(request.POST or None)

    def save():
        result = project_export(actor=request.user, **form.service_arguments())
        counts = ", ".join(f"{count} {name}" for name, count in result.entities.items())
        messages.success(request, f"Exported {result.path.name} ({counts}).")
        return redirect("projects:export-list")

    response = submit(request, form, save, show_error=show_service_error)
    if response:
        return response
    if form.errors:
        for error in form.errors.values():
            messages.error(request, " ".join(error))
    return render(request, "projects/exports.html", {"files": export_list(actor=request.user)})


@login_required
@not_found_is_404
def export_download(request, name: str):
    path = export_path(actor=request.user, name=name)
    return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)
