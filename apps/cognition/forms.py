"""Forms of the Context Graph pages (templates/cognition/): they only carry what a button sends to the services
(a task's note, a reversal hash, a trash search, a scratchpad's key); the services judge it."""
from __future__ import annotations

from django import forms

from apps.cognition.limits import COMPARE_TOP_K, HAYSTACK_SIZE, NEEDLE_COUNT
from apps.cognition.models import ConsolidationRun
from apps.cognition.services.benchmark import METHODS
from apps.cognition.services.dream.limits import DREAM_MINUTES, SYNTHETIC_QUERIES
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


class DreamTriggerForm(forms.Form):
    # The ranges are trigger_dream's (services/dream/limits.py); the service checks them again.
    phase = forms.ChoiceField(choices=ConsolidationRun.Phase.choices, initial=ConsolidationRun.Phase.FULL_CYCLE)
    duration_minutes = forms.IntegerField(label="Minutes", initial=DREAM_MINUTES.default, **DREAM_MINUTES.form())
    synthetic_query_count = forms.IntegerField(label="REM walks", initial=SYNTHETIC_QUERIES.default,
                                               **SYNTHETIC_QUERIES.form())
    abort_on_query = forms.BooleanField(label="Stop when I query", required=False, initial=True)
class AdversarialCheckForm(forms.Form):
    content = service_text_area(rows=6, label="Content to check", help_text=(
        "Paste what an agent would store: it is checked as store_memory would check it, and nothing is stored."))


class BenchmarkStartForm(forms.Form):
    test_type = forms.ChoiceField(label="Test", choices=[
        ("needle_haystack", "Needle in a haystack: reworded questions keep the fact's key word"),
        ("semantic_similarity", "Semantic similarity: questions share only the name"),
        ("causal_inference", "Causal inference: ask for a cause or a consequence"),
        ("full_suite", "Full suite: the three in turn")])
    needle_count = forms.IntegerField(label="Needles", initial=NEEDLE_COUNT.default, **NEEDLE_COUNT.form(),
                                      help_text=f"Facts to find again, {NEEDLE_COUNT}.")
    haystack_size = forms.IntegerField(label="Haystack", initial=HAYSTACK_SIZE.default, **HAYSTACK_SIZE.form(),
                                       help_text=f"Other facts around them, {HAYSTACK_SIZE}.")
    baseline_model = forms.ChoiceField(label="Compare with", choices=[
        ("text-embedding-3-large", "Dense cosine alone (the local model stands in for a hosted one)"),
        ("none", "No baseline")])


class CompareForm(forms.Form):
    query = ServiceCheckedTextField(label="Query", widget=forms.TextInput(
        attrs={"type": "search", "placeholder": "What would an agent ask?"}))
    top_k = forms.IntegerField(label="Results per method", required=False, initial=COMPARE_TOP_K.default,
                               **COMPARE_TOP_K.form())
    methods = forms.MultipleChoiceField(label="Methods", required=False, widget=forms.CheckboxSelectMultiple,
                                        choices=[(name, name) for name in METHODS],
                                        help_text="Leave all unticked for the default three.")
