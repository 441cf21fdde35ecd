"""Reads for users and API tokens."""
from __future__ import annotations

from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.accounts.models import ApiToken, User
from apps.accounts.services import token_digest

# last_used_at is written at most once a minute per token, so busy agents do not write on every call.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_list(*, actor: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=actor).order_by("-created_at")


def token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token for a raw bearer string, or None (unknown, revoked or expired)."""
    if not raw:
        return None
    now = timezone.now()
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(raw), revoked_at__isnull=True, user__is_active=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .first()
    )
    if token is None:
        return None
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def user_resolve(*, identifier: str) -> User | None:
    """A user by username or numeric id."""
    identifier = (identifier or "").strip()
    if not identifier:
        return None
    query = Q(username=identifier)
    if identifier.isdigit():
        query |= Q(pk=int(identifier))
    return User.objects.filter(query).first()
