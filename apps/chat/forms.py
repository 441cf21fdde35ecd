"""The chat page's form (templates/chat/chat.html). It carries the question, how many memories to answer from
and which cubes to search to apps.chat.services.chat_send, which owns the rules (lengths, the top_k range,
readable cubes); add_service_error puts its complaints next to the field they name."""
from __future__ import annotations

from django import forms

from apps.core.limits import CHAT_TOP_K
from apps.core.forms import ServiceCheckedTextField


class ChatForm(forms.Form):
    query = ServiceCheckedTextField(
        label="Your question",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Ask something your memories may answer…"}),
    )
    top_k = forms.IntegerField(
        label="Memories to use", required=False, initial=CHAT_TOP_K.default, help_text=f"{CHAT_TOP_K}.".capitalize(),
        **CHAT_TOP_K.form(), widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    cubes = forms.MultipleChoiceField(
        label="Cubes to search", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="None checked: every cube you can read.",
    )
    service_fields = {"cube_ids": "cubes"}

    def __init__(self, *args, cubes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["cubes"].choices = [(cube.pk, cube.name) for cube in cubes]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"query": data["query"], "top_k": CHAT_TOP_K.default if data["top_k"] is None else data["top_k"],
                "cube_ids": data["cubes"] or None}
