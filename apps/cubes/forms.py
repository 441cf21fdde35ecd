"""Forms of the cube pages (templates/cubes/). They only carry what people type to the cube services; the
rules (the id pattern, lengths, roles, who exists) are the services', whose errors
apps.core.forms.add_service_error puts next to the field they name."""
from __future__ import annotations

from django import forms

from apps.cubes.models import CUBE_ID_PATTERN, Cube
from apps.cubes.validation import MAX_CUBE_ID_CHARS, SHARE_ROLES
from apps.core.forms import ServiceCheckedTextField

ROLE_HELP = "reader: reads its memories; writer: adds, edits and deletes them too; admin: also shares and renames."


class CubeFields(forms.Form):
    """What registering and editing share; sent as typed (the services strip and check them)."""

    name = ServiceCheckedTextField(help_text="How the cube is shown; leave empty to use its id.")
    description = ServiceCheckedTextField(widget=forms.Textarea(attrs={"rows": 2}))
    path = ServiceCheckedTextField(label="Path", help_text="Kept as information only: Engram never opens it.")


class CubeRegisterForm(CubeFields):
    cube_id = ServiceCheckedTextField(
        label="Id", widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=f"1 to {MAX_CUBE_ID_CHARS} letters, digits, “_” or “-” ({CUBE_ID_PATTERN}); "
                  "agents address the cube by it.",
    )
    field_order = ["cube_id", "name", "description", "path"]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {"cube_id": data["cube_id"], "name": data["name"] or None, "description": data["description"],
                "path": data["path"]}


class CubeEditForm(CubeFields):
    name = ServiceCheckedTextField()

    @classmethod
    def for_cube(cls, cube: Cube, data=None) -> "CubeEditForm":
        return cls(data, initial={"name": cube.name, "description": cube.description, "path": cube.path})

    def service_arguments(self) -> dict:
        return dict(self.cleaned_data)


class CubeShareForm(forms.Form):
    user = forms.CharField(label="Username", max_length=150,
                           widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}))
    role = forms.ChoiceField(choices=[(role, role.capitalize()) for role in SHARE_ROLES], help_text=ROLE_HELP)

    def service_arguments(self) -> dict:
        return dict(self.cleaned_data)
