"""Token scopes for REST: safe methods need `read`, writes need `write`. Sessions have all scopes."""
from rest_framework import permissions

from apps.accounts.models import ApiToken


class TokenScopePermission(permissions.BasePermission):
    message = "This token lacks the scope this request needs (read for reads, write for writes)."

    def has_permission(self, request, view):
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        needed = "read" if request.method in permissions.SAFE_METHODS else "write"
        if getattr(view, "read_only_post", False) and request.method == "POST":
            needed = "read"
        return token.has_scope(needed)
