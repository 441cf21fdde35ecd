"""The app's URLs plus views that fail on purpose, so the error pages can be reached as a browser reaches them."""
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.urls import path

from config import urls as app_urls


def _bad(request):
    raise SuspiciousOperation("a malformed request")


def _forbidden(request):
    raise PermissionDenied


def _broken(request):
    raise RuntimeError("a bug")


urlpatterns = [
    path("fails/400/", _bad), path("fails/403/", _forbidden), path("fails/500/", _broken),
    path("api/v1/fails/400/", _bad), path("api/v1/fails/403/", _forbidden), path("api/v1/fails/500/", _broken),
    *app_urls.urlpatterns,
]
handler400, handler403 = app_urls.handler400, app_urls.handler403
handler404, handler500 = app_urls.handler404, app_urls.handler500
