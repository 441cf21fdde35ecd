"""Serializer building blocks shared by every REST app: strict input and the documented error envelope.

DRF is lenient by default: it ignores unknown keys and coerces JSON types (42 becomes "42", "0.5"
becomes 0.5, "yes" becomes True). A misspelt field or a wrong type then passes silently, so request
bodies use StrictSerializer and the JSON* fields, which refuse both with a message naming the field.
"""
from collections.abc import Mapping

from rest_framework import serializers

from apps.core.limits import LIST_LIMIT, OFFSET


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not declare (nested StrictSerializers refuse theirs too)."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            accepted = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(set(data) - accepted)
            if unknown:
                allowed = ", ".join(sorted(accepted))
                raise serializers.ValidationError(
                    {name: [f"Unknown field '{name}'. Allowed fields: {allowed}."] for name in unknown}
                )
        return super().to_internal_value(data)


class JSONCharField(serializers.CharField):
    """A JSON string and nothing else."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class JSONIntegerField(serializers.IntegerField):
    """A JSON number without a fraction; strings and booleans are refused."""

    def to_internal_value(self, data):
        if isinstance(data, (bool, str)):
            self.fail("invalid")
        return super().to_internal_value(data)


class JSONFloatField(serializers.FloatField):
    """A JSON number; strings and booleans are refused."""

    def to_internal_value(self, data):
        if isinstance(data, (bool, str)):
            self.fail("invalid")
        return super().to_internal_value(data)


class JSONBooleanField(serializers.BooleanField):
    """A JSON true or false; "yes", 1 and other truthy stand-ins are refused."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class NoBodySerializer(StrictSerializer):
    """An operation that takes no body: any field sent is refused rather than silently ignored."""


class AtLeastOneFieldMixin:
    """For PATCH bodies: one that changes nothing is a mistake worth reporting."""

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError(f"Give at least one field to change: {', '.join(self.fields)}.")
        return attrs


class PageQuerySerializer(StrictSerializer):
    """The query string of a paginated list: limit and offset, checked rather than silently clamped."""

    limit = serializers.IntegerField(required=False, **LIST_LIMIT.drf(),
                                     help_text=f"Items per page, {LIST_LIMIT} (default {LIST_LIMIT.default}).")
    offset = serializers.IntegerField(required=False, **OFFSET.drf(), help_text=f"Items to skip, {OFFSET}.")


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable: invalid_input, not_found, not_authenticated, ...")
    message = serializers.CharField(help_text="What went wrong and how to fix it, for people.")
    details = serializers.JSONField(help_text="Per-field errors, or the field at fault (`field`).")


class ErrorEnvelopeSerializer(serializers.Serializer):
    error = ErrorSerializer()


def error_responses(*statuses: int) -> dict:
    """OpenAPI responses for the given error statuses, all in the one envelope."""
    return {status: ErrorEnvelopeSerializer for status in statuses}


def validated(serializer_class: type[serializers.Serializer], data) -> dict:
    """Validate request data (a body or a query string) and return the clean values, or raise a 400."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
