"""Reads for users and API tokens."""
from __future__ import annotations

import functools
from datetime import timedelta

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.accounts.models import ApiToken, User
from apps.accounts.services import token_digest

# last_used_at is written at most once a minute per token, so busy agents do not write on every call.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_list(*, actor: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=actor).order_by("-created_at")


@functools.cache
def _token_statement() -> tuple[str, list[str], list[str]]:
    """The statement that finds a live token and its user, and the attribute names of their columns."""
    token_fields, user_fields = ApiToken._meta.concrete_fields, User._meta.concrete_fields
    columns = [f't."{f.column}"' for f in token_fields] + [f'u."{f.column}"' for f in user_fields]
    sql = (f"SELECT {', '.join(columns)} FROM {ApiToken._meta.db_table} t JOIN {User._meta.db_table} u "
           "ON u.id = t.user_id WHERE t.digest = %s AND t.revoked_at IS NULL AND u.is_active "
           "AND (t.expires_at IS NULL OR t.expires_at > %s)")
    return sql, [f.attname for f in token_fields], [f.attname for f in user_fields]


def token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token for a raw bearer string, or None (unknown, revoked or expired), with its user.

    One raw statement: every REST and MCP call runs this, and building it through the ORM took twice as
    long as PostgreSQL took to answer it (docs/benchmarks.md)."""
    if not raw:
        return None
    now = timezone.now()
    sql, token_names, user_names = _token_statement()
    with connection.cursor() as cursor:
        cursor.execute(sql, [token_digest(raw), now])
        row = cursor.fetchone()
    if row is None:
        return None
    token = ApiToken.from_db(connection.alias, token_names, row[:len(token_names)])
    token.user = User.from_db(connection.alias, user_names, row[len(token_names):])
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
