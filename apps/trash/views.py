"""The trash page (/trash/): everything deleted that the user can bring back, of every kind, newest first, each with
when it was deleted, when the purge deletes it for good (or that nothing will), Restore, and Delete forever (asked
first, on its own page). Over apps.trash's selectors and services, as every page (apps/core/pages.py): something
not in the user's trash is the 404 page, whoever's it is.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.template.defaultfilters import truncatechars
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.exceptions import DomainError
from apps.core.pages import not_found_is_404
from apps.trash.forms import TrashFilterForm
from apps.trash.selectors import ENTITY_MODELS, Kind, TrashItem, trash_get, trash_page
from apps.trash.services import trash_purge, trash_restore

TITLE_CHARS = 80
# What "Delete forever" takes with it, said on the page that asks.
CONSEQUENCES = {
    Kind.MEMORY: "The memory is removed with its vectors and links.",
    Kind.FORGOTTEN: "The node is removed with its vector, links, profile and notes, and its forget can no longer be "
                    "undone.",
    Kind.CUBE: "The cube is removed with everything in it: its memories and their links, its projects and thought "
               "sessions, and who it was shared with.",
    Kind.PROJECT: "The project is removed with its decisions, issues, sharp edges, episodes and sessions, and their "
                  "nodes in the memory graph.",
    Kind.THOUGHT_SESSION: "The session is removed with its thoughts and their nodes in the memory graph.",
    Kind.NOTEBOOK: "The notebook is removed with its cells, runs and outputs, and its files and installed packages.",
    **{kind: f"The {Kind(kind).label.lower()} is removed with its node in the memory graph." for kind in ENTITY_MODELS},
}
# Entities have no page of their own to show deleted: their project's page lists them, deleted ones too.
PAGE_NAMES = {
    Kind.MEMORY: "dashboard:memory-detail", Kind.FORGOTTEN: "dashboard:memory-detail", Kind.CUBE: "cubes:cube-detail",
    Kind.PROJECT: "projects:project-detail", Kind.THOUGHT_SESSION: "reasoning:session-detail",
    Kind.NOTEBOOK: "reasoning:notebook-detail",
}


def _page_url(item: TrashItem) -> str | None:
    """The item's own page (which shows it deleted, with Restore), or its project's page for an entity."""
    if item.kind in PAGE_NAMES:
        return reverse(PAGE_NAMES[item.kind], args=[item.item_id])
    if item.parent_id:
        return reverse("projects:project-detail", args=[item.parent_id]) + "?deleted=1"
    return None  # a global sharp edge: in no project


def _known_kind(kind: str) -> str:
    if kind not in Kind.values:
        raise Http404("No such kind of thing in the trash.")
    return kind


def _back(request) -> str:
    """Where a button goes back to: the page it was on (the trash with its filter and page, or a deleted memory's
    page), never another site; the trash by default."""
    next_url = request.POST.get("next") or request.GET.get("next")
    if next_url and next_url.startswith("/") and url_has_allowed_host_and_scheme(
            next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return next_url
    return reverse("trash:index")


def _named(item: TrashItem) -> str:
    return f"{item.kind_label.lower()} “{truncatechars(item.title, TITLE_CHARS)}”"


@login_required
@require_GET
def trash_index(request):
    form = TrashFilterForm(request.GET or None)
    kind = form.cleaned_data["kind"] if form.is_bound and form.is_valid() else ""
    page = trash_page(actor=request.user, kind=kind or None, page=request.GET.get("page"))
    return render(request, "trash/trash.html", {
        "form": form, "kind": kind, "kind_label": Kind(kind).label if kind else "", "page": page, "now": timezone.now(),
        "rows": [{"item": item, "url": _page_url(item)} for item in page.object_list],
        "pager_query": urlencode({"kind": kind}) + "&" if kind else "",
    })


@login_required
@require_POST
def trash_restore_view(request, kind: str, item_id: str):
    try:
        item = trash_restore(actor=request.user, kind=_known_kind(kind), item_id=item_id)
    except DomainError as error:  # not in the trash (any more), or its restore refused (a project name now taken)
        messages.error(request, error.message)
    else:
        url = _page_url(item)
        messages.success(request, format_html('Restored the {}{}.', _named(item), format_html(
            ' (<a href="{}">open it</a>)', url) if url else ""))
    return redirect(_back(request))


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def trash_purge_view(request, kind: str, item_id: str):
    """Ask, then delete for good."""
    item = trash_get(actor=request.user, kind=_known_kind(kind), item_id=item_id)
    if request.method == "POST":
        try:
            trash_purge(actor=request.user, kind=item.kind, item_id=item.item_id)
        except DomainError as error:  # a notebook cell still running, a cube no longer yours
            messages.error(request, error.message)
        else:
            messages.success(request, f"Deleted the {_named(item)} forever.")
        return redirect(_back(request))
    return render(request, "trash/confirm_purge.html", {
        "item": item, "consequence": CONSEQUENCES[item.kind], "back": _back(request), "url": _page_url(item),
    })
