"""The reasoning pages (/reasoning/): thought sessions drawn as trees, notebooks with their cells and outputs,
the mental models, and a workbench that runs ThoughtMCP's eight analyses, for people, over the same services
and selectors as REST and MCP.

As on every page (apps/core/pages.py), each view parses its input with a form, calls one
service or selector and renders. Another user's session or notebook is the 404 page (nothing leaks); a
service's InvalidInput goes next to the form field it names. Deletes are soft and reversible; every change is
a POST with the CSRF token.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from markdown_it import MarkdownIt

from apps.core.api.errors import DOMAIN_STATUS, error_body
from apps.core.exceptions import Conflict, DomainError, InvalidInput, NotFound
from apps.core.forms import add_service_error, in_form_words
from apps.core.pages import act, not_found_is_404, submit
from apps.reasoning import forms as reasoning_forms
from apps.reasoning.analysis.bias import BIAS_TYPES
from apps.reasoning.forms import (
    CellAddForm, CellEditForm, DependenciesForm, NotebookCreateForm, NotebookLoadForm, SessionCreateForm,
    SessionFilterForm, ThoughtForm,
)
from apps.reasoning.mental_models import MODELS, TAGS, model_get, models_list
from apps.reasoning.selectors import session_get, session_list, thoughts_of, tree_of
from apps.reasoning.services import analysis
from apps.reasoning.services.cell_runs import (
    cell_run_active, cell_run_cancel, cell_run_get, cell_run_start, cell_run_state, elapsed_ms,
)
from apps.reasoning.services.notebooks import (
    cell_add, cells_of, cell_update, notebook_create, notebook_delete, notebook_export, notebook_get,
    notebook_install_deps, notebook_list, notebook_load, notebook_restore, notebook_templates,
)
from apps.reasoning.services.thoughts import (
    session_delete, session_export, session_restore, thought_add, verify_thoughts,
)

# Thoughts people add on these pages are the dashboard's, as an MCP client's are its own.
DASHBOARD_CLIENT_KEY = "dashboard"
# A run's page reloads itself this often while the run is unfinished (for browsers without the page's script).
RUN_PAGE_REFRESH_SECONDS = 2
# Raw HTML in markdown is shown as text, and markdown-it refuses javascript: and data: links.
MARKDOWN = MarkdownIt("commonmark", {"html": False})


def render_markdown(text: str) -> SafeString:
    return mark_safe(MARKDOWN.render(text or ""))  # noqa: S308 -- escaped by markdown-it (html off)


def _download(content: str, *, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _file_stem(title: str, fallback: str) -> str:
    return slugify(title)[:60] or fallback


# The overview

@login_required
@require_http_methods(["GET", "POST"])
def overview(request):
    """Recent thought sessions (searchable by title or tag), notebooks, and a form that starts a session."""
    filters = SessionFilterForm(request.GET)
    form = SessionCreateForm(request.POST or None)

    def save():
        added = thought_add(actor=request.user, client_key=DASHBOARD_CLIENT_KEY, **form.service_arguments())
        messages.success(request, f"Session “{added.session.title}” started.")
        return redirect("reasoning:session-detail", session_id=added.session.pk)

    response = submit(request, form, save)
    if response:
        return response
    arguments = filters.selector_arguments()
    return render(request, "reasoning/overview.html", {
        "sessions": session_list(actor=request.user, **arguments), "filters": filters,
        "searching": bool(arguments["query"] or arguments["tag"]), "tag": arguments["tag"],
        "notebooks": notebook_list(actor=request.user)[:8], "form": form,
    })


# Thought sessions

def _next_thought_initial(thoughts) -> dict:
    """The add-thought form continues the chain: the next number, at least as many planned."""
    number = max((thought.thought_number for thought in thoughts), default=0) + 1
    planned = max((thought.total_thoughts for thought in thoughts), default=1)
    return {"thought_number": number, "total_thoughts": max(number, planned), "next_thought_needed": True}


def _drawn_tree(tree: dict) -> list[dict]:
    """The main line in order, each node with the branches that fork from it (``forks``), nested the same
    way when a branch forks from another branch; each node also gets its parent's and its revised thought's
    number for the labels, and its moment as a datetime."""
    nodes = [*tree["main"], *(node for branch in tree["branches"] for node in branch["thoughts"])]
    by_id = {node["id"]: node for node in nodes}
    for node in nodes:
        node["at"] = parse_datetime(node["timestamp"])
        node["forks"] = []
        node["parent"] = by_id.get(node["prev"])
        node["revised"] = by_id.get(node["revisesNode"])
    for branch in tree["branches"]:
        origin = by_id.get(branch["origin"])
        if origin is not None:
            origin["forks"].append(branch)
    # A branch whose fork point is gone from the chain still shows, after the main line.
    return tree["main"] + [{"orphan": branch} for branch in tree["branches"] if branch["origin"] not in by_id]


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def session_detail(request, session_id):
    session = session_get(actor=request.user, session_id=session_id, include_deleted=True)
    thoughts = thoughts_of(session)
    form = ThoughtForm(request.POST or None, initial=_next_thought_initial(thoughts))

    def save():
        added = thought_add(actor=request.user, client_key=DASHBOARD_CLIENT_KEY, session_id=session.pk,
                            **form.service_arguments())
        messages.success(request, f"Thought {added.thought.thought_number} added.")
        for notice in added.notices:
            messages.info(request, in_form_words(form, notice))
        return redirect(reverse("reasoning:session-detail", args=[session.pk]) + f"#thought-{added.thought.pk}")

    # Naming a thought that does not exist (revise or branch from it) is a mistake in a number typed.
    response = submit(request, form, save, inputs=("revises_thought", "branch_from_thought"))
    if response:
        return response
    return render(request, "reasoning/session_detail.html", {
        "session": session,
        "tree": _drawn_tree(tree_of(session, thoughts)),
        # chain_verify's own check, over the thoughts already loaded (a deleted session is verified too).
        "integrity": verify_thoughts(thoughts), "thought_count": len(thoughts),
        "form": form,
    })


@login_required
@require_GET
@not_found_is_404
def session_export_view(request, session_id):
    """The seed's Session Export Format, with its integrity check, as a .json attachment named as
    export_reasoning_chain names its files (UTC time)."""
    export = session_export(actor=request.user, session_id=session_id)
    stem = _file_stem(export["session"]["title"], "session")
    return _download(json.dumps(export, indent=2, ensure_ascii=False),
                     filename=f"thoughtbox-{stem}-{timezone.now():%Y%m%dT%H%M%S}.json",
                     content_type="application/json")


@login_required
@require_POST
@not_found_is_404
def session_delete_view(request, session_id):
    session = session_get(actor=request.user, session_id=session_id)
    if act(request, lambda: session_delete(actor=request.user, session_id=session.pk),
           format_html('Session “{}” moved to the <a href="{}">trash</a>.', session.title, reverse("trash:index")),
           undo_url=reverse("reasoning:session-restore", args=[session.pk])):
        return redirect("reasoning:overview")
    return redirect("reasoning:session-detail", session_id=session.pk)


@login_required
@require_POST
@not_found_is_404
def session_restore_view(request, session_id):
    act(request, lambda: session_restore(actor=request.user, session_id=session_id), "Session restored.")
    return redirect("reasoning:session-detail", session_id=session_id)


# Notebooks

@login_required
@require_http_methods(["GET", "POST"])
def notebook_index(request):
    """The notebooks with the forms that create one (empty or from a template) and load an exported one."""
    templates = notebook_templates()
    form = NotebookCreateForm(request.POST or None, templates=templates)

    def save():
        notebook = notebook_create(actor=request.user, **form.service_arguments())
        messages.success(request, f"Notebook “{notebook.title}” created.")
        return redirect("reasoning:notebook-detail", notebook_id=notebook.pk)

    return submit(request, form, save) or _notebook_list_page(request, form=form, templates=templates)


def _notebook_list_page(request, *, form=None, load_form=None, templates=None) -> HttpResponse:
    templates = templates if templates is not None else notebook_templates()
    show_deleted = request.GET.get("deleted") == "include"
    return render(request, "reasoning/notebook_list.html", {
        "notebooks": notebook_list(actor=request.user, include_deleted=show_deleted), "show_deleted": show_deleted,
        "form": form or NotebookCreateForm(templates=templates), "load_form": load_form or NotebookLoadForm(),
        "templates": templates, "execution_enabled": settings.ENGRAM_NOTEBOOK_EXECUTION,
    })


@login_required
@require_POST
def notebook_load_view(request):
    form = NotebookLoadForm(request.POST, request.FILES)

    def save():
        notebook = notebook_load(actor=request.user, text=form.cleaned_data["file"])
        messages.success(request, f"Notebook “{notebook.title}” loaded.")
        return redirect("reasoning:notebook-detail", notebook_id=notebook.pk)

    return submit(request, form, save) or _notebook_list_page(request, load_form=form)


def _notebook_page(request, notebook, *, add_form=None, edit_forms=None, deps_form=None) -> HttpResponse:
    """The notebook's page; a form that failed comes back bound, with its errors, the others fresh."""
    edit_forms = edit_forms or {}
    active = cell_run_active(actor=request.user, notebook=notebook)
    cells = [{
        "cell": cell, "run": active.get(cell.pk),
        "html": render_markdown(cell.content) if cell.cell_type == cell.CellType.MARKDOWN else "",
        "form": edit_forms.get(cell.pk) or CellEditForm(initial={"content": cell.content, "filename": cell.filename},
                                                        prefix=f"cell-{cell.pk}"),
    } for cell in cells_of(notebook)]
    return render(request, "reasoning/notebook_detail.html", {
        "notebook": notebook, "cells": cells, "add_form": add_form or CellAddForm(),
        "deps_form": deps_form or DependenciesForm(), "execution_enabled": settings.ENGRAM_NOTEBOOK_EXECUTION,
    })


