"""The memory pages: search, browse, store, and each memory's page with editing, boosting and deleting, for
people, over the same services and selectors as REST and MCP (see apps/core/pages.py for how pages treat
errors).

Searching counts as an access, as it does for agents (the results are reinforced); browsing lists
and opening a memory's page do not, so that looking around does not change what agents find.

The list (memory_browse) keeps its filters in the URL and acts on the ticked memories in bulk (memory_bulk), each
action one service call, with an undo for the next page view. The store page warns about a memory it would repeat
(memory_duplicates) and offers to store anyway or merge; REST and MCP stores do not warn (their contracts are the
agents').
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_http_methods, require_POST

from apps.cognition.selectors.tombstones import tombstone_deadline
from apps.cognition.services.duplicates import memory_store_merging
from apps.core.exceptions import DomainError, InvalidInput
from apps.core.forms import add_service_error, in_form_words
from apps.core.limits import NEIGHBOURHOOD_DEPTH
from apps.core.pages import act, not_found_is_404, submit
from apps.cubes.access import cube_allows
from apps.cubes.selectors import cube_list, cube_list_with_stats
from apps.memories.forms import (
    DuplicateChoiceForm, MemoryBulkForm, MemoryEditForm, MemoryListForm, MemoryStoreForm, SearchForm,
)
from apps.memories.models import Memory, MemoryLink, Sector
from apps.memories.selectors import (
    memory_browse as memories_browsed, memory_browse_counts, memory_duplicates, memory_get, memory_links,
    memory_neighbours,
)
from apps.memories.services import (
    memory_boost, memory_delete, memory_delete_many, memory_move_many, memory_restore, memory_restore_many,
    memory_search, memory_store, memory_tag_many, memory_update,
)
from apps.memories.validation import MemoryFilters

BROWSE_PAGE_SIZE = 50
# The session key of the last bulk action's summary and undo, shown once by the next list page.
BULK_DONE = "memory_bulk_done"


def _memory_action(service, success_message: str, *, undo: str | None = None):
    """A POST button on a memory's page: call the service, flash what happened (with an Undo button posting to the
    URL named ``undo``), go back to the page."""
    @login_required
    @require_POST
    @not_found_is_404
    def view(request, memory_id):
        act(request, lambda: service(actor=request.user, memory_id=memory_id), success_message,
            undo_url=reverse(undo, args=[memory_id]) if undo else None)
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
    empty = [name for name, values in request.GET.lists() if not any(values)]
    if empty:  # the filter form sends every field: the URL to share and page keeps the ones in use
        query = request.GET.copy()
        for name in empty:
            del query[name]
        return redirect(f"{request.path}?{query.urlencode()}" if query else request.path)
    cubes = list(cube_list_with_stats(actor=request.user))
    cube_id = request.GET.get("cube") or None
    if cube_id and cube_id not in {cube.pk for cube in cubes}:
        raise Http404("Cube not found.")
    form = MemoryListForm(request.GET, cubes=cubes)
    context = {"form": form, "page": None, "counts": None}
    if form.is_valid():
        try:
            browse = form.browse()
        except InvalidInput as error:
            add_service_error(form, error)
        else:
            memories = memories_browsed(actor=request.user, browse=browse)
            context["page"] = Paginator(memories, BROWSE_PAGE_SIZE).get_page(request.GET.get("page"))
            context["counts"] = memory_browse_counts(actor=request.user, browse=browse)
            form.set_counts(context["counts"])
    deleted = form.is_valid() and form.cleaned_data["deleted"]
    writable = [cube for cube in cubes if cube_allows(cube, "write")]
    return render(request, "memories/memory_list.html", {
        **context, "deleted": deleted, "cube_id": cube_id, "chips": _chips(request, form),
        "query": _query(request, "page"), "tag_query": _query(request, "page", "tag"),
        "bulk_form": MemoryBulkForm(writable_cubes=writable), "done": request.session.pop(BULK_DONE, None),
    })


def _query(request, *dropped: str) -> str:
    """The list's URL parameters but ``dropped``, for links that change one of them."""
    query = request.GET.copy()
    for name in dropped:
        query.pop(name, None)
    return query.urlencode()


