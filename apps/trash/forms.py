"""The trash page's filter: which kind to show (all when empty)."""
from __future__ import annotations

from django import forms

from apps.trash.selectors import Kind


class TrashFilterForm(forms.Form):
    kind = forms.ChoiceField(label="Show", required=False, choices=[("", "Everything"), *Kind.choices])
