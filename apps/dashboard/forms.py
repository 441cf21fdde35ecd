"""The command palette's one input: the words typed, passed to memory_search as typed (its rules, its words)."""
from __future__ import annotations

from django import forms

from apps.core.forms import ServiceCheckedTextField


class PaletteForm(forms.Form):
    q = ServiceCheckedTextField(label="Search")

    service_fields = {"text": "q"}
