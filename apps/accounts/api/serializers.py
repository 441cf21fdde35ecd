from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.accounts.models import ApiToken
from apps.core.api.serializers import JSONCharField, StrictSerializer

SCOPE_NAMES = [choice.value for choice in ApiToken.Scope]


@extend_schema_field({
    "oneOf": [
        {"type": "array", "items": {"type": "string", "enum": SCOPE_NAMES}, "minItems": 1},
        {"type": "string", "example": "read,write"},
    ],
})
class ScopesField(serializers.Field):
    """A list of scopes or a comma-separated string; accounts.services.parse_scopes judges the names."""

    default_error_messages = {
        "invalid": 'Give scopes as a list (["read", "write"]) or a comma-separated string ("read,write").',
    }

    def to_internal_value(self, data):
        if isinstance(data, str) or (isinstance(data, list) and all(isinstance(item, str) for item in data)):
            return data
        self.fail("invalid")

    def to_representation(self, value):
        return value


class TokenSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at"]
        read_only_fields = fields


class TokenCreateSerializer(StrictSerializer):
    name = JSONCharField(max_length=100, help_text="A label to recognise the token by.")
    scopes = ScopesField(help_text="read, write, admin (staff only). A token can grant only scopes it holds.")
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="ISO 8601, in the future; leave out for no expiry.",
    )


class TokenCreatedSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The token itself. It is shown only in this response.")
    warning = serializers.CharField()

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "token", "warning"]
        read_only_fields = fields
