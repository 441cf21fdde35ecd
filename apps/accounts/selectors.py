"""Reads for users and API tokens."""
from __future__ import annotations

import functools

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.accounts.models import ApiToken, User, token_digest


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


def token_get_live(*, raw: str) -> ApiToken | None:
    """The live token for a raw bearer string, with its user, or None (unknown, revoked or expired).

    One raw statement loaded with the documented ``Model.from_db``: every REST, MCP and websocket call runs
    this, and building it through the ORM would take longer than PostgreSQL takes to answer it
    (docs/benchmarks.md#retrieve-and-search-latency)."""
    if not raw:
        return None
    sql, token_names, user_names = _token_statement()
    with connection.cursor() as cursor:
        cursor.execute(sql, [token_digest(raw), timezone.now()])
        row = cursor.fetchone()
    if row is None:
        return None
    token = ApiToken.from_db(connection.alias, token_names, row[:len(token_names)])
    token.user = User.from_db(connection.alias, user_names, row[len(token_names):])
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
