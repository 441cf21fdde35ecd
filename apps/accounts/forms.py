"""The token page's form (templates/accounts/tokens.html). It carries the name, scopes and lifetime to
token_create, which owns the rules; `add_service_error` puts its complaints next to the field they name."""
from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from apps.accounts.models import ApiToken
from apps.core.limits import TOKEN_EXPIRY_DAYS


class TokenCreateForm(forms.Form):
    # A plain CharField: it refuses NUL bytes, which token_create does not check.
    name = forms.CharField(required=False, help_text="Which agent or machine will use it, e.g. “laptop Claude Desktop”.")
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices, required=False, initial=["read", "write"],
        widget=forms.CheckboxSelectMultiple,
        help_text="read: retrieve and search; write: store, update and delete; admin: act for other users (staff only).",
    )
    expires_in_days = forms.IntegerField(
        label="Expires in (days)", required=False, **TOKEN_EXPIRY_DAYS.form(),
        help_text="Leave empty for a token that never expires.",
    )

    service_fields = {"expires_at": "expires_in_days"}

    def service_arguments(self) -> dict:
        days = self.cleaned_data["expires_in_days"]
        return {
            "name": self.cleaned_data["name"], "scopes": self.cleaned_data["scopes"],
            "expires_at": timezone.now() + timedelta(days=days) if days else None,
        }
