"""The memory pages: search, browse, store, and each memory's page with editing, boosting and deleting, for
people, over the same services and selectors as REST and MCP (see apps/core/pages.py for how pages treat
errors).

Searching counts as an access, as it does for agents (the results are reinforced); browsing lists
and opening a memory's page do not, so that looking around does not change what agents find.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.core.exceptions import DomainError, InvalidInput
from apps.core.forms import add_service_error
from apps.core.pages import act, not_found_is_404, submit
from apps.cubes.selectors import cube_list
from apps.memories.forms import MemoryEditForm, MemoryStoreForm, SearchForm
from apps.memories.selectors import memory_get, memory_links, memory_list, memory_neighbours
from apps.memories.services import (
    memory_boost, memory_delete, memory_restore, memory_search, memory_store, memory_update,
)
from apps.memories.validation import MemoryFilters

BROWSE_PAGE_SIZE = 25


def _memory_action(service, success_message: str):
    """A POST button on a memory's page: call the service, flash what happened, go back to the page."""
    @login_required
    @require_POST
    @not_found_is_404
    def view(request, memory_id):
        act(request, lambda: service(actor=request.user, memory_id=memory_id), success_message)
        return redirect("dashboard:memory-detail", memory_id=memory_id)
    return view


@login_required
def search(request):
    cubes = list(cube_list(actor=request.user))
    form = SearchForm(request.GET or None, cubes=cubes)
    context = {"form": form, "result": None}
    if form.is_bound and form.has_query and form.is_valid():
        limit = form.cleaned_data["limit"]
        offset = form.cleaned_data["offset"] or 0
        try:
            filters = MemoryFilters.build(**form.filter_arguments())
            result = memory_search(actor=request.user, text=form.cleaned_data["q"], filters=filters,
                                   limit=limit, offset=offset, reinforce=True)
        except InvalidInput as error:
            add_service_error(form, error)
        else:
            context.update(result=result, **_pages(request, offset=offset, limit=limit, total=result.total_count,
                                                   shown=len(result.items)))
            if result.suggestion:
                query = request.GET.copy()
                query["q"], query["offset"] = result.suggestion, 0
                context["suggestion_url"] = f"?{query.urlencode()}"
    return render(request, "memories/search.html", context)


def _pages(request, *, offset: int, limit: int, total: int, shown: int) -> dict:
    """Links to the previous and next page of a limit/offset listing, keeping every other parameter."""
    def page_url(new_offset: int) -> str:
        query = request.GET.copy()
        query["offset"] = new_offset
        return f"?{query.urlencode()}"

    return {
        "first_shown": offset + 1 if shown else 0,
        "last_shown": offset + shown,
        "previous_url": page_url(max(0, offset - limit)) if offset > 0 else None,
        "next_url": page_url(offset + limit) if offset + shown < total else None,
    }


@login_required
def memory_browse(request):
    cubes = list(cube_list(actor=request.user))
    cube_id = request.GET.get("cube") or None
    if cube_id and cube_id not in {cube.pk for cube in cubes}:
        raise Http404("Cube not found.")
    deleted = request.GET.get("deleted") == "1"
    memories = memory_list(actor=request.user, cube_id=cube_id, only_deleted=deleted)
    page = Paginator(memories, BROWSE_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "memories/memory_list.html", {
        "cubes": cubes, "cube_id": cube_id, "deleted": deleted, "page": page, "query": query.urlencode(),
    })


@login_required
@require_http_methods(["GET", "POST"])
def memory_create(request):
    cubes = list(cube_list(actor=request.user))
    form = MemoryStoreForm(request.POST or None, cubes=cubes)
    if request.method == "POST" and form.is_valid():
        try:
            stored = memory_store(actor=request.user, **form.service_arguments())
        except DomainError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"Memory stored, with {stored.links_created} link(s) to related memories.")
            return redirect("dashboard:memory-detail", memory_id=stored.memory.pk)
    return render(request, "memories/memory_form.html", {"form": form, "title": "Store a memory"})


@login_required
@not_found_is_404
def memory_detail(request, memory_id):
    memory = memory_get(actor=request.user, memory_id=memory_id)
    links = [
        {"link": link, "outgoing": link.source_id == memory.pk,
         "neighbour": link.target if link.source_id == memory.pk else link.source}
        for link in memory_links(actor=request.user, memory_id=memory_id)
    ]
    linked = {entry["neighbour"].pk for entry in links}
    neighbours = [
        {"memory": neighbour, "similarity": similarity}
        for neighbour, similarity in memory_neighbours(actor=request.user, memory_id=memory_id)
        if neighbour.pk not in linked
    ]
    return render(request, "memories/memory_detail.html", {"memory": memory, "links": links, "neighbours": neighbours})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def memory_edit(request, memory_id):
    memory = memory_get(actor=request.user, memory_id=memory_id, include_deleted=False)
    form = MemoryEditForm.for_memory(memory, data=request.POST or None)
    updated = submit(request, form, lambda: memory_update(actor=request.user, memory_id=memory_id, **form.changes()))
    if updated:
        note = " Its embeddings and links were rebuilt." if updated.embeddings_regenerated else ""
        messages.success(request, f"Memory saved.{note}")
        return redirect("dashboard:memory-detail", memory_id=memory_id)
    return render(request, "memories/memory_form.html", {"form": form, "memory": memory, "title": "Edit memory"})


memory_boost_view = _memory_action(memory_boost, "Importance raised by 0.1.")
memory_soft_delete = _memory_action(
    memory_delete, "Memory deleted. It is hidden from results until you restore it.",
)
memory_restore_view = _memory_action(memory_restore, "Memory restored.")


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def memory_destroy(request, memory_id):
    memory = memory_get(actor=request.user, memory_id=memory_id)
    if request.method == "POST":
        if act(request, lambda: memory_delete(actor=request.user, memory_id=memory_id, soft=False),
               "Memory deleted for good, with its embeddings and links."):
            return redirect("dashboard:memory-list")
        return redirect("dashboard:memory-detail", memory_id=memory_id)
    return render(request, "memories/memory_confirm_destroy.html", {"memory": memory})
