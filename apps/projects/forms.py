"""Forms of the Mind pages (templates/projects/). As on the rest of the dashboard they only parse what
people type into the shapes the services take (lists, alternatives, detection patterns); the rules
(lengths, choices, regexes, uniqueness) belong to the services, whose InvalidInput errors
`show_service_error` puts next to the input they are about."""
from __future__ import annotations

import re

from django import forms

from apps.core.exceptions import DomainError
from apps.core.forms import (
    LabelListField, LinesField, ServiceCheckedTextField, add_service_error, service_text_area, unit_interval_field,
)
from apps.projects.models import Decision, Issue, Project, SharpEdge

# A service field such as "detection_patterns[2].pattern" or "alternatives[0].option".
INDEXED_FIELD = re.compile(r"^(?P<name>[a-z_]+)\[(?P<index>\d+)\](?:\.(?P<sub>[a-z_]+))?")
PATTERN_ROWS_EXTRA = 2


def show_service_error(form: forms.Form, error: DomainError, rows: forms.BaseFormSet | None = None) -> None:
    """Put a service's error next to its input: a detection pattern's error on its row of ``rows``,
    ``alternatives[1].option`` on the alternatives textarea, anything else as add_service_error does."""
    field = error.extra.get("field") or ""
    match = INDEXED_FIELD.match(field)
    if not match:
        add_service_error(form, error)
        return
    index, name, sub = int(match["index"]), match["name"], match["sub"]
    # "detection_patterns[2].pattern: unbalanced parenthesis" -> "Unbalanced parenthesis" on that row's input.
    detail = error.message.removeprefix(match[0]).lstrip(" .:")
    if rows is not None and name == "detection_patterns":
        filled = filled_rows(rows)
        if index < len(filled):
            filled[index].add_error(sub if sub in filled[index].fields else None, detail[:1].upper() + detail[1:])
            return
    message = f"Line {index + 1}: {sub or 'this line'} {detail}" if name == "alternatives" else error.message
    form.add_error(name if name in form.fields else None, message)


class AlternativesField(LinesField):
    """``option: why it was rejected``, one a line -> [{"option", "rejected_because"}]."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "One a line, as “option: why it was rejected”; the reason is optional.")
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return "\n".join(
                f"{item.get('option', '')}: {item['rejected_because']}" if item.get("rejected_because")
                else item.get("option", "") for item in value
            )
        return value

    def to_python(self, value) -> list[dict]:
        alternatives = []
        for line in super().to_python(value):
            option, _, why = line.partition(":")
            alternatives.append({"option": option.strip(), "rejected_because": why.strip()})
        return alternatives

    def has_changed(self, initial, data) -> bool:
        return [{"option": a.get("option", ""), "rejected_because": a.get("rejected_because", "")}
                for a in initial or []] != self.to_python(data)


class ChangesMixin:
    """Edit forms send only what the person changed: the update services are selective, and unchanged
    text must not rewrite (and re-embed) the entity's memory node."""

    edit_fields: tuple[str, ...] = ()

    @classmethod
    def for_instance(cls, instance, data=None, **kwargs):
        return cls(data, initial={name: getattr(instance, name) for name in cls.edit_fields}, **kwargs)

    def changes(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.changed_data}


class ProjectCreateForm(forms.Form):
    name = ServiceCheckedTextField(widget=forms.TextInput(attrs={"autocomplete": "off"}))
    current_goal = ServiceCheckedTextField(label="Current goal")
    stack = LabelListField(help_text="Separate them with commas, e.g. “django, postgres”.")
    repo_path = ServiceCheckedTextField(label="Repository path", help_text="Lets agents find the project by path.")
    status = forms.ChoiceField(choices=Project.Status.choices, initial=Project.Status.ACTIVE)

    def service_arguments(self) -> dict:
        return dict(self.cleaned_data)


class ProjectEditForm(ChangesMixin, ProjectCreateForm):
    current_goal = service_text_area(2, label="Current goal")
    blocked_by = LinesField(label="Blocked by")
    open_threads = LinesField(label="Open threads")
    edit_fields = ("name", "current_goal", "stack", "repo_path", "status", "blocked_by", "open_threads")


class ProjectFilterForm(forms.Form):
    status = forms.ChoiceField(choices=[("", "Any status"), *Project.Status.choices], required=False)
    deleted = forms.BooleanField(required=False, label="Include deleted")


class DecisionForm(ChangesMixin, forms.Form):
    title = ServiceCheckedTextField()
    description = service_text_area()
    context = service_text_area(2, help_text="What situation led to this.")
    reasoning = service_text_area(help_text="Why this choice.")
    alternatives = AlternativesField()
    confidence = unit_interval_field("Confidence", "From 0 to 1; leave empty for the default (0.7).")
    revisit_if = ServiceCheckedTextField(label="Revisit if", help_text="The condition to reconsider it.")
    trigger_phrases = LabelListField(label="Trigger phrases", help_text="Phrases that should bring it back, "
                                                                        "separated by commas.")
    edit_fields = ("title", "description", "context", "reasoning", "alternatives", "confidence", "revisit_if",
                   "trigger_phrases", "status")

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if editing:
            self.fields["status"] = forms.ChoiceField(choices=Decision.Status.choices)

    def service_arguments(self) -> dict:
        return dict(self.cleaned_data)