def _notebook_url(notebook_id, cell_id=None) -> str:
    return reverse("reasoning:notebook-detail", args=[notebook_id]) + (f"#cell-{cell_id}" if cell_id else "")


@login_required
@require_GET
@not_found_is_404
def notebook_detail(request, notebook_id):
    # A deleted notebook is shown read only to its owner (notebooks are nobody else's), to restore it.
    return _notebook_page(request, notebook_get(actor=request.user, notebook_id=notebook_id, include_deleted=True))


@login_required
@require_POST
@not_found_is_404
def cell_add_view(request, notebook_id):
    notebook = notebook_get(actor=request.user, notebook_id=notebook_id)
    form = CellAddForm(request.POST)

    def save():
        cell = cell_add(actor=request.user, notebook_id=notebook.pk, **form.service_arguments())
        messages.success(request, "Cell added.")
        return redirect(_notebook_url(notebook.pk, cell.pk))

    return submit(request, form, save) or _notebook_page(request, notebook, add_form=form)


@login_required
@require_POST
@not_found_is_404
def cell_edit_view(request, notebook_id, cell_id):
    notebook = notebook_get(actor=request.user, notebook_id=notebook_id)
    form = CellEditForm(request.POST, prefix=f"cell-{cell_id}")

    def save():
        cell = cell_update(actor=request.user, notebook_id=notebook.pk, cell_id=cell_id, **form.service_arguments())
        messages.success(request, "Cell saved.")
        return redirect(_notebook_url(notebook.pk, cell.pk))

    return submit(request, form, save) or _notebook_page(request, notebook, edit_forms={cell_id: form})


