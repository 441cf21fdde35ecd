"""The home page: counts, recent memories and how to connect an agent; the command palette's suggestions and
the keyboard shortcuts page. The other pages live with their app (apps/<app>/views.py);
apps/dashboard/urls.py puts them together under one navigation."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import truncatechars
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.core.exceptions import InvalidInput
from apps.core.forms import add_service_error
from apps.core.pages import MCP_PATH
from apps.cubes.selectors import cube_list
from apps.dashboard.forms import PaletteForm
from apps.memories.selectors import memory_counts, memory_list
from apps.memories.services import memory_search
from apps.projects.selectors import project_list

RECENT_MEMORIES = 10
PALETTE_MEMORIES = 6
PALETTE_PROJECTS = 4
PALETTE_TITLE_CHARS = 100

# Every page the palette jumps to: (section, label, URL name, other words people may type for it). The main
# navigation's links and the Cognition and Reasoning tabs are all here (tests/dashboard/test_palette.py checks).
PALETTE_PAGES = (
    ("", "Home", "dashboard:home", "dashboard start"),
    ("", "Search", "dashboard:search", "find"),
    ("", "Graph", "dashboard:graph", "map network links"),
    ("", "Memories", "dashboard:memory-list", "browse list"),
    ("Memories", "Store a memory", "dashboard:memory-create", "new add write remember"),
    ("Cognition", "Pulse", "dashboard:cognition-pulse", "sessions entropy coherence"),
    ("Cognition", "Inbox", "dashboard:cognition-inbox", "curation tasks approve"),
    ("Cognition", "Scratchpad", "dashboard:cognition-scratchpad", "notes"),
    ("Cognition", "Dreams", "dashboard:cognition-dreams", "dream consolidation sleep nrem rem"),
    ("Cognition", "Gardener", "dashboard:cognition-gardener", "cycles tending"),
    ("Cognition", "Undo history", "dashboard:cognition-undo", "revert"),
    ("Cognition", "Forgotten nodes", "dashboard:cognition-trash", "trash deleted forgotten restore tombstones"),
    ("Cognition", "Blind spots", "dashboard:cognition-blind-spots", "gaps"),
    ("Cognition", "Homeostasis", "dashboard:cognition-homeostasis", "balance health"),
    ("Cognition", "Neuromodulation", "dashboard:cognition-neuromodulation", "dopamine serotonin"),
    ("Cognition", "Adversarial check", "dashboard:cognition-adversarial", "quarantine poisoning"),
    ("Cognition", "Benchmarks", "dashboard:cognition-benchmarks", "runs"),
    ("", "Cubes", "cubes:cube-list", "share sharing members"),
    ("", "Chat", "chat:index", "ask conversation"),
    ("Chat", "New conversation", "chat:new", "ask question"),
    ("", "Projects", "projects:project-list", "decisions issues sharp edges"),
    ("Reasoning", "Thought sessions", "reasoning:overview", "thinking"),
    ("Reasoning", "Notebooks", "reasoning:notebook-list", "cells code"),
    ("Reasoning", "Mental models", "reasoning:model-list", "frameworks"),
    ("Reasoning", "Workbench", "reasoning:workbench", "think decompose bias"),
    ("", "Trash", "trash:index", "deleted removed restore undelete recover bin"),
    ("", "Tokens", "dashboard:tokens", "api keys agents"),
    ("Tokens", "Create a token", "dashboard:token-create", "new api key"),
    ("", "API docs", "api-docs", "rest openapi swagger"),
    ("", "Keyboard shortcuts", "dashboard:shortcuts", "keys help"),
)
STAFF_PAGES = (("", "Admin", "admin:index", "django curation"),)


@login_required
def home(request):
    counts = memory_counts(actor=request.user)
    return render(request, "dashboard/home.html", {
        "counts": counts,
        "cube_count": cube_list(actor=request.user).count(),
        "recent": memory_list(actor=request.user)[:RECENT_MEMORIES],
        "is_new": counts["total"] == 0 and counts["deleted"] == 0,
        "mcp_url": request.build_absolute_uri(MCP_PATH),
    })


@login_required
def shortcuts(request):
    return render(request, "dashboard/shortcuts.html")


@require_GET
def palette(request):
    """The command palette's suggestions as JSON, for the signed-in user's session: the pages, and for
    ``q`` the memories that memory_search finds (not counted as an access: nothing was opened yet) and the
    projects whose name holds it."""
    if not request.user.is_authenticated:
        return _error(401, "not_authenticated", "Log in again to search.")
    form = PaletteForm(request.GET)
    memories, projects = [], []
    if form.is_valid() and (text := form.cleaned_data["q"].strip()):
        try:
            result = memory_search(actor=request.user, text=text, limit=PALETTE_MEMORIES, reinforce=False)
        except InvalidInput as error:
            add_service_error(form, error)
        else:
            memories = [{"id": str(item.memory.pk), "title": truncatechars(item.memory.content, PALETTE_TITLE_CHARS),
                         "url": reverse("dashboard:memory-detail", args=[item.memory.pk])} for item in result.items]
            projects = [{"id": str(project.pk), "title": project.name,
                         "url": reverse("projects:project-detail", args=[project.pk])}
                        for project in project_list(actor=request.user, name_contains=text)[:PALETTE_PROJECTS]]
    if form.errors:
        field, messages = next(iter(form.errors.items()))
        return _error(400, "invalid_input", messages[0], field=field)
    pages = PALETTE_PAGES + (STAFF_PAGES if request.user.is_staff else ())
    return JsonResponse({
        "pages": [{"section": section, "title": label, "url": reverse(name), "keywords": keywords}
                  for section, label, name, keywords in pages],
        "memories": memories,
        "projects": projects,
    })


def _error(status: int, code: str, message: str, **details) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "details": details}}, status=status)
