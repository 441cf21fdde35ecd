from rest_framework import serializers

from apps.cubes.models import CUBE_ID_PATTERN, Cube
from apps.core.api.serializers import JSONCharField

ROLES = ["owner", "admin", "writer", "reader"]


class CubeIdField(JSONCharField, serializers.RegexField):
    """A cube id in a request: letters, digits, '_' and '-'."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", Cube._meta.get_field("id").max_length)
        kwargs.setdefault("error_messages", {"invalid": "A cube id holds only letters, digits, '_' and '-'."})
        super().__init__(CUBE_ID_PATTERN, **kwargs)


class CubeSerializer(serializers.ModelSerializer):
    """A cube the caller can read, from cubes.selectors.cube_list_with_stats (role and memory_count)."""

    owner = serializers.CharField(source="owner.username")
    role = serializers.ChoiceField(choices=ROLES, help_text="Your role in this cube.")
    memory_count = serializers.IntegerField(help_text="Live (not deleted) memories in the cube.")

    class Meta:
        model = Cube
        fields = ["id", "name", "description", "owner", "is_personal", "role", "memory_count", "created_at",
                  "updated_at"]
        read_only_fields = fields