def _wants_json(request) -> bool:
    """The page's script asks for JSON; a plain form post (no JavaScript) gets redirects and pages."""
    return request.headers.get("Accept", "").startswith("application/json")


def _json_error(error: DomainError) -> JsonResponse:
    http_status = next((code for kind, code in DOMAIN_STATUS.items() if isinstance(error, kind)), 409)
    return JsonResponse(error_body(error.code, error.message, error.extra), status=http_status)


def _run_json(run, *, http_status: int = 200) -> JsonResponse:
    return JsonResponse({"run": cell_run_state(run), "links": {
        "page": reverse("reasoning:run-detail", args=[run.pk]),
        "status": reverse("reasoning:run-status", args=[run.pk]),
        "cancel": reverse("reasoning:run-cancel", args=[run.pk]),
        "socket": "/ws/runs/",
    }}, status=http_status)


@login_required
@require_POST
@not_found_is_404
def cell_run_view(request, notebook_id, cell_id):
    """Queues the cell's run for a worker and answers at once: the run (JSON, 202) for the page's script, which
    watches it over /ws/runs/, or a redirect to the run's page, which refreshes itself until the run ends. A cell
    already running answers with that run (409 with its id; the run's page). When this server does not run code,
    the page says why."""
    try:
        run = cell_run_start(actor=request.user, notebook_id=notebook_id, cell_id=cell_id)
    except NotFound:
        raise
    except Conflict as error:
        if _wants_json(request):
            return _json_error(error)
        messages.info(request, error.message)
        return redirect("reasoning:run-detail", run_id=error.extra["run_id"])
    except DomainError as error:
        if _wants_json(request):
            return _json_error(error)
        messages.error(request, error.message)
        return redirect(_notebook_url(notebook_id, cell_id))
    if _wants_json(request):
        return _run_json(run, http_status=202)
    return redirect("reasoning:run-detail", run_id=run.pk)


