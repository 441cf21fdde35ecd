from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from apps.core.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("config.api_urls")),
    path("projects/", include("apps.projects.urls")),
    path("cubes/", include("apps.cubes.urls")),
    path("chat/", include("apps.chat.urls")),
    path("reasoning/", include("apps.reasoning.urls")),
    path("trash/", include("apps.trash.urls")),
    path("", include("apps.dashboard.urls")),
]

# Under /api/ these answer in the API's JSON error envelope; elsewhere the app's pages (templates/400.html ...).
handler400 = "apps.core.api.errors.bad_request_view"
handler403 = "apps.core.api.errors.permission_denied_view"
handler404 = "apps.core.api.errors.not_found_view"
handler500 = "apps.core.api.errors.server_error_view"
