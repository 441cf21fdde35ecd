"""Who is calling an MCP tool, and as whom the tool may act.

Over HTTP the SDK's bearer middleware asks ``EngramTokenVerifier`` about the token and keeps the
answer in its auth context for the request; stdio authenticates once at start and enters the same
context with ``authenticated``. Tools read it with ``current_caller``, so both transports share
one rule set: the token's scopes gate reads and writes, and the user argument (ThoughtMCP's ``userId``,
MemGOS's ``user_id``) may only name the token's own user, unless a staff user's token holds the admin scope.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import OperationalError
from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, TokenVerifier
from pydantic import ConfigDict, Field
from starlette.authentication import AuthenticationError

from apps.accounts.models import ApiToken, User, scopes_allow
from apps.accounts.selectors import user_resolve
from apps.accounts.services import token_authenticate
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied, Unavailable, database_unavailable
from apps.core.threads import run_sync

READ, WRITE, ADMIN = (scope.value for scope in (ApiToken.Scope.READ, ApiToken.Scope.WRITE, ApiToken.Scope.ADMIN))


@dataclass(frozen=True)
class Caller:
    user: User
    scopes: frozenset[str]
    token_id: int

    def require_scope(self, scope: str) -> None:
        if not scopes_allow(self.scopes, scope):
            raise PermissionDenied(
                f"This token lacks the {scope} scope this tool needs.",
                extra={"suggestion": f"Use a token with the {scope} scope (create one in the dashboard or with "
                                     f"`manage.py create_token --scopes read,write`)."},
            )

    def may_act_for_others(self) -> bool:
        return self.user.is_staff and ADMIN in self.scopes

    def is_named_by(self, identifier: str) -> bool:
        return identifier in {self.user.get_username(), str(self.user.pk)}


class EngramAccessToken(AccessToken):
    """The SDK's access token, carrying the Engram caller it was verified for."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    caller: Caller = Field(exclude=True)


def access_token_for(token: ApiToken) -> EngramAccessToken:
    return EngramAccessToken(
        token=token.prefix,
        client_id=f"engram-token-{token.pk}",
        subject=str(token.user_id),
        scopes=list(token.scopes),
        expires_at=int(token.expires_at.timestamp()) if token.expires_at else None,
        caller=Caller(user=token.user, scopes=frozenset(token.scopes), token_id=token.pk),
    )


def authenticate_token(raw: str) -> EngramAccessToken | None:
    token = token_authenticate(raw=raw)
    return access_token_for(token) if token is not None else None


class EngramTokenVerifier(TokenVerifier):
    """Engram API tokens (``Authorization: Bearer eng_...``) for the SDK's bearer middleware."""

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            return await run_sync(authenticate_token)(token)
        except OperationalError as exc:  # the token cannot be checked: the caller's fault neither way
            raise TokenCheckUnavailable(database_unavailable()) from exc


class TokenCheckUnavailable(AuthenticationError):
    """The bearer token could not be checked because the database did not answer (asgi.py answers 503)."""

    def __init__(self, error: Unavailable):
        super().__init__(error.message)
        self.error = error


@contextmanager
def authenticated(access_token: EngramAccessToken) -> Iterator[None]:
    """Run the enclosed MCP serving as this token's caller (stdio, in-process clients)."""
    reset = auth_context_var.set(AuthenticatedUser(access_token))
    try:
        yield
    finally:
        auth_context_var.reset(reset)


def current_caller() -> Caller:
    access_token = get_access_token()
    if not isinstance(access_token, EngramAccessToken):
        raise PermissionDenied("Authentication required: send an Engram API token as 'Authorization: Bearer <token>'.")
    return access_token.caller


async def acting_user(caller: Caller, user_id: str) -> User:
    """The user a tool acts for, from its user argument (a username or id). Arguments never widen access: only a
    staff token with the admin scope may name somebody else. Errors name the field ``user_id``; each profile's
    alias table renames it. The messages keep the word "userId" that both seeds' clients read."""
    user_id = user_id.strip()
    if not user_id:
        raise InvalidInput("Missing required parameter: userId", field="user_id")
    if caller.is_named_by(user_id):
        return caller.user
    if not caller.may_act_for_others():
        raise PermissionDenied(
            "userId does not match the authenticated user",
            extra={"field": "user_id", "suggestion": f"Use your own user id: {caller.user.get_username()!r} "
                                                     f"(or {caller.user.pk})."},
        )
    user = await run_sync(user_resolve)(identifier=user_id)
    if user is None or not user.is_active:
        raise NotFound(f"User {user_id!r} not found", extra={"field": "user_id"})
    return user
