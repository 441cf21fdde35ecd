"""The REST API under /api/v1/: each app contributes its own urls module."""
from django.urls import include, path

urlpatterns = [
    path("", include("apps.accounts.api.urls")),
    path("", include("apps.cubes.api.urls")),
    path("", include("apps.memories.api.urls")),
    path("", include("apps.projects.api.urls")),
    path("", include("apps.chat.api.urls")),
    path("", include("apps.reasoning.api.urls")),
    path("", include("apps.graph.api.urls")),
    path("", include("apps.cognition.api.urls")),
]
