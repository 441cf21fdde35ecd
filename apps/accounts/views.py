"""The API token page: your tokens, a form that issues one (its raw value is shown once), and revoking, over
apps.accounts' services and selectors. A token the user may not see is the 404 page."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from apps.accounts.forms import TokenCreateForm
from apps.accounts.selectors import token_list
from apps.accounts.services import token_create, token_revoke
from apps.core.exceptions import DomainError
from apps.core.forms import add_service_error
from apps.core.pages import MCP_PATH, not_found_is_404


def _tokens_page(request, form: TokenCreateForm):
    return render(request, "accounts/tokens.html", {
        "tokens": token_list(actor=request.user), "form": form, "now": timezone.now(),
    })


@login_required
def token_index(request):
    return _tokens_page(request, TokenCreateForm())


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_new(request):
    form = TokenCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            issued = token_create(actor=request.user, **form.service_arguments())
        except DomainError as error:
            add_service_error(form, error)
        else:
            # Rendered, not redirected: the raw token exists only in this response.
            return render(request, "accounts/token_created.html", {
                "issued": issued, "mcp_url": request.build_absolute_uri(MCP_PATH),
            })
    return _tokens_page(request, form)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def token_revoke_view(request, token_id: int):
    token = get_object_or_404(token_list(actor=request.user), pk=token_id)
    if request.method == "POST":
        token_revoke(actor=request.user, token_id=token.pk)
        messages.success(request, f"Token “{token.name}” revoked: agents using it are refused from now on.")
        return redirect(reverse("dashboard:tokens"))
    return render(request, "accounts/token_confirm_revoke.html", {"token": token})
