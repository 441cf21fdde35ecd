"""Forms of the memory pages (templates/memories/). They only parse what people type into the shapes that
memory_store, memory_update and memory_search take (numbers, lists, dates); the rules belong to the
services, whose InvalidInput errors `add_service_error` puts next to the input they are about."""
from __future__ import annotations

from datetime import datetime, time

from django import forms
from django.utils import timezone

from apps.core.forms import LabelListField, ServiceCheckedTextField, unit_interval_field
from apps.core.limits import OFFSET
from apps.memories.models import Sector

SEARCH_PAGE_SIZES = [(10, "10"), (20, "20"), (50, "50"), (100, "100")]


class MemoryFields(forms.Form):
    """The fields that storing and editing share."""

    content = ServiceCheckedTextField(widget=forms.Textarea(attrs={"rows": 6, "autofocus": True}))
    primary_sector = forms.ChoiceField(label="Primary sector", choices=Sector.choices, initial=Sector.SEMANTIC)
    importance = unit_interval_field("Importance", "From 0 to 1; leave empty for the default (0.5).")
    tags = LabelListField()
    keywords = LabelListField(help_text="Separate them with commas; leave empty to extract them from the content.")
    category = ServiceCheckedTextField()
    context = ServiceCheckedTextField(widget=forms.Textarea(attrs={"rows": 2}), help_text="Where this came from.")


class MemoryStoreForm(MemoryFields):
    cube = forms.ChoiceField(label="Cube", required=False)
    field_order = ["content", "cube", "primary_sector"]
    service_fields = {"cube_id": "cube"}

    def __init__(self, *args, cubes, **kwargs):
        super().__init__(*args, **kwargs)
        # A new user's personal cube is made by the first store: until then, the empty choice stands for it.
        self.fields["cube"].choices = [(cube.pk, cube.name) for cube in cubes] or [("", "Your personal cube")]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "content": data["content"], "cube_id": data["cube"] or None, "primary_sector": data["primary_sector"],
            "importance": data["importance"], "tags": data["tags"], "keywords": data["keywords"] or None,
            "category": data["category"], "context": data["context"],
        }


class MemoryEditForm(MemoryFields):
    salience = unit_interval_field("Salience", "From 0 to 1: how much this memory stands out.")
    strength = unit_interval_field("Strength", "From 0 to 1: decays over time, grows with each access.")
    field_order = ["content", "primary_sector", "importance", "salience", "strength"]

    @classmethod
    def for_memory(cls, memory, data=None) -> "MemoryEditForm":
        fields = ["content", "primary_sector", "importance", "salience", "strength", "tags", "keywords", "category",
                  "context"]
        return cls(data, initial={name: getattr(memory, name) for name in fields})

    def changes(self) -> dict:
        """Only what the person changed: memory_update is selective, and unchanged content must not
        re-embed nor relink."""
        return {name: self.cleaned_data[name] for name in self.changed_data}


class SearchForm(forms.Form):
    q = ServiceCheckedTextField(
        label="Search", widget=forms.TextInput(attrs={"type": "search", "placeholder": "What do you remember?"}),
    )
    cube = forms.ChoiceField(label="Cube", required=False)
    sector = forms.ChoiceField(label="Primary sector", required=False, choices=[("", "Any sector"), *Sector.choices])
    min_strength = unit_interval_field("Min strength", "")
    min_salience = unit_interval_field("Min salience", "")
    date_from = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    tags = LabelListField(help_text="Memories with all of these tags.")
    category = ServiceCheckedTextField()
    limit = forms.TypedChoiceField(label="Per page", choices=SEARCH_PAGE_SIZES, coerce=int, required=False,
                                   empty_value=10)
    offset = forms.IntegerField(required=False, widget=forms.HiddenInput, **OFFSET.form())

    service_fields = {"text": "q", "cube_id": "cube", "primary_sector": "sector", "date_start": "date_from",
                      "date_end": "date_to", "date_range": "date_to"}

    def __init__(self, *args, cubes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["cube"].choices = [("", "All cubes"), *((cube.pk, cube.name) for cube in cubes)]

    @property
    def has_query(self) -> bool:
        return any(self.data.get(name) for name in self.fields if name not in {"limit", "offset"})

    def filter_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "cube_id": data["cube"] or None, "primary_sector": data["sector"] or None,
            "min_strength": data["min_strength"], "min_salience": data["min_salience"],
            "date_start": _day_start(data["date_from"]), "date_end": _day_end(data["date_to"]),
            "tags": data["tags"], "category": data["category"] or None,
        }


def _day_start(day):
    return timezone.make_aware(datetime.combine(day, time.min)) if day else None


def _day_end(day):
    # "To" a date includes that whole day.
    return timezone.make_aware(datetime.combine(day, time.max)) if day else None