@login_required
@require_GET
@not_found_is_404
def run_detail(request, run_id):
    """A run's own page: its state, output and outcome; it refreshes itself while the run is unfinished."""
    run = cell_run_get(actor=request.user, run_id=run_id)
    response = render(request, "reasoning/run_detail.html", {
        "run": run, "elapsed_seconds": elapsed_ms(run) // 1000,
        "notebook_url": _notebook_url(run.notebook_id, run.cell_id),
    })
    if not run.finished:
        response["Refresh"] = str(RUN_PAGE_REFRESH_SECONDS)
    return response


@login_required
@require_GET
@not_found_is_404
def run_status(request, run_id):
    """The run's state as JSON: what the page's script reads when its socket is not there."""
    return _run_json(cell_run_get(actor=request.user, run_id=run_id))


@login_required
@require_POST
@not_found_is_404
def run_cancel_view(request, run_id):
    run = cell_run_cancel(actor=request.user, run_id=run_id)
    if _wants_json(request):
        return _run_json(run)
    if run.finished and run.status != run.Status.CANCELLED:
        messages.info(request, f"The run had already finished: {run.message}.")
    return redirect("reasoning:run-detail", run_id=run.pk)


@login_required
@require_POST
@not_found_is_404
def notebook_deps_view(request, notebook_id):
    notebook = notebook_get(actor=request.user, notebook_id=notebook_id)
    form = DependenciesForm(request.POST)

    def save():
        result = notebook_install_deps(actor=request.user, notebook_id=notebook.pk,
                                       dependencies=form.cleaned_data["dependencies"])
        installed = ", ".join(f"{name} {version}" for name, version in result.installed.items())
        messages.success(request, f"Installed {installed or 'the listed packages'}.")
        return redirect(_notebook_url(notebook.pk) + "#dependencies")

    return submit(request, form, save) or _notebook_page(request, notebook, deps_form=form)


@login_required
@require_GET
@not_found_is_404
def notebook_export_view(request, notebook_id):
    notebook = notebook_get(actor=request.user, notebook_id=notebook_id)
    exported = notebook_export(actor=request.user, notebook_id=notebook.pk)
    return _download(exported.text, filename=f"{_file_stem(notebook.title, 'notebook')}.src.md",
                     content_type="text/markdown; charset=utf-8")


@login_required
@require_POST
@not_found_is_404
def notebook_delete_view(request, notebook_id):
    notebook = notebook_get(actor=request.user, notebook_id=notebook_id)
    if act(request, lambda: notebook_delete(actor=request.user, notebook_id=notebook.pk),
           format_html('Notebook “{}” moved to the <a href="{}">trash</a>.', notebook.title, reverse("trash:index")),
           undo_url=reverse("reasoning:notebook-restore", args=[notebook.pk])):
        return redirect("reasoning:notebook-list")
    return redirect(_notebook_url(notebook.pk))


@login_required
@require_POST
@not_found_is_404
def notebook_restore_view(request, notebook_id):
    act(request, lambda: notebook_restore(actor=request.user, notebook_id=notebook_id), "Notebook restored.")
    return redirect(_notebook_url(notebook_id))


# Mental models

@login_required
@require_GET
def model_index(request):
    tag = request.GET.get("tag") or None
    try:
        models = models_list(tag=tag)
    except InvalidInput as error:
        messages.error(request, error.message)
        tag, models = None, models_list()
    return render(request, "reasoning/model_list.html", {"models": models, "tags": TAGS, "tag": tag,
                                                         "tag_description": TAGS.get(tag) if tag else ""})


@login_required
@require_GET
@not_found_is_404
def model_detail(request, name):
    model = model_get(name)
    related = [MODELS[other] for other in model.related if other in MODELS]
    return render(request, "reasoning/model_detail.html", {
        "model": model, "description": render_markdown(model.description), "example": render_markdown(model.example),
        "related": related, "tags": [(tag, TAGS.get(tag, "")) for tag in model.tags],
    })


# The workbench

@dataclass(frozen=True)
class WorkbenchTool:
    slug: str
    title: str
    summary: str
    form: type
    service: Callable[..., dict]
    template: str


