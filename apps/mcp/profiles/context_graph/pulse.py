"""Every Context Graph answer, errors too, carries the caller's pulse: {entropy, coherence, suggested} of the
session the call named (else their latest), from its cached state in one query."""
from __future__ import annotations

import json
from typing import Any

from django.db import DatabaseError
from mcp_types import CallToolResult, TextContent

from apps.cognition.services.sessions import pulse_get
from apps.cognition.utl import Pulse
from apps.core.exceptions import PermissionDenied
from apps.core.threads import run_sync
from apps.mcp.auth import current_caller


async def with_pulse(result: CallToolResult, arguments: dict[str, Any]) -> CallToolResult:
    try:
        user = current_caller().user
    except PermissionDenied:  # no valid token: no session to speak of
        pulse = Pulse(0.0, 0.0, None)
    else:
        try:
            pulse = await run_sync(pulse_get)(actor=user, session_id=arguments.get("session_id"))
        except DatabaseError:  # the answer (a storage error, most likely) still goes out, without a pulse to read
            pulse = None
    state = pulse.as_dict() if pulse else {"entropy": None, "coherence": None, "suggested": None}
    payload = {**(result.structured_content or {}), "pulse": state}
    return result.model_copy(update={
        "structured_content": payload,
        "content": [TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
    })
