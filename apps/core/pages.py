"""View helpers shared by every app's pages. Each view parses its input with a form, calls one service
or selector, and renders. Domain errors never become a 500: something the user may not read is a 404
(nothing leaks), bad input goes next to its form field, anything else becomes a flash message."""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django import forms
from django.contrib import messages
from django.http import Http404

from apps.core.exceptions import DomainError, NotFound
from apps.core.forms import add_service_error, service_error_field
from apps.core.undo_messages import undo_tags

# The MCP endpoint that pages show in the client configurations they offer.
MCP_PATH = "/mcp/thoughtmcp/"


def not_found_is_404(view):
    """A NotFound from a service or selector is the 404 page, whoever's memory or token it was."""
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except NotFound as error:
            raise Http404(error.message) from error
    return wrapper


def act(request, call: Callable[[], object], success: str, *, inputs: tuple[str, ...] = (),
        undo_url: str | None = None) -> bool:
    """A button's service call: flash what happened, or why not (a name now taken by another project, a
    cube you may only read); whether it worked. Not found stays the 404 page (see not_found_is_404), except
    about one of the ``inputs`` the button sent (the user it names is not a member): that is flashed too.
    ``undo_url``: the success message gets an Undo button that posts there (offer_undo)."""
    try:
        call()
    except DomainError as error:
        if isinstance(error, NotFound) and error.extra.get("field") not in inputs:
            raise
        messages.error(request, error.message)
        return False
    if undo_url:
        offer_undo(request, success, undo_url=undo_url)
    else:
        messages.success(request, success)
    return True


def submit(request, form: forms.Form, call: Callable[[], object], *, inputs: tuple[str, ...] = (),
           rows: forms.BaseFormSet | None = None,
           show_error: Callable[[forms.Form, DomainError], None] = add_service_error) -> object | None:
    """What ``call()`` returned when the form (and its ``rows``) was posted valid and the service accepted
    it; None when the page should be shown again, with the service's complaint next to its field
    (``show_error``). Not found stays the 404 page, except about one of the form's ``inputs`` (a user
    or a thought number typed into it)."""
    if request.method != "POST" or not form.is_valid() or (rows is not None and not rows.is_valid()):
        return None
    try:
        return call()
    except DomainError as error:
        if isinstance(error, NotFound) and service_error_field(form, error) not in inputs:
            raise
        show_error(form, error)
        return None


def offer_undo(request, message: str, *, undo_url: str) -> None:
    """Flash what a delete did with an Undo button beside it, which POSTs to ``undo_url`` (the restore), on the
    next page (base.html draws it)."""
    messages.success(request, message, extra_tags=undo_tags(undo_url))
