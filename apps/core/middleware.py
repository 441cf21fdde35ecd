from django.middleware.common import CommonMiddleware

from apps.core.api.errors import API_PATH_PREFIX


class CommonMiddlewareWithoutApiRedirects(CommonMiddleware):
    """Django's CommonMiddleware, except that API paths are never redirected to add a slash: clients
    re-send a redirected POST as a GET, so a memory sent to /api/v1/memories would be answered with
    the list and silently not stored. They get a 404 that names the right path instead."""

    def should_redirect_with_slash(self, request):
        if request.path_info.startswith(API_PATH_PREFIX):
            return False
        return super().should_redirect_with_slash(request)
