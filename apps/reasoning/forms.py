"""Forms of the reasoning pages (templates/reasoning/). As on the rest of the dashboard they only parse what
people type into the shapes the services take (numbers, lists, the seeds' context object); the rules
(ranges, lengths, which thought exists) belong to the services, whose errors `add_service_error` puts
next to the input they are about (``service_fields`` maps the services' argument names to the inputs, where
they differ)."""
from __future__ import annotations

from django import forms

from apps.core.forms import LabelListField, LinesField, ServiceCheckedTextField, service_text_area
from apps.reasoning.analysis.frameworks import FRAMEWORKS
from apps.reasoning.models import Cell, Notebook

# The seeds' enums, as people read them.
THINK_MODES = [
    ("analytical", "Analytical: logical, step by step"),
    ("creative", "Creative: new options"),
    ("critical", "Critical: look for flaws"),
    ("synthetic", "Synthetic: the whole picture"),
    ("parallel", "Parallel: all four streams"),
]
FRAMEWORK_CHOICES = [("", "Choose automatically"),
                     *((framework.id, framework.name) for framework in FRAMEWORKS.values())]


def _number(label: str, **kwargs) -> forms.IntegerField:
    # No bounds here: the service checks them and says so next to the field.
    return forms.IntegerField(label=label, required=False, widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
                              **kwargs)


# Thought sessions

class SessionFilterForm(forms.Form):
    query = forms.CharField(required=False, label="Search", widget=forms.TextInput(
        attrs={"type": "search", "placeholder": "Title or tag"}))
    tag = forms.CharField(required=False, widget=forms.HiddenInput)
    deleted = forms.BooleanField(required=False, label="Include deleted")

    def selector_arguments(self) -> dict:
        data = self.cleaned_data if self.is_valid() else {}
        return {"query": data.get("query") or None, "tag": data.get("tag") or None,
                "include_deleted": bool(data.get("deleted"))}


class SessionCreateForm(forms.Form):
    """A person starts a chain the way an agent does: thought 1 of a new session, with its title and tags."""

    title = ServiceCheckedTextField(widget=forms.TextInput(attrs={"autocomplete": "off"}))
    tags = LabelListField()
    thought = service_text_area(4, label="First thought")
    total_thoughts = _number("Thoughts planned", initial=5, help_text="An estimate; you can go past it.")
    service_fields = {"session_title": "title", "session_tags": "tags"}

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        total = data["total_thoughts"] if data["total_thoughts"] is not None else 1
        return {"thought": data["thought"], "thought_number": 1, "total_thoughts": total,
                "next_thought_needed": total > 1, "session_title": data["title"], "session_tags": data["tags"]}


class ThoughtForm(forms.Form):
    thought = service_text_area(4)
    thought_number = _number("Thought number")
    total_thoughts = _number("Thoughts planned")
    next_thought_needed = forms.BooleanField(required=False, initial=True, label="Another thought is needed")
    revises_thought = _number("Revises thought", help_text="The number of the thought this one corrects.")
    branch_from_thought = _number("Branch from thought", help_text="Start a branch at this thought…")
    branch_id = ServiceCheckedTextField(label="Branch id", help_text="…and name it, e.g. “alternative-a”.")
    def clean(self):
        data = super().clean()
        for name in ("thought_number", "total_thoughts"):
            if data.get(name) is None and name not in self.errors:
                self.add_error(name, "Enter a number.")
        return data

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"thought": data["thought"], "thought_number": data["thought_number"],
                "total_thoughts": data["total_thoughts"], "next_thought_needed": data["next_thought_needed"],
                "is_revision": data["revises_thought"] is not None, "revises_thought": data["revises_thought"],
                "branch_from_thought": data["branch_from_thought"], "branch_id": data["branch_id"] or None}


# Notebooks

class NotebookCreateForm(forms.Form):
    title = ServiceCheckedTextField(widget=forms.TextInput(attrs={"autocomplete": "off"}))
    language = forms.ChoiceField(choices=Notebook.Language.choices, initial=Notebook.Language.JAVASCRIPT)
    template = forms.ChoiceField(required=False, help_text="Start from a ready-made notebook, or an empty one.")

    def __init__(self, *args, templates: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].choices = [("", "Empty notebook"), *((name, name) for name in templates)]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"title": data["title"], "language": data["language"], "template": data["template"] or None}


class NotebookLoadForm(forms.Form):
    file = forms.FileField(label="Notebook file (.src.md)")
    service_fields = {"text": "file", "path": "file"}

    def clean_file(self) -> str:
        upload = self.cleaned_data["file"]
        try:
            return upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise forms.ValidationError("This file is not UTF-8 text: upload the .src.md a notebook export wrote.")


