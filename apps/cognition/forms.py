"""Forms of the Context Graph pages (templates/cognition/): they only carry what a button sends to the services
(a task's note, a reversal hash, a trash search, a scratchpad's key); the services judge it."""
from __future__ import annotations

from django import forms

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream.limits import DREAM_MINUTES, SYNTHETIC_QUERIES
from apps.core.forms import ServiceCheckedTextField


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


class DreamTriggerForm(forms.Form):
    # The ranges are trigger_dream's (services/dream/limits.py); the service checks them again.
    phase = forms.ChoiceField(choices=ConsolidationRun.Phase.choices, initial=ConsolidationRun.Phase.FULL_CYCLE)
    duration_minutes = forms.IntegerField(label="Minutes", initial=DREAM_MINUTES.default, **DREAM_MINUTES.form())
    synthetic_query_count = forms.IntegerField(label="REM walks", initial=SYNTHETIC_QUERIES.default,
                                               **SYNTHETIC_QUERIES.form())
    abort_on_query = forms.BooleanField(label="Stop when I query", required=False, initial=True)
