"""Forms of the memory pages (templates/memories/). They only parse what people type into the shapes that
memory_store, memory_update and memory_search take (numbers, lists, dates); the rules belong to the
services, whose InvalidInput errors `add_service_error` puts next to the input they are about."""
from __future__ import annotations

from datetime import datetime, time

from django import forms
from django.utils import timezone

from apps.core.forms import LabelListField, ServiceCheckedTextField, unit_interval_field
from apps.core.limits import OFFSET
from apps.memories.models import Memory, Sector
from apps.memories.selectors import BROWSE_SORTS, MemoryBrowse
from apps.memories.services.bulk import MAX_BULK_MEMORIES

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


class DuplicateChoiceForm(forms.Form):
    """The answer to the store page's duplicate warning, sent with the store form: store anyway, or merge with
    one of the memories it repeats."""

    on_duplicate = forms.ChoiceField(required=False, choices=[("", "Ask"), ("store", "Store anyway")])
    merge_with = forms.UUIDField(required=False)


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


class MemoryListForm(forms.Form):
    """The memories list's filters and order, from the URL (so a filtered list can be shared and paged)."""

    q = ServiceCheckedTextField(label="Text", widget=forms.TextInput(
        attrs={"type": "search", "placeholder": "Words in the memory"}))
    sector = forms.ChoiceField(label="Sector", required=False)
    kind = forms.ChoiceField(label="Kind", required=False)
    tag = LabelListField(label="Tags", help_text="")
    cube = forms.ChoiceField(label="Cube", required=False)
    date_from = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    deleted = forms.BooleanField(label="Deleted only", required=False)
    sort = forms.ChoiceField(label="Sort", required=False, choices=[(key, label) for key, (label, _) in BROWSE_SORTS.items()])

    service_fields = {"text": "q", "primary_sector": "sector", "tags": "tag", "cube_id": "cube",
                      "created_after": "date_from", "created_before": "date_to"}

    def __init__(self, *args, cubes, **kwargs):
        super().__init__(*args, **kwargs)
        self.cubes = cubes
        self.set_counts(None)

    def set_counts(self, counts) -> None:
        """Choices with how many memories each would show (memory_browse_counts), or plain ones without counts."""
        def label(text, count) -> str:
            return text if counts is None else f"{text} ({count})"

        self.fields["sector"].choices = [("", "Any sector"), *(
            (value, label(text, counts and counts.sectors.get(value, 0))) for value, text in Sector.choices)]
        self.fields["kind"].choices = [("", "Any kind"), *(
            (value, label(text, counts and counts.kinds.get(value, 0))) for value, text in Memory.Kind.choices
            if counts is None or counts.kinds.get(value) or value == self.data.get("kind"))]
        self.fields["cube"].choices = [("", "All cubes"), *(
            (cube.pk, label(cube.name, counts and counts.cubes.get(cube.pk, 0))) for cube in self.cubes)]

    def browse(self) -> MemoryBrowse:
        data = self.cleaned_data
        return MemoryBrowse(text=data["q"].strip(), cube_id=data["cube"] or None, primary_sector=data["sector"] or None,
                            kind=data["kind"] or None, tags=tuple(data["tag"]), created_after=_day_start(data["date_from"]),
                            created_before=_day_end(data["date_to"]), deleted=data["deleted"],
                            sort=data["sort"] or "newest")

    @property
    def filtered(self) -> bool:
        return any(self.cleaned_data.get(name) for name in ("q", "sector", "kind", "tag", "cube", "date_from", "date_to"))


class MemoryIdsField(forms.Field):
    """The ids of the memories ticked on the list (the service checks each)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[str]:
        return [str(item) for item in value or []]

    def validate(self, value) -> None:
        if not value:
            raise forms.ValidationError("Select at least one memory.", code="required")
        if len(value) > MAX_BULK_MEMORIES:
            raise forms.ValidationError(f"Select at most {MAX_BULK_MEMORIES} memories at once.", code="max")


BULK_ACTIONS = [("delete", "Delete"), ("restore", "Restore"), ("move", "Move to cube"), ("tag", "Add tag"),
                ("untag", "Remove tag")]


class MemoryBulkForm(forms.Form):
    """A bulk action on the memories ticked on the list. ``cube`` offers only the cubes the user may write."""

    memory_ids = MemoryIdsField(label="Memories")
    action = forms.ChoiceField(label="Action", choices=BULK_ACTIONS)
    # Offers the cubes the user may write; the service refuses any other (a read-only cube, another's).
    cube = forms.CharField(label="Cube", required=False, widget=forms.Select(attrs={"id": "bulk-cube"}))
    tag = ServiceCheckedTextField(label="Tag")
    next = forms.CharField(required=False, widget=forms.HiddenInput)

    service_fields = {"cube_id": "cube", "add": "tag", "remove": "tag"}

    def __init__(self, *args, writable_cubes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["cube"].widget.choices = [("", "Choose a cube"), *((cube.pk, cube.name) for cube in writable_cubes)]

    def clean(self):
        data = super().clean()
        if data.get("action") == "move" and not data.get("cube") and not self.data.getlist("origins"):
            self.add_error("cube", "Choose the cube to move the memories to.")
        if data.get("action") in {"tag", "untag"} and not data.get("tag"):
            self.add_error("tag", "Type the tag to add or remove.")
        return data

    def origins(self) -> dict[str, list[str]]:
        """A move's undo puts each memory back into its own cube, sent as "origins" items "<memory id>:<cube id>":
        the memory ids to put back into each cube."""
        back: dict[str, list[str]] = {}
        for item in self.data.getlist("origins"):
            memory_id, _, cube_id = item.partition(":")
            back.setdefault(cube_id, []).append(memory_id)
        return back


def _day_start(day):
    return timezone.make_aware(datetime.combine(day, time.min)) if day else None


def _day_end(day):
    # "To" a date includes that whole day.
    return timezone.make_aware(datetime.combine(day, time.max)) if day else None
