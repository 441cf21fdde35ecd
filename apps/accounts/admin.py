"""Admin for users and API tokens. Tokens are made only by token_create, so the raw token is shown
once and only its digest is stored; the digest itself is never shown."""
from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from apps.accounts.models import ApiToken, User
from apps.accounts.services import token_create, token_revoke
from apps.core.exceptions import DomainError
from apps.core.forms import add_service_error


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = ("username", "email", "is_staff", "is_active", "date_joined", "last_login")


class ApiTokenAddForm(forms.Form):
    user = forms.ModelChoiceField(queryset=User.objects.order_by("username"), help_text="Who the token acts as.")
    name = forms.CharField(required=False)
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices, widget=forms.CheckboxSelectMultiple, required=False, initial=["read", "write"],
    )
    expires_at = forms.SplitDateTimeField(
        required=False, widget=admin.widgets.AdminSplitDateTime, help_text="Leave empty for no expiry.",
    )


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at", "created_at")
    list_select_related = ("user",)
    search_fields = ("name", "prefix", "user__username")
    fields = ("user", "name", "prefix", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    actions = ["revoke"]

    def add_view(self, request, form_url="", extra_context=None):
        """A token comes only from token_create: its raw value exists once, in the message that follows."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ApiTokenAddForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                issued = token_create(actor=data["user"], name=data["name"], scopes=data["scopes"],
                                      expires_at=data["expires_at"])
            except DomainError as error:
                add_service_error(form, error)
            else:
                self.log_addition(request, issued.token, [{"added": {}}])
                self.message_user(request, format_html(
                    "Token “{}” created for {}: <code>{}</code> Copy it now: it is not stored and will not be "
                    "shown again.", issued.token.name, issued.token.user, issued.raw,
                ), messages.WARNING)
                return redirect(reverse("admin:accounts_apitoken_changelist"))
        context = {
            **self.admin_site.each_context(request), "title": "Add API token", "form": form, "opts": self.opts,
            "media": self.media + form.media, **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/accounts/apitoken/add_form.html", context)

    @admin.action(description="Revoke selected tokens", permissions=["change"])
    def revoke(self, request, queryset):
        revoked = 0
        for token in queryset.select_related("user"):
            # The token's owner is the actor: an admin revokes on their behalf.
            token_revoke(actor=token.user, token_id=token.pk)
            revoked += 1
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)