def _chips(request, form: MemoryListForm) -> list[dict]:
    """One removable chip per filter in use: what it is, and the list's URL without it."""
    if not form.is_valid():
        return []
    data, chips = form.cleaned_data, []
    names = {"sector": dict(Sector.choices), "kind": dict(Memory.Kind.choices), "cube": {
        cube.pk: cube.name for cube in form.cubes}}
    for name in ("q", "sector", "kind", "tag", "cube", "date_from", "date_to"):
        value = data.get(name)
        if not value:
            continue
        shown = ", ".join(f"#{tag}" for tag in value) if name == "tag" else names.get(name, {}).get(value, value)
        chips.append({"label": f"{form.fields[name].label}: {shown}", "url": f"?{_query(request, 'page', name)}"})
    return chips


def _plural(count: int, one: str = "memory", many: str = "memories") -> str:
    return f"{count} {one if count == 1 else many}"


def _list_url(request, next_url: str | None) -> str:
    """Where a bulk action goes back to: the list it was sent from (with its filters), never another site."""
    base = reverse("dashboard:memory-list")
    if next_url and next_url.startswith(base) and url_has_allowed_host_and_scheme(
            next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return next_url
    return base


@login_required
@require_POST
def memory_bulk(request):
    """A bulk action on the ticked memories (or an undo of the last one): one service call, then back to the list,
    where its summary and undo are shown."""
    writable = [cube for cube in cube_list_with_stats(actor=request.user) if cube_allows(cube, "write")]
    form = MemoryBulkForm(request.POST, writable_cubes=writable)
    back = _list_url(request, request.POST.get("next"))
    if not form.is_valid():
        for name, errors in form.errors.items():
            label = form.fields[name].label if name in form.fields else ""
            messages.error(request, f"{label}: {errors[0]}" if label and name != "memory_ids" else errors[0])
        return redirect(back)
    try:
        done = _bulk(request.user, form, undoing=request.POST.get("undo") == "1")
    except DomainError as error:
        messages.error(request, in_form_words(form, error.message))
    else:
        request.session[BULK_DONE] = done
    return redirect(back)


def _bulk(actor, form: MemoryBulkForm, *, undoing: bool) -> dict:
    """Run the form's action; its summary and (unless this is an undo) the action that undoes exactly what changed."""
    data = form.cleaned_data
    action, ids, tag = data["action"], data["memory_ids"], data["tag"].strip()
    undone = "Undone: " if undoing else ""
    if action == "delete":
        changed = memory_delete_many(actor=actor, memory_ids=ids)
        summary = (f"Deleted {_plural(len(changed))}: hidden from search and retrieval until restored."
                   if changed else "Nothing to delete: the selected memories are deleted already.")
        undo = {"action": "restore", "memory_ids": _pks(changed), "label": "Undo"}
    elif action == "restore":
        changed = memory_restore_many(actor=actor, memory_ids=ids)
        summary = f"Restored {_plural(len(changed))}." if changed else "Nothing to restore: the selected memories are live."
        undo = {"action": "delete", "memory_ids": _pks(changed), "label": "Undo"}
    elif action == "move":
        origins = form.origins()
        if origins:  # an undo puts each memory back into its own cube, in one transaction
            with transaction.atomic():
                moved = [memory_move_many(actor=actor, memory_ids=back, cube_id=cube) for cube, back in origins.items()]
            changed = [memory for result in moved for memory in result.moved]
            return {"summary": f"Undone: moved {_plural(len(changed))} back to {'its' if len(changed) == 1 else 'their'} "
                               f"cube{'s' if len(origins) > 1 else ''}.", "undo": None}
        result = memory_move_many(actor=actor, memory_ids=ids, cube_id=data["cube"])
        changed = result.moved
        summary = (f"Moved {_plural(len(changed))} to {result.cube.name}." if changed
                   else f"Nothing to move: the selected memories are in {result.cube.name} already."
                   if not result.kept else "Nothing moved.")
        if result.kept:
            summary += (f" {_plural(len(result.kept), 'node stays', 'nodes stay')} where "
                        f"{'it is' if len(result.kept) == 1 else 'they are'}: a decision, issue, sharp edge, episode "
                        "or thought lives in the cube of its project or session.")
        undo = {"action": "move", "memory_ids": list(result.origins),
                "origins": [f"{pk}:{cube}" for pk, cube in result.origins.items()], "label": "Undo"}
    else:
        adding = action == "tag"
        changed = memory_tag_many(actor=actor, memory_ids=ids, **({"add": [tag]} if adding else {"remove": [tag]}))
        if adding:
            summary = (f"Tagged {_plural(len(changed))} #{tag}." if changed
                       else f"Nothing to tag: the selected memories have #{tag} already.")
        else:
            summary = (f"Removed #{tag} from {_plural(len(changed))}." if changed
                       else f"Nothing to remove: none of the selected memories has #{tag}.")
        undo = {"action": "untag" if adding else "tag", "memory_ids": _pks(changed), "tag": tag, "label": "Undo"}
    return {"summary": undone + summary, "undo": None if undoing or not changed else undo}


def _pks(memories) -> list[str]:
    return [str(memory.pk) for memory in memories]


@login_required
@require_http_methods(["GET", "POST"])
def memory_create(request):
    cubes = list(cube_list(actor=request.user))
    form = MemoryStoreForm(request.POST or None, cubes=cubes)
    choice = DuplicateChoiceForm(request.POST or None)
    duplicates = []
    if request.method == "POST" and form.is_valid() and choice.is_valid():
        arguments = form.service_arguments()
        try:
            if choice.cleaned_data["merge_with"]:
                return _store_merging(request, choice.cleaned_data["merge_with"], arguments)
            if choice.cleaned_data["on_duplicate"] != "store":
                duplicates = memory_duplicates(actor=request.user, content=arguments["content"],
                                               cube_id=arguments["cube_id"])
            if not duplicates:
                stored = memory_store(actor=request.user, **arguments)
        except DomainError as error:
            add_service_error(form, error)
        else:
            if not duplicates:
                messages.success(request, f"Memory stored, with {stored.links_created} link(s) to related memories.")
                return redirect("dashboard:memory-detail", memory_id=stored.memory.pk)
    return render(request, "memories/memory_form.html", {"form": form, "title": "Store a memory",
                                                         "duplicates": duplicates})


def _store_merging(request, duplicate_id, arguments: dict):
    """Store the memory and merge it with the one it repeats (the duplicate warning's "merge")."""
    result = memory_store_merging(actor=request.user, duplicate_id=duplicate_id, **arguments)
    merge = result.merge
    if merge.merged is None:  # their priors differ: nodes_merge linked them instead
        messages.warning(request, f"Stored, and linked to the memory it repeats instead of merged: "
                                  f"{merge.relational_note}")
        return redirect("dashboard:memory-detail", memory_id=result.stored.memory.pk)
    messages.success(request, "Stored and merged with the memory it repeats: one memory now, in your new wording "
                              "with the tags of both. The merge can be undone from Cognition › Undo.")
    return redirect("dashboard:memory-detail", memory_id=merge.merged.pk)


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
    purged_at = tombstone_deadline(actor=request.user, node_id=memory.pk) if memory.is_deleted else None
    # A forgotten node comes back through the trash, which runs its forget's undo (its edges too) where it can.
    restore_url = (reverse("trash:restore", args=["forgotten", memory.pk]) + "?" + urlencode({"next": request.path})
                   if purged_at else reverse("dashboard:memory-restore", args=[memory.pk]))
    return render(request, "memories/memory_detail.html", {
        "memory": memory, "links": links, "neighbours": neighbours, "local_graph": _local_graph(memory),
        "purged_at": purged_at, "restore_url": restore_url,
    })


def _local_graph(memory: Memory) -> dict:
    """The configuration of the page's local graph (frontend/src/local.js), which loads it from the REST API."""
    page = reverse("dashboard:memory-detail", args=[memory.pk])
    return {
        "memory": str(memory.pk),
        "depth": NEIGHBOURHOOD_DEPTH.default,
        "urls": {
            "neighbourhood": reverse("graph_api:graph-memory-neighbourhood", args=[memory.pk]),
            "page": page.replace(str(memory.pk), "MEMORY_ID"),
        },
        "linkTypes": [{"value": value, "label": label} for value, label in MemoryLink.LinkType.choices],
        "sectors": [{"value": value, "label": label} for value, label in Sector.choices],
    }


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
    memory_delete, "Memory deleted: hidden from search and retrieval until you restore it.",
    undo="dashboard:memory-restore",
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
