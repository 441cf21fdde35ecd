"""How the shared serializer building blocks read in OpenAPI (drf-spectacular finds these once this module is
imported, which CoreConfig.ready does).

A body the server would refuse must not be valid by the schema: StrictSerializer refuses keys it does not
declare (additionalProperties: false), a PATCH body that changes nothing (minProperties: 1) and an empty list
where a list must not be empty (minItems: 1; DRF's allow_empty=False is not in drf-spectacular's mapping).
"""
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from apps.core.api.serializers import AtLeastOneFieldMixin


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
        return schema