class CellAddForm(forms.Form):
    cell_type = forms.ChoiceField(label="Type", choices=Cell.CellType.choices, initial=Cell.CellType.CODE)
    filename = ServiceCheckedTextField(help_text="Code cells: the file it is saved as, e.g. main.js.")
    content = ServiceCheckedTextField(widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}))
    position = _number("Position", help_text="0 is first; leave empty to add it at the end.")
    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"cell_type": data["cell_type"], "content": data["content"], "filename": data["filename"] or None,
                "position": data["position"]}


class CellEditForm(forms.Form):
    content = ServiceCheckedTextField(widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}))
    filename = ServiceCheckedTextField()

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"content": data["content"], "filename": data["filename"] or None}


class DependenciesForm(forms.Form):
    dependencies = LabelListField(label="npm packages", help_text="Separate them with commas, e.g. “lodash, "
                                                                  "date-fns@3”.")

    def clean_dependencies(self) -> list[str]:
        # Also accept them separated by spaces, as after `npm install`.
        return [name for item in self.cleaned_data["dependencies"] for name in item.split()]


# The workbench: one form a tool

class ContextFields(forms.Form):
    """The seeds' context object {background, constraints, goals} of think, analyze_systematically,
    think_parallel and decompose_problem."""

    background = service_text_area(2)
    constraints = LinesField()
    goals = LinesField()
    service_fields = {"context.background": "background", "context.constraints": "constraints",
                      "context.goals": "goals"}

    def context(self) -> dict | None:
        data = self.cleaned_data
        context = {name: data[name] for name in ("background", "constraints", "goals") if data.get(name)}
        return context or None


class ThinkForm(ContextFields):
    problem = service_text_area(3)
    mode = forms.ChoiceField(choices=THINK_MODES, initial="analytical")
    field_order = ["problem", "mode"]

    def service_arguments(self) -> dict:
        return {"problem": self.cleaned_data["problem"], "mode": self.cleaned_data["mode"], "context": self.context()}


class AnalyzeSystematicallyForm(ContextFields):
    problem = service_text_area(3)
    preferred_framework = forms.ChoiceField(label="Framework", choices=FRAMEWORK_CHOICES, required=False)
    field_order = ["problem", "preferred_framework"]

    def service_arguments(self) -> dict:
        return {"problem": self.cleaned_data["problem"], "context": self.context(),
                "preferred_framework": self.cleaned_data["preferred_framework"] or None}


class ThinkParallelForm(ContextFields):
    problem = service_text_area(3)
    timeout_ms = _number("Timeout (ms)", initial=30000, help_text="From 1000 to 60000.")
    field_order = ["problem", "timeout_ms"]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"problem": data["problem"], "context": self.context(),
                **({"timeout_ms": data["timeout_ms"]} if data["timeout_ms"] is not None else {})}


class DecomposeForm(ContextFields):
    problem = service_text_area(3)
    max_depth = _number("Maximum depth", initial=3, help_text="From 1 to 5.")
    goals = None
    field_order = ["problem", "max_depth"]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"problem": data["problem"], "context": self.context(),
                **({"max_depth": data["max_depth"]} if data["max_depth"] is not None else {})}


class AssessConfidenceForm(forms.Form):
    reasoning = service_text_area(4)
    evidence = LinesField(help_text="One piece of evidence a line.")
    context = ServiceCheckedTextField()

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"reasoning": data["reasoning"], "evidence": data["evidence"] or None, "context": data["context"] or None}


class DetectBiasForm(forms.Form):
    reasoning = service_text_area(4)
    context = ServiceCheckedTextField()
    monitor_continuously = forms.BooleanField(required=False, label="Monitor continuously")

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"reasoning": data["reasoning"], "context": data["context"] or None,
                "monitor_continuously": data["monitor_continuously"]}


class DetectEmotionForm(forms.Form):
    text = service_text_area(4)
    include_discrete = forms.BooleanField(required=False, initial=True, label="Include the discrete emotions")
    context = ServiceCheckedTextField()

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"text": data["text"], "include_discrete": data["include_discrete"], "context": data["context"] or None}


class AnalyzeReasoningForm(forms.Form):
    reasoning = service_text_area(4)
    context = ServiceCheckedTextField()
    include_confidence = forms.BooleanField(required=False, initial=True, label="Include confidence")
    include_bias = forms.BooleanField(required=False, initial=True, label="Include biases")
    include_emotion = forms.BooleanField(required=False, initial=False, label="Include emotion")

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"reasoning": data["reasoning"], "context": data["context"] or None,
                **{name: data[name] for name in ("include_confidence", "include_bias", "include_emotion")}}
