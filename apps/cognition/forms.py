"""Forms of the Context Graph pages (templates/cognition/): they only carry what a button sends to the services
(a task's note, a reversal hash, a trash search, a scratchpad's key); the services judge it."""
from __future__ import annotations

from django import forms

from apps.cognition.limits import ANNOTATION_MAX_CHARS
from apps.core.forms import ServiceCheckedTextField
from apps.memories.validation import MAX_QUERY_CHARS


class TaskApproveForm(forms.Form):
    note = ServiceCheckedTextField(label="Correction note", max_length=ANNOTATION_MAX_CHARS,
                                   widget=forms.Textarea(attrs={"rows": 2}),
                                   help_text="Written on each node as a correction: what settles the ambiguity.")


class ReversalForm(forms.Form):
    reversal_hash = forms.CharField(max_length=64)


class TrashSearchForm(forms.Form):
    q = ServiceCheckedTextField(label="Search the trash", max_length=MAX_QUERY_CHARS,
                                widget=forms.TextInput(attrs={"type": "search",
                                                              "placeholder": "What do you remember of it?"}))
    service_fields = {"query": "q"}


class ScratchpadClearForm(forms.Form):
    session_id = forms.UUIDField()
    agent_id = forms.CharField(max_length=200)
