"""How the shared serializer building blocks read in OpenAPI (drf-spectacular finds the extension once this
module is imported, which CoreConfig.ready does; REST_FRAMEWORK's DEFAULT_SCHEMA_CLASS names the AutoSchema).

A body the server would refuse must not be valid by the schema: StrictSerializer refuses keys it does not
declare (additionalProperties: false), a PATCH body that changes nothing (minProperties: 1) and an empty list
where a list must not be empty (minItems: 1; DRF's allow_empty=False is not in drf-spectacular's mapping), and
DRF's CharField refuses NUL characters, which a plain {"type": "string"} allows (a pattern says so).
"""
from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from apps.core.api.serializers import AtLeastOneFieldMixin

NO_NUL = "^[^\\x00]*$"


def refuse_nul(schema: dict) -> None:
    """Give every free-text string of a request schema (no enum, format or pattern of its own) the NUL-free
    pattern, in its properties and list items too."""
    if schema.get("type") == "string" and not {"enum", "format", "pattern"} & set(schema):
        schema["pattern"] = NO_NUL
    for child in (*schema.get("properties", {}).values(), schema.get("items")):
        if isinstance(child, dict):
            refuse_nul(child)


class StrictSerializerSchema(OpenApiSerializerExtension):
    target_class = "apps.core.api.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
            if isinstance(self.target, AtLeastOneFieldMixin):
                schema["minProperties"] = 1
            for name, field in self.target.fields.items():
                if isinstance(field, serializers.ListField) and not field.allow_empty and name in schema["properties"]:
                    schema["properties"][name].setdefault("minItems", 1)
            refuse_nul(schema)
        return schema


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's, except that a PATCH body that must change something is a required body: sending none
    is refused like sending {}."""

    def _get_request_for_media_type(self, serializer, direction="request"):
        schema, required = super()._get_request_for_media_type(serializer, direction)
        cls = serializer if isinstance(serializer, type) else type(serializer)
        return schema, required or issubclass(cls, AtLeastOneFieldMixin)
