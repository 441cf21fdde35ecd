"""Form helpers shared by every app's pages. Forms only parse what people type into the shapes that
services take (numbers, lists, dates); the rules themselves (empty content, ranges, sizes, scopes) belong
to the services, whose errors `add_service_error` puts next to the input they are about."""
from __future__ import annotations

from django import forms
from django.core import validators
from django.forms.utils import pretty_name

from apps.core.aliases import Aliases
from apps.core.exceptions import DomainError


def service_error_field(form: forms.Form, error: DomainError) -> str | None:
    """The form field a service's error names, or None when it names none of the form's fields. A form's
    ``service_fields`` is its alias table: the service's argument name -> the form field, where they differ."""
    field = _aliases(form).caller_name(error.extra.get("field"))
    return field if field in form.fields else None


def add_service_error(form: forms.Form, error: DomainError) -> None:
    """Show a service's error on the form field it names, or above the form when it names none."""
    field = service_error_field(form, error)
    if field is None:
        form.add_error(None, error.message)
        return
    service_field = error.extra.get("field")
    message = error.message
    if message.startswith(f"{service_field} "):
        message = f"{field}{message[len(service_field):]}"
    form.add_error(field, in_form_words(form, message))


def in_form_words(form: forms.Form, message: str) -> str:
    """A service's message with the names it quotes spelled as the labels people see next to the inputs
    ("min_strength must be ..." -> "Min strength must be ..."). A plain word such as "name" is prose there unless it opens the message."""
    def label(name: str) -> str:
        return (form.fields[name].label or pretty_name(name)) if name in form.fields else name

    # Every field the form shows is a name the message may quote.
    names = Aliases({**{name: name for name in form.fields}, **getattr(form, "service_fields", {})})
    return names.caller_message(message, spell=label)


def _aliases(form: forms.Form) -> Aliases:
    return Aliases(getattr(form, "service_fields", {}))


class ServiceCheckedTextField(forms.CharField):
    """Free text passed to the service as typed: the service says what is wrong with it (empty, NUL
    bytes, too long) in the same words on every edge, so the form adds no rules of its own."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, validators.ProhibitNullCharactersValidator)]

    def to_python(self, value) -> str:
        # Browsers send textarea line breaks as CRLF; stored text uses LF, so unchanged text compares equal.
        return super().to_python(value).replace("\r\n", "\n")


def service_text_area(rows: int = 3, **kwargs) -> ServiceCheckedTextField:
    """Free text in a textarea of ``rows`` lines, checked by the service."""
    return ServiceCheckedTextField(widget=forms.Textarea(attrs={"rows": rows}), **kwargs)


class ListField(forms.CharField):
    """Text -> a list of strings, split by ``split`` and joined back by ``joiner`` (blank items dropped; the
    service trims, deduplicates and limits them)."""

    joiner: str
    default_help_text: str

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", self.default_help_text)
        super().__init__(**kwargs)

    def split(self, text: str) -> list[str]:
        raise NotImplementedError

    def prepare_value(self, value):
        return self.joiner.join(value) if isinstance(value, (list, tuple)) else value

    def to_python(self, value) -> list[str]:
        return [item.strip() for item in self.split(super().to_python(value)) if item.strip()]

    def has_changed(self, initial, data) -> bool:
        return list(initial or []) != self.to_python(data)


class LabelListField(ListField):
    """Comma-separated labels -> a list of strings."""

    joiner = ", "
    default_help_text = "Separate them with commas."

    def split(self, text: str) -> list[str]:
        return text.split(",")


class LinesField(ListField):
    """One item a line -> a list of strings."""

    widget = forms.Textarea(attrs={"rows": 3})
    joiner = "\n"
    default_help_text = "One a line."

    def split(self, text: str) -> list[str]:
        return text.splitlines()


def unit_interval_field(label: str, help_text: str) -> forms.FloatField:
    """An optional number from 0 to 1 (importance, strength, confidence). No min/max here: the service
    checks the range and says so next to the field."""
    return forms.FloatField(
        label=label, required=False, help_text=help_text,
        widget=forms.NumberInput(attrs={"step": "0.05", "inputmode": "decimal"}),
    )