WORKBENCH_TOOLS: dict[str, WorkbenchTool] = {tool.slug: tool for tool in (
    WorkbenchTool("think", "Think", "Reason about a problem in one of five modes.",
                  reasoning_forms.ThinkForm, analysis.reasoning_think, "think"),
    WorkbenchTool("analyze-systematically", "Analyze systematically",
                  "Work through a problem with a thinking framework, chosen for it or by you.",
                  reasoning_forms.AnalyzeSystematicallyForm, analysis.reasoning_analyze_systematically, "framework"),
    WorkbenchTool("think-parallel", "Think in parallel",
                  "Analytical, creative, critical and synthetic streams, synthesized with their conflicts.",
                  reasoning_forms.ThinkParallelForm, analysis.reasoning_think_parallel, "think"),
    WorkbenchTool("decompose", "Decompose a problem",
                  "Break a problem into sub-problems, with their dependencies and an order to do them in.",
                  reasoning_forms.DecomposeForm, analysis.reasoning_decompose, "decompose"),
    WorkbenchTool("assess-confidence", "Assess confidence",
                  "How far reasoning and its evidence support the conclusion, in five dimensions.",
                  reasoning_forms.AssessConfidenceForm, analysis.reasoning_assess_confidence, "confidence"),
    WorkbenchTool("detect-bias", "Detect bias", "Eight cognitive biases, with evidence and a correction.",
                  reasoning_forms.DetectBiasForm, analysis.reasoning_detect_bias, "bias"),
    WorkbenchTool("detect-emotion", "Detect emotion",
                  "Valence, arousal and dominance, and the eleven discrete emotions.",
                  reasoning_forms.DetectEmotionForm, analysis.reasoning_detect_emotion, "emotion"),
    WorkbenchTool("analyze-reasoning", "Analyze reasoning",
                  "Coherence, completeness, validity and evidence, with confidence, biases and emotion.",
                  reasoning_forms.AnalyzeReasoningForm, analysis.reasoning_analyze, "quality"),
)}


def _decomposition(result: dict) -> dict:
    """decompose_problem's flat sub-problems as a nested list, each with its step in the execution order."""
    nodes = {item["id"]: {**item, "children": []} for item in result.get("subProblems", [])}
    steps = {sub_id: index for index, sub_id in enumerate(result.get("executionOrder", []), start=1)}
    roots = []
    for node in nodes.values():
        node["step"] = steps.get(node["id"])
        parent = nodes.get(node.get("parent"))
        (parent["children"] if parent else roots).append(node)
    # The hierarchy is drawn as the tree; the other dependencies read as "this before that".
    ordering = [{**dependency, "before": nodes[dependency["from"]], "after": nodes[dependency["to"]]}
                for dependency in result.get("dependencies", [])
                if dependency.get("type") != "hierarchical" and {dependency["from"], dependency["to"]} <= nodes.keys()]
    return {"subproblem_tree": roots, "dependencies": ordering,
            "execution_steps": [nodes[sub_id] for sub_id in result.get("executionOrder", []) if sub_id in nodes]}


def _circumplex(emotion: dict | None) -> dict:
    """Valence and dominance run from -1 to 1, arousal from 0 to 1: each as a bar drawn from its zero."""
    circumplex = (emotion or {}).get("circumplex") or {}
    bars = []
    for name, low in (("valence", -1.0), ("arousal", 0.0), ("dominance", -1.0)):
        value = circumplex.get(name)
        if value is None:
            continue
        span, zero = 1.0 - low, -low
        start, end = sorted((zero, zero + value))
        bars.append({"label": name, "value": value, "left": round(max(start, 0) / span * 100, 1),
                     "width": round((min(end, span) - max(start, 0)) / span * 100, 1)})
    return {"circumplex_bars": bars}


def _biases(result: dict) -> dict:
    """Each bias found with what its type means, for people who do not know the names."""
    return {"biases": [{**bias, "description": BIAS_TYPES.get(bias.get("type"), "")}
                       for bias in result.get("biases") or []]}


PRESENTATIONS: dict[str, Callable[[dict], dict]] = {
    "decompose": _decomposition,
    "detect-bias": _biases,
    "detect-emotion": _circumplex,
    "analyze-reasoning": lambda result: {**_circumplex(result.get("emotion")), **_biases(result)},
}


@login_required
@require_http_methods(["GET", "POST"])
def workbench(request):
    """One tool at a time (``?tool=``): its form, and after a POST its result for people to read."""
    tool = WORKBENCH_TOOLS.get(request.GET.get("tool") or "think")
    if tool is None:
        raise Http404("No such workbench tool.")
    form = tool.form(request.POST or None, prefix=tool.slug)
    result = None
    if request.method == "POST" and form.is_valid():
        try:
            result = tool.service(actor=request.user, **form.service_arguments())
        except DomainError as error:
            add_service_error(form, error)
    present = PRESENTATIONS.get(tool.slug)
    return render(request, "reasoning/workbench.html", {
        "tools": WORKBENCH_TOOLS.values(), "tool": tool, "form": form, "result": result,
        "presentation": present(result) if result and present else {},
        "result_template": f"reasoning/results/{tool.template}.html",
    })
