"""The cube pages (/cubes/): the cubes you can read with a "New cube" form, and each cube's page with its
statistics, members, sharing, editing, unregistering and deleting, over apps.cubes' services and selectors.

As on every page (apps/core/pages.py), each view parses with a form, calls one service
or selector and renders. A cube the user cannot read is the 404 page (a stranger's and a missing one look
the same); an action the user's role does not allow (a reader sharing) is refused with a message; a
service's complaint about a field (a bad id, an unknown user) goes next to that field. Every change is a
POST with the CSRF token; unregistering and deleting ask first.
"""
from __future__ import annotations


from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods, require_POST

from apps.core.exceptions import NotFound, PermissionDenied
from apps.core.pages import act, not_found_is_404, submit
from apps.cubes.access import OWNER, cube_allows, cube_get_for
from apps.cubes.forms import CubeEditForm, CubeRegisterForm, CubeShareForm
from apps.cubes.models import Cube
from apps.cubes.selectors import (
    cube_get_unregistered, cube_get_with_stats, cube_list_with_stats, cube_members, cube_statistics,
    cubes_unregistered,
)
from apps.cubes.services import (
    cube_delete, cube_register, cube_restore, cube_revoke, cube_share, cube_unregister, cube_update,
)


def _cube_page(cube_id: str) -> HttpResponse:
    return redirect("cubes:cube-detail", cube_id=cube_id)


def _unregistered_list() -> HttpResponse:
    return redirect(f"{reverse('cubes:cube-list')}?unregistered=1")


def _permitted(request, cube_id: str, action: str) -> Cube | None:
    """The cube, if the actor may do ``action`` (admin, delete) to it; else None, with the reason flashed (a
    reader may read the cube but not share it). A cube they cannot read raises NotFound: the 404 page."""
    try:
        return cube_get_for(actor=request.user, cube_id=cube_id, action=action)
    except PermissionDenied as error:
        messages.error(request, error.message)
        return None


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def cube_index(request):
    """The readable cubes with the actor's role and memory count, and the New cube form (a POST registers);
    with ?unregistered=1 also the actor's own unregistered cubes, to restore or delete for good."""
    form = CubeRegisterForm(request.POST or None)
    registered = submit(request, form, lambda: cube_register(actor=request.user, **form.service_arguments()))
    if registered:
        messages.success(request, f"Cube “{registered.name}” registered.")
        return _cube_page(registered.pk)
    show_unregistered = request.GET.get("unregistered") == "1"
    return render(request, "cubes/cube_list.html", {
        "cubes": cube_list_with_stats(actor=request.user), "form": form, "show_unregistered": show_unregistered,
        "unregistered": cubes_unregistered(actor=request.user) if show_unregistered else (),
    })


def _detail_page(request, cube_id: str, *, share_form: CubeShareForm | None = None) -> HttpResponse:
    cube = cube_get_with_stats(actor=request.user, cube_id=cube_id)
    return render(request, "cubes/cube_detail.html", {
        "cube": cube, "stats": cube_statistics(actor=request.user, cube_id=cube.pk),
        "members": cube_members(actor=request.user, cube_id=cube.pk),
        "can_admin": cube_allows(cube, "admin"), "is_owner": cube.role == OWNER,
        "share_form": share_form or CubeShareForm(),
    })


@login_required
@not_found_is_404
def cube_detail(request, cube_id: str):
    try:
        return _detail_page(request, cube_id)
    except NotFound:
        # An unregistered cube is its owner's alone: they see it read only, to restore it; others get the 404 page.
        return render(request, "cubes/cube_unregistered.html",
                      {"cube": cube_get_unregistered(actor=request.user, cube_id=cube_id)})


@login_required
@require_POST
@not_found_is_404
def cube_share_view(request, cube_id: str):
    """Grant a user a role (owner or admin member); sharing again changes the role."""
    if _permitted(request, cube_id, "admin") is None:
        return _cube_page(cube_id)
    form = CubeShareForm(request.POST)
    membership = submit(request, form, lambda: cube_share(actor=request.user, cube_id=cube_id,
                                                          **form.service_arguments()), inputs=("user",))
    if membership:
        messages.success(request, f"Cube shared with {membership.user.get_username()} as {membership.role}.")
        return _cube_page(cube_id)
    return _detail_page(request, cube_id, share_form=form)


@login_required
@require_POST
@not_found_is_404
def cube_revoke_view(request, cube_id: str):
    user = request.POST.get("user", "")
    act(request, lambda: cube_revoke(actor=request.user, cube_id=cube_id, user=user),
        f"{user} no longer has access to this cube.", inputs=("user",))
    return _cube_page(cube_id)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def cube_edit(request, cube_id: str):
    """Rename or re-describe the cube (owner or admin member)."""
    cube = _permitted(request, cube_id, "admin")
    if cube is None:
        return _cube_page(cube_id)
    form = CubeEditForm.for_cube(cube, data=request.POST or None)
    if submit(request, form, lambda: cube_update(actor=request.user, cube_id=cube.pk, **form.service_arguments())):
        messages.success(request, "Cube saved.")
        return _cube_page(cube.pk)
    return render(request, "cubes/cube_form.html", {"form": form, "cube": cube})


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def cube_unregister_view(request, cube_id: str):
    """Ask, then unregister (owner only, never the personal cube): hidden with its memories, restorable."""
    cube = _permitted(request, cube_id, "delete")
    if cube is None:
        return _cube_page(cube_id)
    if cube.is_unregistered:
        return _unregistered_list()
    if request.method == "POST":
        if act(request, lambda: cube_unregister(actor=request.user, cube_id=cube.pk),
               format_html('Cube “{}” unregistered: hidden from everyone with its memories, in the <a href="{}">trash</a>.',
                           cube.name, reverse("trash:index")),
               undo_url=reverse("cubes:cube-restore", args=[cube.pk])):
            return redirect("cubes:cube-list")
        return _cube_page(cube.pk)
    return render(request, "cubes/cube_confirm.html", {"cube": cube, "action": "unregister"})


@login_required
@require_POST
@not_found_is_404
def cube_restore_view(request, cube_id: str):
    if act(request, lambda: cube_restore(actor=request.user, cube_id=cube_id), f"Cube “{cube_id}” restored."):
        return _cube_page(cube_id)
    return _unregistered_list()


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def cube_delete_view(request, cube_id: str):
    """Ask, then delete for good (owner only, registered or not): the cube's memories go with it."""
    cube = _permitted(request, cube_id, "delete")
    if cube is None:
        return _cube_page(cube_id)
    if request.method == "POST":
        if act(request, lambda: cube_delete(actor=request.user, cube_id=cube.pk),
               f"Cube “{cube.name}” deleted for good, with its memories."):
            return redirect("cubes:cube-list")
        return _cube_page(cube.pk)
    # An unregistered cube has no statistics (nobody reads it); the page then says "all its memories".
    memory_count = None if cube.is_unregistered else cube_statistics(actor=request.user, cube_id=cube.pk)[
        "total_memories"]
    return render(request, "cubes/cube_confirm.html", {"cube": cube, "action": "delete", "memory_count": memory_count})
