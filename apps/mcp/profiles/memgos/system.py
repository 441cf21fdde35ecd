"""MCP adapters for MemGOS's user and system tools: get_user_info, session_info, health_check and list_tools.

They report real figures: counts from the database, the MCP client's recorded calls (``McpClientSession``, which
``apps.mcp.server`` updates on every tool call of every profile), the same component checks as GET /healthz, and
the tools of the profile serving the call.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

from django.utils import timezone as django_timezone

from apps.accounts.models import User, scopes_allow
from apps.chat import llm
from apps.core import health
from apps.core.exceptions import NotFound
from apps.core.threads import run_sync
from apps.cubes.access import cube_ids_readable
from apps.mcp.auth import READ, WRITE, current_caller
from apps.core.timestamps import iso_or_none, iso_timestamp
from apps.mcp.models import McpClientSession
from apps.mcp.profiles.memgos.inputs import GetUserInfoInput, HealthCheckInput, ListToolsInput, SessionInfoInput
from apps.mcp.schema import advertised_schema
from apps.mcp.server import SERVER_VERSION, client_key, current_profile, tool_context
from apps.memories.selectors import memory_count_owned

# A client that made no call for this long is reported as no longer active.
SESSION_IDLE = timedelta(minutes=30)


def _process_started_at() -> float:
    """When this server process started (Linux: from /proc; elsewhere: when this module was imported)."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/stat") as system:
            # Field 22 (after the parenthesised command name) is the start time in clock ticks after boot.
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
            boot = next(int(line.split()[1]) for line in system if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()


PROCESS_STARTED_AT = _process_started_at()


def _user_counts(user: User) -> tuple[int, int]:
    """The cubes the user may read and the live memories they own (two COUNT queries)."""
    return cube_ids_readable(actor=user).count(), memory_count_owned(actor=user)


async def get_user_info(actor: User, params: GetUserInfoInput) -> dict[str, Any]:
    caller = current_caller()
    cube_count, memory_count = await run_sync(_user_counts)(actor)
    if actor.pk == caller.user.pk:
        # What this caller may do here is what the token's scopes allow.
        permissions = {"can_read": scopes_allow(caller.scopes, READ), "can_write": scopes_allow(caller.scopes, WRITE),
                       "can_admin": caller.may_act_for_others()}
    else:  # a staff token asking about somebody else: what that user's own account allows
        permissions = {"can_read": actor.is_active, "can_write": actor.is_active,
                       "can_admin": actor.is_active and actor.is_staff}
    return {"user": {
        "user_id": str(actor.pk), "user_name": actor.get_username(), "role": "admin" if actor.is_staff else "user",
        # Engram's accounts keep no modification time; the last login is the latest change it records.
        "created_at": iso_or_none(actor.date_joined), "updated_at": iso_or_none(actor.last_login or actor.date_joined),
        "is_active": actor.is_active, "permissions": permissions, "cube_count": cube_count,
        "memory_count": memory_count,
    }}


def _transport() -> tuple[bool, str | None]:
    """Whether this call came over HTTP (MemGOS's "API mode"), and the endpoint's URL when it did."""
    ctx = tool_context()
    request = ctx.request_context.request if ctx is not None else None
    url = getattr(request, "url", None)
    return (ctx is not None and ctx.headers is not None), (str(url) if url is not None else None)


async def session_info(actor: User, params: SessionInfoInput) -> dict[str, Any]:
    """This MCP client's session (``client_key``), or another session of the same user by its id. The call under
    way counts when it is the current session's: it is recorded as soon as it returns."""
    current = client_key()
    key = params.session_id if params.session_id is not None else current
    record = await run_sync(McpClientSession.objects.filter(key=key, user=actor).first)()
    now = django_timezone.now()
    if record is None:
        if key != current:
            raise NotFound(f"Session '{key}' not found.", extra={"field": "session_id"})
        record = McpClientSession(key=key, user=actor, created_at=now, last_activity=now)
    is_current = key == current
    api_mode, api_url = _transport()
    return {"session": {
        "session_id": key, "user_id": str(actor.pk), "created_at": iso_or_none(record.created_at),
        "last_activity": iso_or_none(now if is_current else record.last_activity),
        "is_active": is_current or now - record.last_activity < SESSION_IDLE,
        "api_mode": api_mode, "api_url": api_url,
        "tool_calls_count": record.tool_calls_count + (1 if is_current else 0),
        "active_cubes": list(record.active_cubes),
    }}


def _checks() -> tuple[dict[str, dict], int]:
    """GET /healthz's checks plus the chat backend, and the database check's round trip in milliseconds."""
    started = time.perf_counter()
    database = health.check_database()
    database_ms = round((time.perf_counter() - started) * 1000)
    others = {name: check() for name, check in health.all_checks().items() if name != "database"}
    return {"database": database, **others, "llm": llm.status(timeout=health.TIMEOUT_SECONDS)}, database_ms


def _state(*names: str, checks: dict[str, dict]) -> str:
    return "operational" if all(checks[name]["ok"] for name in names) else "degraded"


async def health_check(actor: User, params: HealthCheckInput) -> dict[str, Any]:
    checks, database_ms = await run_sync(_checks)()
    healthy = all(check["ok"] for check in checks.values())
    now = datetime.now(timezone.utc)
    _, api_url = _transport()
    return {"health": {
        "status": "healthy" if healthy else ("unhealthy" if not checks["database"]["ok"] else "degraded"),
        "timestamp": iso_timestamp(now),
        # MemGOS's MCP server reaches its API; Engram's reaches its database, directly.
        "api_connection": {"status": "connected" if checks["database"]["ok"] else "disconnected", "url": api_url,
                           "response_time_ms": database_ms},
        "services": {
            "memory_system": _state("database", "pgvector", "embedding_model", checks=checks),
            "chat_system": _state("database", "embedding_model", "llm", checks=checks),
            "user_system": _state("database", checks=checks),
        },
        "checks": checks,
        "version": SERVER_VERSION,
        "uptime_seconds": max(0, round(now.timestamp() - PROCESS_STARTED_AT)),
    }}


async def list_tools(actor: User, params: ListToolsInput) -> dict[str, Any]:
    registry = current_profile().tools
    listed = [spec for spec in registry if params.category is None or spec.category == params.category]
    tools = [{"name": spec.name, "category": spec.category, "description": spec.description,
              "input_schema": advertised_schema(spec.input_model)} for spec in listed]
    return {"tools": tools, "total_tools": len(tools), "categories": dict(Counter(spec.category for spec in registry))}