class IssueForm(forms.Form):
    title = ServiceCheckedTextField()
    description = service_text_area()
    severity = forms.ChoiceField(choices=Issue.Severity.choices, initial=Issue.Severity.MAJOR)
    symptoms = LinesField(help_text="Error messages or behaviours, one a line.")
    trigger_phrases = LabelListField(label="Trigger phrases")

    def service_arguments(self) -> dict:
        return dict(self.cleaned_data)


class IssueUpdateForm(ChangesMixin, forms.Form):
    title = ServiceCheckedTextField()
    description = service_text_area()
    severity = forms.ChoiceField(choices=Issue.Severity.choices)
    status = forms.ChoiceField(choices=Issue.Status.choices)
    current_theory = service_text_area(2, label="Current theory")
    blocked_by = ServiceCheckedTextField(label="Blocked by")
    resolution = service_text_area(2)
    edit_fields = ("title", "description", "severity", "status", "current_theory", "blocked_by", "resolution")


class EpisodeForm(ChangesMixin, forms.Form):
    """Episodes are written when a session ends; people correct and enrich them here."""

    title = ServiceCheckedTextField()
    narrative = service_text_area(6)
    mood_arc = LinesField(label="Mood arc", help_text="How the mood went, one a line, in order.")
    lessons = LinesField(help_text="One a line.")
    breakthroughs = LinesField(help_text="One a line.")
    frustrations = LinesField(help_text="One a line.")
    edit_fields = ("title", "narrative", "mood_arc", "lessons", "breakthroughs", "frustrations")


class AttemptForm(forms.Form):
    what = service_text_area(2, label="What was tried")
    result = service_text_area(2, label="Result")
    learned = service_text_area(2, label="Learned", help_text="Optional.")
    service_fields = {"add_attempt.what": "what", "add_attempt.result": "result", "add_attempt.learned": "learned",
                      "add_attempt": "what"}

    def attempt(self) -> dict:
        return dict(self.cleaned_data)  # an empty "learned" is the service's "nothing learned"


class EdgeForm(ChangesMixin, forms.Form):
    title = ServiceCheckedTextField()
    description = service_text_area()
    workaround = service_text_area(2)
    root_cause = service_text_area(2, label="Root cause")
    symptoms = LinesField(help_text="Error messages or behaviours, one a line.")
    share_with_community = forms.BooleanField(required=False, label="Share with the community")
    edit_fields = ("title", "description", "workaround", "root_cause", "symptoms", "share_with_community")

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not editing:
            self.fields["is_global"] = forms.BooleanField(
                required=False, label="Global", help_text="Check it for every project of yours, not only this one.",
            )

    def service_arguments(self) -> dict:
        return {name: value for name, value in self.cleaned_data.items() if name != "is_global"}


class PatternRowForm(forms.Form):
    """One detection pattern; a row left empty is no pattern."""

    type = forms.ChoiceField(choices=SharpEdge.PatternType.choices, initial=SharpEdge.PatternType.CODE)
    pattern = ServiceCheckedTextField(widget=forms.TextInput(attrs={"spellcheck": "false"}))
    description = ServiceCheckedTextField()
    file_glob = ServiceCheckedTextField(label="File glob", help_text="Code patterns only, e.g. *.ts")

    def is_filled(self) -> bool:
        return any(self.cleaned_data.get(name) for name in ("pattern", "description", "file_glob"))

    def as_pattern(self) -> dict:
        data = self.cleaned_data
        return {"type": data["type"], "pattern": data["pattern"], "description": data["description"],
                **({"file_glob": data["file_glob"]} if data["file_glob"] else {})}


PatternRows = forms.formset_factory(PatternRowForm, extra=PATTERN_ROWS_EXTRA, can_delete=True)


def pattern_rows(data=None, patterns=None) -> forms.BaseFormSet:
    return PatternRows(data, initial=patterns or None, prefix="patterns")


def filled_rows(rows: forms.BaseFormSet) -> list[PatternRowForm]:
    """The rows that are a pattern, in order: the service numbers patterns by their place in this list."""
    return [row for row in rows.forms if row not in rows.deleted_forms and row.is_filled()]


def patterns_from_rows(rows: forms.BaseFormSet) -> list[dict]:
    return [row.as_pattern() for row in filled_rows(rows)]


class CheckEdgesForm(forms.Form):
    code = service_text_area(10, help_text="The code you are about to write or run.")
    intent = ServiceCheckedTextField(help_text="What you are trying to do, in a sentence.")
    runtime = ServiceCheckedTextField(help_text="e.g. edge, serverless, node")
    framework = ServiceCheckedTextField(help_text="e.g. nextjs, django")
    file_path = ServiceCheckedTextField(label="File path", help_text="Lets file globs of code patterns apply.")
    project = forms.ChoiceField(required=False)
    service_fields = {"context.runtime": "runtime", "context.framework": "framework", "context.file_path": "file_path",
                      "project_id": "project"}

    def __init__(self, *args, projects, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [("", "All my projects"), *((str(p.pk), p.name) for p in projects)]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        context = {name: data[name] for name in ("runtime", "framework", "file_path") if data[name]}
        return {"code": data["code"] or None, "intent": data["intent"] or None, "context": context or None,
                "project_id": data["project"] or None}


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[("json", "JSON"), ("markdown", "Markdown")])
    project = forms.UUIDField(required=False, widget=forms.HiddenInput)
    include_sessions = forms.BooleanField(required=False, label="Include sessions")
    service_fields = {"project_id": "project"}

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"format": data["format"], "project_id": data["project"],
                "include_sessions": data["include_sessions"]}
