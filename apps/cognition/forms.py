"""Forms of the Context Graph pages (templates/cognition/): they only carry what a button sends to the services
(a task's note, a reversal hash, a trash search, a scratchpad's key); the services judge it."""
from __future__ import annotations

from django import forms

from apps.core.forms import ServiceCheckedTextField, service_text_area


class TaskApproveForm(forms.Form):
    # Drawn by templates/cognition/_task.html, next to the task it settles.
    note = ServiceCheckedTextField(label="Correction note")


class ReversalForm(forms.Form):
    reversal_hash = forms.CharField(max_length=64)


class TrashSearchForm(forms.Form):
    q = ServiceCheckedTextField(label="Search the trash", widget=forms.TextInput(
        attrs={"type": "search", "placeholder": "What do you remember of it?"}))
    service_fields = {"query": "q"}


class ScratchpadClearForm(forms.Form):
    session_id = forms.UUIDField()
    agent_id = forms.CharField(max_length=200)


class AdversarialCheckForm(forms.Form):
    content = service_text_area(rows=6, label="Content to check", help_text=(
        "Paste what an agent would store: it is checked as store_memory would check it, and nothing is stored."))
