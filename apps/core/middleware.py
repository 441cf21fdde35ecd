from django.http import JsonResponse
from django.middleware.common import CommonMiddleware

from apps.core.api.errors import API_PATH_PREFIX, error_body


class CommonMiddlewareWithoutApiRedirects(CommonMiddleware):
    """Django's CommonMiddleware, except that API paths are never redirected to add a slash: clients
    re-send a redirected POST as a GET, so a memory sent to /api/v1/memories would be answered with
    the list and silently not stored. They get a 404 that names the right path instead."""

    def should_redirect_with_slash(self, request):
        if request.path_info.startswith(API_PATH_PREFIX):
            return False
        return super().should_redirect_with_slash(request)


def raw_path(request) -> str:
    """The path as the client sent it, before the server decoded %2F into '/' (ASGI's raw_path, or what WSGI
    servers keep in RAW_URI or REQUEST_URI); '' when the server keeps none."""
    scope = getattr(request, "scope", None)
    if scope is not None:
        return (scope.get("raw_path") or b"").decode("latin-1")
    return (request.META.get("RAW_URI") or request.META.get("REQUEST_URI") or "").split("?", 1)[0]


class EncodedSlashIsNotFoundMiddleware:
    """An API path with an encoded slash (%2F) is a 404: no Engram id contains '/', and servers decode %2F before
    Django routes, so DELETE /api/v1/reasoning/sessions/a%2Frestore/ reached the restore endpoint and answered an
    undocumented 405 instead of saying that there is no such session."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith(API_PATH_PREFIX) and "%2f" in raw_path(request).lower():
            message = (f"There is no API endpoint at {raw_path(request)}: ids never contain '/', so a path with an "
                       "encoded slash (%2F) names nothing. The endpoints are listed at /api/docs/.")
            return JsonResponse(error_body("not_found", message), status=404)
        return self.get_response(request)
