from rest_framework import serializers

from apps.core.aliases import Aliases
from apps.core.api.serializers import AtLeastOneFieldMixin, JSONCharField, StrictSerializer
from apps.cubes.models import CUBE_ID_PATTERN, Cube, CubeMembership
from apps.cubes.selectors import ACTIONS, RESOURCE_TYPES
from apps.cubes.validation import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_PATH_CHARS

ROLES = ["owner", "admin", "writer", "reader"]
# The cube services' argument names -> this API's, where they differ: a cube named in the path is "cube" in errors.
CUBE_ALIASES = Aliases({"cube_id": "cube"})


class CubeIdField(JSONCharField, serializers.RegexField):
    """A cube id in a request: letters, digits, '_' and '-'."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", Cube._meta.get_field("id").max_length)
        kwargs.setdefault("error_messages", {"invalid": "A cube id holds only letters, digits, '_' and '-'."})
        super().__init__(CUBE_ID_PATTERN, **kwargs)


class CubeSerializer(serializers.ModelSerializer):
    """A cube the caller can read, from cubes.selectors.cube_list_with_stats (role and memory_count)."""

    owner = serializers.CharField(source="owner.username")
    # Not an enum in the schema: it would collide with the grantable roles' enum (no owner there).
    role = serializers.CharField(help_text=f"Your role in this cube: {', '.join(ROLES)}.")
    memory_count = serializers.IntegerField(help_text="Live (not deleted) memories in the cube.")

    class Meta:
        model = Cube
        fields = ["id", "name", "description", "path", "owner", "is_personal", "role", "memory_count", "created_at",
                  "updated_at"]
        read_only_fields = fields


class CubeStatisticsSerializer(serializers.Serializer):
    total_memories = serializers.IntegerField(help_text="Live memories.")
    memories_by_kind = serializers.DictField(child=serializers.IntegerField(), help_text="Live memories by kind.")
    total_size_bytes = serializers.IntegerField(help_text="Bytes of the live memories' content and metadata.")
    last_accessed = serializers.DateTimeField(allow_null=True, help_text="The latest access to any of them.")


class CubeDetailSerializer(CubeSerializer):
    statistics = CubeStatisticsSerializer()

    class Meta(CubeSerializer.Meta):
        fields = [*CubeSerializer.Meta.fields, "statistics"]
        read_only_fields = fields


def _text(max_chars: int, help_text: str) -> JSONCharField:
    return JSONCharField(max_length=max_chars, allow_blank=True, required=False,
                         help_text=f"{help_text} At most {max_chars} characters.")


class CubeCreateSerializer(StrictSerializer):
    id = CubeIdField(help_text="Unique across Engram: 1 to 100 letters, digits, '_' or '-'.")
    name = JSONCharField(max_length=MAX_NAME_CHARS, required=False, help_text="Defaults to the id.")
    description = _text(MAX_DESCRIPTION_CHARS, "")
    path = _text(MAX_PATH_CHARS, "Kept as information only; Engram never touches the file system for it.")


class CubeUpdateSerializer(AtLeastOneFieldMixin, StrictSerializer):
    name = JSONCharField(max_length=MAX_NAME_CHARS, required=False)
    description = _text(MAX_DESCRIPTION_CHARS, "")
    path = _text(MAX_PATH_CHARS, "Information only.")


class CubeDeleteQuerySerializer(StrictSerializer):
    hard = serializers.BooleanField(default=False, help_text="true: delete the cube and its memories for good; "
                                                             "otherwise unregister it (restorable).")


class MembershipSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username")

    user_id = serializers.IntegerField()
    cube = serializers.CharField(source="cube_id")

    class Meta:
        model = CubeMembership
        fields = ["cube", "user", "user_id", "role", "created_at", "updated_at"]
        read_only_fields = fields


class ShareSerializer(StrictSerializer):
    user = JSONCharField(max_length=150, help_text="Username or numeric user id.")
    role = serializers.ChoiceField(choices=CubeMembership.Role.choices, default=CubeMembership.Role.READER)


class AccessCheckSerializer(StrictSerializer):
    resource_type = serializers.ChoiceField(choices=RESOURCE_TYPES)
    resource_id = JSONCharField(max_length=200, allow_blank=True,
                                help_text="A cube id, memory id or chat session id; any value for 'admin'.")
    action = serializers.ChoiceField(choices=ACTIONS)


class AccessDecisionSerializer(serializers.Serializer):
    has_access = serializers.BooleanField()
    reason = serializers.CharField(help_text='Why, e.g. "owner of the cube", "member with read only", "not a member".')
    role = serializers.CharField(allow_null=True, help_text="Your role on the resource, when you have one.")
