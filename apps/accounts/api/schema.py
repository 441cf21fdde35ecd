"""OpenAPI description of Engram's bearer tokens (drf-spectacular finds it when this module is imported)."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "apps.accounts.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "An Engram API token (eng_...), made in the dashboard, the admin, `manage.py create_token` or "
                "POST /api/v1/tokens/. Scopes: read for reads (and retrieve/search), write for writes, "
                "admin for both."
            ),
        }
