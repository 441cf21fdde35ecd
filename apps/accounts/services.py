"""Writes for users and API tokens."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import ApiToken, User, token_digest
from apps.accounts.selectors import token_get_live
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied

TOKEN_PREFIX = "eng_"
VALID_SCOPES = {choice.value for choice in ApiToken.Scope}
# last_used_at is written at most once a minute per token, so busy agents do not write on every call.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def parse_scopes(value) -> list[str]:
    """Accept "read,write" or ["read", "write"]; refuse unknown scopes by name."""
    items = value.split(",") if isinstance(value, str) else list(value or [])
    scopes = [s.strip().lower() for s in items if str(s).strip()]
    unknown = sorted(set(scopes) - VALID_SCOPES)
    if unknown:
        raise InvalidInput(f"Unknown scope {', '.join(unknown)}: use read, write or admin.", field="scopes")
    if not scopes:
        raise InvalidInput("A token needs at least one scope: read, write or admin.", field="scopes")
    return sorted(set(scopes), key=["read", "write", "admin"].index)


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    raw: str


def scopes_grantable_by(token: ApiToken) -> set[str]:
    """What a token may hand on: its own scopes, and every scope when it holds admin."""
    return set(VALID_SCOPES) if token.has_scope(ApiToken.Scope.ADMIN) else set(token.scopes)


@transaction.atomic
def token_create(*, actor: User, name: str, scopes, expires_at: datetime | None = None,
                 issuer: ApiToken | None = None) -> IssuedToken:
    """``issuer`` is the token that authenticated the request, when one did (REST, MCP): a token
    cannot mint a token stronger than itself (a leaked write token never yields an admin one)."""
    name = (name or "").strip()
    if not name:
        raise InvalidInput("Give the token a name, so that you can recognise it later.", field="name")
    if len(name) > 100:
        raise InvalidInput("A token name has at most 100 characters.", field="name")
    if "\x00" in name:
        raise InvalidInput("A token name cannot contain NUL bytes.", field="name")
    scopes = parse_scopes(scopes)
    if "admin" in scopes and not actor.is_staff:
        raise InvalidInput("Only staff users may hold the admin scope.", field="scopes")
    if issuer is not None:
        beyond = [scope for scope in scopes if scope not in scopes_grantable_by(issuer)]
        if beyond:
            raise PermissionDenied(
                f"This token cannot grant the {', '.join(beyond)} scope: a token may only create tokens with "
                f"scopes it holds ({', '.join(issuer.scopes)}). Use a stronger token or the dashboard.",
                extra={"field": "scopes"},
            )
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInput("The expiry must be in the future.", field="expires_at")
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=actor, name=name, prefix=raw[: len(TOKEN_PREFIX) + 6], digest=token_digest(raw),
        scopes=scopes, expires_at=expires_at,
    )
    return IssuedToken(token=token, raw=raw)


@transaction.atomic
def token_revoke(*, actor: User, token_id: int) -> ApiToken:
    token = ApiToken.objects.filter(pk=token_id, user=actor).first()
    if token is None:
        raise NotFound("Token not found.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token for a raw bearer string, with its user, or None (unknown, revoked or expired); records
    its use. Every REST, MCP and websocket authentication runs this."""
    token = token_get_live(raw=raw)
    if token is not None:
        token_record_use(token=token)
    return token


def token_record_use(*, token: ApiToken) -> None:
    """Set the token's last_used_at to now, in one UPDATE, unless it was set less than LAST_USED_RESOLUTION ago."""
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at <= LAST_USED_RESOLUTION:
        return
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now
