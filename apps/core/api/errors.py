"""One error envelope for the REST API: {"error": {"code", "message", "details"}}."""
import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import OperationalError
from django.http import Http404, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core.exceptions import (
    DomainError, InvalidInput, NotFound, PermissionDenied, RateLimited, Unavailable, database_unavailable,
    is_vector_mismatch, vectors_switched,
)

logger = logging.getLogger(__name__)

DOMAIN_STATUS = {
    NotFound: status.HTTP_404_NOT_FOUND,
    PermissionDenied: status.HTTP_403_FORBIDDEN,
    InvalidInput: status.HTTP_400_BAD_REQUEST,
    RateLimited: status.HTTP_429_TOO_MANY_REQUESTS,
    Unavailable: status.HTTP_503_SERVICE_UNAVAILABLE,
}


API_PATH_PREFIX = "/api/"
# Headers DRF sets on an error response that clients rely on (how to authenticate, when to retry).
KEPT_HEADERS = ("WWW-Authenticate", "Retry-After")


def error_body(code: str, message: str, details=None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_response(code: str, message: str, details=None, *, http_status: int, headers=None) -> Response:
    return Response(error_body(code, message, details), status=http_status, headers=headers)


def _first_message(detail, path: str = "") -> str:
    """The first error, prefixed with where it is: "date_range.start: ..." or "memories[2].content: ..."
    (a list of items reports the first item that has errors)."""
    if isinstance(detail, dict):
        for field, value in detail.items():
            if value:
                if field == "non_field_errors":
                    where = path
                elif str(field).isdigit():  # a ListField's items are keyed by their index
                    where = f"{path}[{field}]"
                else:
                    where = f"{path}.{field}" if path else str(field)
                return _first_message(value, where)
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            if value:
                return _first_message(value, f"{path}[{index}]" if isinstance(value, (dict, list)) else path)
    return f"{path}: {detail}" if path else str(detail)


def exception_handler(exc, context):
    if isinstance(exc, OperationalError):
        logger.error("REST call failed on the database: %s", exc, exc_info=exc)
        exc = database_unavailable()
    elif is_vector_mismatch(exc):
        logger.error("REST call compared vectors of two models: %s", exc)
        exc = vectors_switched()
    if isinstance(exc, DomainError):
        http_status = next((s for cls, s in DOMAIN_STATUS.items() if isinstance(exc, cls)), 409)
        retry_after = exc.extra.get("retry_after")  # a rate limit's, or the database's
        headers = {"Retry-After": str(retry_after)} if retry_after else None
        return error_response(exc.code, exc.message, exc.extra, http_status=http_status, headers=headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    headers = {name: response[name] for name in KEPT_HEADERS if name in response}
    if isinstance(exc, exceptions.ValidationError):
        return error_response("invalid_input", _first_message(exc.detail), exc.detail,
                              http_status=response.status_code, headers=headers)
    code = getattr(exc, "default_code", "error")
    detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
    return error_response(code, str(detail), None, http_status=response.status_code, headers=headers)


def not_found_view(request, exception):
    """Django's 404 handler: the envelope under /api/, the app's page (templates/404.html) elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        message = f"There is no API endpoint at {request.path}. The endpoints are listed at /api/docs/."
        if not request.path.endswith("/") and _resolves(f"{request.path_info}/"):
            message = f"There is no API endpoint at {request.path}: API paths end with a slash ({request.path}/)."
        return JsonResponse(error_body("not_found", message), status=404)
    return defaults.page_not_found(request, exception)


def _resolves(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True


def bad_request_view(request, exception):
    """Django's 400 handler (a malformed or suspicious request): the envelope under /api/, the page elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        return JsonResponse(error_body("bad_request", "The request could not be understood: check its headers "
                                                      "and body."), status=400)
    return defaults.bad_request(request, exception)


def permission_denied_view(request, exception):
    """Django's 403 handler: the envelope under /api/, the page elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        return JsonResponse(error_body("permission_denied", "You may not do this."), status=403)
    return defaults.permission_denied(request, exception)


def server_error_view(request):
    """Django's 500 handler: the envelope under /api/, the page elsewhere. The page (templates/500.html) is rendered
    without a request context, so it needs neither the database nor the session that may be what failed."""
    if request.path.startswith(API_PATH_PREFIX):
        message = "Internal server error. It has been logged; please try again or report it."
        return JsonResponse(error_body("server_error", message), status=500)
    return defaults.server_error(request)
