"""Context Graph's status group: get_graph_manifest, get_system_instructions, get_health, get_memetic_status,
epistemic_action, temporary_scratchpad, get_node_lineage and get_system_logs, and the profile's resources
(visualize:// maps and the utl://current_session/pulse).

Input models are the seed's schemas (snake_case names); get_system_instructions, get_node_lineage and
get_system_logs, which the seed only names, take the arguments issue 19 gives them. Output schemas are the seed's
where it has one, and Engram's own for the three tools it lacks. Each adapter calls one service or selector of
apps/cognition (or the health checks of apps/core/health.py) and shapes its answer. The output schemas are in
status_outputs.py.
"""
from __future__ import annotations

import json
import uuid
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import AfterValidator, Field

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import (
    LINEAGE_DEPTH, LOG_DEFAULT_SINCE, LOG_LIMIT, SCRATCHPAD_AUTO_COMMIT, SCRATCHPAD_AUTO_COMMIT_DEFAULT,
    SCRATCHPAD_CONTENT_CHARS, SCRATCHPAD_TAGS, SCRATCHPAD_TTL_MINUTES, DREAM_MIN_NODES, Privacy,
)
from apps.cognition.mermaid import flowchart
from apps.cognition.models import CurationTask, Event, ScratchpadItem
from apps.cognition.selectors.lineage import (
    CHANGE_TYPES, LOG_TYPES, Lineage, LogEntry, SystemLog, node_lineage, system_log,
)
from apps.cognition.selectors.status import (
    GraphMap, GraphState, graph_state_get, memetic_status_get, node_neighbourhood_map, pulse_and_stage, pulse_state_get,
    topic_map,
)
from apps.cognition.services.epistemic import epistemic_question
from apps.cognition.services.scratchpad import scratchpad_clear, scratchpad_retrieve, scratchpad_store
from apps.cognition.services.sessions import session_get
from apps.core import health
from apps.core.threads import run_sync
from apps.core.timestamps import iso_timestamp
from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import ResourceSpec, ToolSpec
from apps.mcp.profiles.context_graph import guide
from apps.mcp.profiles.context_graph.status_outputs import (
    EPISTEMIC_OUTPUT, INSTRUCTIONS_OUTPUT, LINEAGE_OUTPUT, LOGS_OUTPUT, MANIFEST_OUTPUT, MEMETIC_OUTPUT, SCRATCHPAD_OUTPUT,
)
from apps.mcp.schema import SnakeCaseSeedModel
from apps.mcp.server import current_profile

UUID_FORMAT = {"format": "uuid"}


def _uuid_text(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError:
        raise ValueError("must be a UUID, e.g. 0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a") from None
    return value


UuidText = Annotated[str, AfterValidator(_uuid_text)]


# Input models

class NoArguments(SnakeCaseSeedModel):
    """get_graph_manifest, get_system_instructions and get_health take nothing."""


class MemeticStatusInput(SnakeCaseSeedModel):
    session_id: UuidText | None = Field(None, json_schema_extra=UUID_FORMAT)


class EpistemicActionInput(SnakeCaseSeedModel):
    session_id: UuidText | None = Field(None, json_schema_extra=UUID_FORMAT)
    force: bool | None = Field(False, description="Generate even if coherence is sufficient")


class ScratchpadInput(SnakeCaseSeedModel):
    # Required, as the seed says, though it also gives a default.
    action: Literal["store", "retrieve", "clear"] = Field(json_schema_extra={"default": "store"})
    content: str | None = Field(None, max_length=SCRATCHPAD_CONTENT_CHARS,
                                description="Thought/note to store (required for 'store' action)")
    session_id: UuidText = Field(json_schema_extra=UUID_FORMAT,
                                 description="REQUIRED: Isolates scratchpad per terminal/session")
    agent_id: str = Field(description="REQUIRED: Isolates scratchpad per agent. Prevents Agent A reading Agent B's "
                                      "working thoughts.")
    privacy: Literal[tuple(Privacy.values)] | None = Field(
        Privacy.PRIVATE.value, description="PRIVACY FLAG: private=only this agent, team=agents in same session, "
                                           "shared=all agents with graph access")
    tags: list[str] | None = Field(None, max_length=SCRATCHPAD_TAGS, description="Optional categorization")
    auto_commit_threshold: float | None = Field(
        SCRATCHPAD_AUTO_COMMIT_DEFAULT, **SCRATCHPAD_AUTO_COMMIT.schema(),
        description="If importance > threshold during Dream, auto-commit to long-term graph")


class NodeLineageInput(SnakeCaseSeedModel):
    node_id: UuidText = Field(json_schema_extra=UUID_FORMAT, description="The node whose changes to trace")
    depth: int | None = Field(LINEAGE_DEPTH.default, **LINEAGE_DEPTH.schema(),
                              description="How many changes back to trace, newest first")
    include_content_diffs: bool | None = Field(False, description="Include the content before and after each change "
                                                                  "that edited it")


class SystemLogsInput(SnakeCaseSeedModel):
    log_type: Literal[tuple(LOG_TYPES)] | None = Field("all", description="Which actions to list")
    node_id: UuidText | None = Field(None, json_schema_extra=UUID_FORMAT,
                                     description="Only the entries about this node")
    since: str | None = Field(LOG_DEFAULT_SINCE, description="From when: an ISO 8601 date-time "
                                                             "(2026-01-31T12:00:00Z) or a span back from now (-30m, "
                                                             "-24h, -7d, -2w)")
    limit: int | None = Field(LOG_LIMIT.default, **LOG_LIMIT.schema(), description="Most entries, newest first")


# Adapters

def _available_tools() -> frozenset[str]:
    profile = current_profile()
    return frozenset(spec.name for spec in profile.tools) if profile else frozenset()


def _fraction(value: float) -> float:
    return round(float(value), 4)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def state_summary(state: GraphState) -> str:
    graph = (f"Your graph: {_count(state.nodes, 'live node')} and {_count(state.edges, 'link')} across "
             f"{_count(state.cubes, 'cube')}. Curation inbox: {_count(state.open_tasks, 'open task')} "
             f"({state.urgent_tasks} high priority).")
    session = state.session
    if session is None:
        return graph + " No session yet: the first query or store starts one."
    pulse, stage = pulse_and_stage(session, urgent_task=state.urgent_tasks > 0)
    return (graph + f" Latest session {session.pk}: {session.interactions} interactions "
            f"({stage.value}), entropy {session.entropy:.2f}, coherence "
            f"{session.coherence:.2f}, learning score {session.learning_score:.2f}; the pulse suggests "
            f"{pulse.suggested or 'nothing'}.")


async def get_graph_manifest(actor: User, params: NoArguments) -> dict[str, Any]:
    state = await run_sync(graph_state_get)(actor=actor)
    available = _available_tools()
    return {"prompt_fragment": guide.prompt_fragment(available), "layer_guidance": guide.layer_guidance(available),
            "current_state_summary": state_summary(state), "troubleshooting": guide.troubleshooting(available)}


async def get_system_instructions(actor: User, params: NoArguments) -> dict[str, Any]:
    session = await run_sync(session_get)(actor=actor)
    interactions = session.interactions if session else 0
    available = _available_tools()
    return {"system_prompt_fragment": guide.system_prompt_fragment(available, stage=utl.stage_of(interactions),
                                                                   interactions=interactions),
            "critical_behaviors": guide.critical_behaviors(available), "antipatterns": guide.antipatterns(available)}


# Without these Engram cannot store or find a memory; without the others it works, with less.
ESSENTIAL_COMPONENTS = ("database", "pgvector")


def _health_checks() -> dict[str, dict]:
    return {name: check() for name, check in health.all_checks().items()}


async def get_health(actor: User, params: NoArguments) -> dict[str, Any]:
    checks = await run_sync(_health_checks)()
    failed = [name for name, check in checks.items() if not check["ok"]]
    if not failed:
        status = "healthy"
    else:
        status = "unhealthy" if set(failed) & set(ESSENTIAL_COMPONENTS) else "degraded"
    components = {name: {"status": "ok" if check["ok"] else "failing",
                         **{key: value for key, value in check.items() if key != "ok"}}
                  for name, check in checks.items()}
    return {"status": status, "failed": failed, "components": components,
            "checked_at": iso_timestamp(timezone.now())}


def task_dict(task: CurationTask) -> dict[str, Any]:
    return {"id": str(task.pk), "task_type": task.task_type, "target_nodes": [str(node) for node in task.node_ids],
            "reason": task.reason, "suggested_tool": task.suggested_tool, "priority": task.priority,
            "created_at": iso_timestamp(task.created_at)}


DREAM_BASIS = (f"dream_available is true when you have at least {DREAM_MIN_NODES} live nodes in cubes you can write "
               "(a dream replays and links them) and no dream of yours is queued or running (one at a time).")


async def get_memetic_status(actor: User, params: MemeticStatusInput) -> dict[str, Any]:
    status = await run_sync(memetic_status_get)(actor=actor, session_id=params.session_id)
    session = status.session
    return {
        "coherence_score": _fraction(status.pulse.coherence), "entropy_level": _fraction(status.pulse.entropy),
        "top_active_concepts": status.concepts, "suggested_action": status.suggested_action,
        "dream_available": status.dream_available, "curation_tasks": [task_dict(task) for task in status.tasks],
        "open_tasks_total": status.open_tasks, "session_id": str(session.pk) if session else None,
        "lifecycle_stage": status.stage.value, "interactions": session.interactions if session else 0,
        "dream_basis": DREAM_BASIS,
    }


async def epistemic_action(actor: User, params: EpistemicActionInput) -> dict[str, Any]:
    asked = await run_sync(epistemic_question)(actor=actor, session_id=params.session_id, force=bool(params.force))
    data: dict[str, Any] = {
        "target_nodes": asked.target_nodes, "expected_entropy_reduction": asked.expected_entropy_reduction,
        "current_coherence": asked.current_coherence, "reason": asked.reason,
        "session_id": str(asked.session.pk) if asked.session else None,
    }
    if asked.question is not None:
        data.update(question=asked.question, action_type=asked.action_type)
    if asked.task is not None:
        data["task_id"] = str(asked.task.pk)
    return data


def scratch_item_dict(item: ScratchpadItem) -> dict[str, Any]:
    return {"id": str(item.pk), "content": item.content, "delta_s": _fraction(item.delta_s),
            "created_at": iso_timestamp(item.created_at), "tags": list(item.tags), "agent_id": item.agent_id,
            "privacy": item.privacy, "expires_at": iso_timestamp(item.expires_at)}


async def temporary_scratchpad(actor: User, params: ScratchpadInput) -> dict[str, Any]:
    if params.action == "store":
        pad = await run_sync(scratchpad_store)(
            actor=actor, session_id=params.session_id, agent_id=params.agent_id, content=params.content,
            privacy=params.privacy or Privacy.PRIVATE, tags=params.tags,
            auto_commit_threshold=params.auto_commit_threshold)
    else:
        read_or_clear = scratchpad_retrieve if params.action == "retrieve" else scratchpad_clear
        pad = await run_sync(read_or_clear)(actor=actor, session_id=params.session_id, agent_id=params.agent_id)
    data: dict[str, Any] = {"action": params.action, "scratchpad_id": pad.pad_id, "items_count": pad.items_count,
                            "items": [scratch_item_dict(item) for item in pad.items],
                            "ttl_minutes": SCRATCHPAD_TTL_MINUTES}
    if pad.stored is not None:
        data["stored_id"] = str(pad.stored.pk)
    if params.action == "clear":
        data["cleared"] = pad.cleared
    return data


def actor_dict(event: Event) -> dict[str, str]:
    """The agent that made the change (its agent_id), else the user, else the system. A label that is only the
    user's name again (curation labels its Events so) is the user."""
    username = event.actor.username if event.actor is not None else None
    if event.actor_label and event.actor_label != username:
        return {"type": "agent", "id": event.actor_label}
    if username is not None:
        return {"type": "user", "id": username}
    return {"type": "system", "id": "engram"}


def _describe(event: Event) -> str:
    detail, action = event.detail or {}, event.action
    if event.reason:
        return event.reason
    fields = sorted((detail.get("fields") or {}))
    links = len(detail.get("links") or [])
    return {
        Event.Action.CREATED: f"Created, linked to {links} nodes.",
        Event.Action.UPDATED: f"Changed {', '.join(fields) or 'nothing'}" + (f"; relinked to {links} nodes." if links
                                                                            else "."),
        Event.Action.REEMBEDDED: f"Embedded again; relinked to {links} nodes.",
        Event.Action.LINKED: f"Linked to {links} node{'s' if links != 1 else ''}.",
        Event.Action.UNLINKED: "A link was removed.",
        Event.Action.BOOSTED: "Importance raised.",
        Event.Action.DELETED: "Deleted (kept, hidden: it can be restored).",
        Event.Action.PURGED: "Deleted for good.",
        Event.Action.RESTORED: "Restored.",
    }.get(action, f"{Event.Action(action).label}.")


def _diffs(event: Event, *, with_content: bool) -> dict[str, dict]:
    fields = (event.detail or {}).get("fields") or {}
    return {name: {"before": change[0], "after": change[1]} for name, change in fields.items()
            if isinstance(change, list) and len(change) == 2 and (with_content or name != "content")}


def lineage_dict(lineage: Lineage, *, with_content: bool) -> dict[str, Any]:
    return {
        "node_id": str(lineage.memory.pk), "current_content": lineage.memory.content,
        "deleted": lineage.memory.deleted_at is not None,
        "lineage": [{"timestamp": iso_timestamp(event.created_at), "change_type": CHANGE_TYPES[event.action],
                     "action": event.action, "actor": actor_dict(event), "description": _describe(event),
                     "diffs": _diffs(event, with_content=with_content), "reversal_hash": event.reversal_hash or None}
                    for event in lineage.events],
        "merged_from": lineage.merged_from, "forked_to": lineage.forked_to, "total_changes": lineage.total,
    }


async def get_node_lineage(actor: User, params: NodeLineageInput) -> dict[str, Any]:
    lineage = await run_sync(node_lineage)(actor=actor, node_id=params.node_id, depth=params.depth)
    return lineage_dict(lineage, with_content=bool(params.include_content_diffs))


def _entry_reason(entry: LogEntry) -> str:
    event = entry.event
    if event.reason:
        return event.reason
    if event.detail.get("reason"):
        return str(event.detail["reason"])
    who = actor_dict(event)
    by = "the system" if who["type"] == "system" else f"{who['type']} {who['id']}"
    return f"{Event.Action(event.action).label} by {by}."


def explanation(log: SystemLog) -> str:
    since = f"{log.since:%Y-%m-%d %H:%M} UTC"
    if not log.entries:
        return (f"Nothing was pruned, quarantined, merged, blocked or changed by a dream in your graph since {since}"
                + ("." if log.log_type == "all" else f" (looking at {log.log_type} only)."))
    counts: dict[str, int] = {}
    for entry in log.entries:
        counts[entry.action] = counts.get(entry.action, 0) + 1
    told = ", ".join(f"{count} {action.replace('_', ' ')}" for action, count in counts.items())
    recoverable = sum(1 for entry in log.entries if entry.recoverable)
    return (f"Since {since} your graph has had: {told}. "
            + (f"{recoverable} of these can still be undone; tell me which to bring back."
               if recoverable else "None of these can be undone any more."))


async def get_system_logs(actor: User, params: SystemLogsInput) -> dict[str, Any]:
    log = await run_sync(system_log)(actor=actor, log_type=params.log_type or "all", node_id=params.node_id,
                                     since=params.since, limit=params.limit)
    return {
        "entries": [{"timestamp": iso_timestamp(entry.event.created_at), "action": entry.action,
                     "node_ids": [str(node) for node in entry.node_ids], "reason": _entry_reason(entry),
                     "details": entry.details, "actor": actor_dict(entry.event), "recoverable": entry.recoverable,
                     "recovery_tool": entry.recovery_tool} for entry in log.entries],
        "explanation_for_user": explanation(log), "since": iso_timestamp(log.since),
    }


# Resources

def map_markdown(graph: GraphMap, *, title: str) -> str:
    more = f" ({graph.left_out} more not drawn)" if graph.left_out else ""
    return (f"# {title}\n\n```mermaid\n{flowchart(graph)}\n```\n\n"
            f"{len(graph.nodes)} nodes and {len(graph.edges)} links{more}.\n")


async def visualize_node(actor: User, node_id: str) -> str:
    graph = await run_sync(node_neighbourhood_map)(actor=actor, node_id=node_id)
    return map_markdown(graph, title=f"Memory map: two links around node {graph.focal}")


async def visualize_topic(actor: User, scope: str, topic: str) -> str:
    graph = await run_sync(topic_map)(actor=actor, scope=scope, topic=topic)
    where = "all your cubes" if scope == "all" else f"cube {scope}"
    return map_markdown(graph, title=f"Memory map: {' '.join(topic.split())[:80]!r} in {where}")


async def session_pulse(actor: User) -> str:
    state = await run_sync(pulse_state_get)(actor=actor)
    session = state.session
    return json.dumps({
        "session_id": str(session.pk) if session else None,
        "entropy": _fraction(state.pulse.entropy), "coherence": _fraction(state.pulse.coherence),
        "lifecycle": state.stage.value, "interactions": session.interactions if session else 0,
        "learning_score": _fraction(session.learning_score) if session else 0.0,
        "suggested_action": state.pulse.suggested, "curation_tasks_pending": state.pending_tasks,
        "urgent_tasks": state.urgent_tasks, "updated_at": iso_timestamp(session.updated_at) if session else None,
    }, indent=2)


RESOURCES = (
    ResourceSpec(uri="visualize://{node_id}", name="node-map",
                 description="Mermaid flowchart of a node's neighbourhood: the nodes within two links of it (either "
                             "direction, strongest links first, at most 40) and every link among them.",
                 read=visualize_node),
    ResourceSpec(uri="visualize://{scope}/{topic}", name="topic-map",
                 description="Mermaid flowchart of the nodes that match a topic (full text) in one cube (scope: its "
                             "id) or in all your cubes (scope: all), at most 40, and the links among them.",
                 read=visualize_topic),
    ResourceSpec(uri="utl://current_session/pulse", name="pulse",
                 description="Your current session's cognitive state: entropy, coherence, lifecycle stage, the "
                             "suggested next tool and the curation tasks waiting. Read it to stay anchored between "
                             "tool calls.",
                 read=session_pulse, mime_type="application/json"),
)

TOOLS = (
    ToolSpec(
        name="get_graph_manifest",
        description="Meta-cognitive: Returns system prompt fragment explaining Bio-Nervous philosophy and layer "
                    "selection guidance. Call once per session to understand when to use which tools. Engram "
                    "names only the tools this server serves, and current_state_summary is your graph's real "
                    "state (nodes, links, open tasks, latest session).",
        input_model=NoArguments, adapter=get_graph_manifest, scope=READ, output_schema=MANIFEST_OUTPUT,
    ),
    ToolSpec(
        name="get_system_instructions",
        description="Cognitive handshake: a dense system prompt fragment to keep in your context beside "
                    "get_graph_manifest's. It says how to read the pulse, with your graph's current thresholds, "
                    "which tool to call when, and the mistakes to avoid.",
        input_model=NoArguments, adapter=get_system_instructions, scope=READ, output_schema=INSTRUCTIONS_OUTPUT,
    ),
    ToolSpec(
        name="get_health",
        description="Check system health status. Engram checks each component it depends on (database, pgvector, "
                    "embedding model, broker, channel layer and, where one is expected, a Celery worker): status "
                    "is healthy, degraded (something failing that memory can live without) or unhealthy (database "
                    "or pgvector failing).",
        input_model=NoArguments, adapter=get_health, scope=READ,
    ),
    ToolSpec(
        name="get_memetic_status",
        description="Dashboard: Get agent's current 'mental state'—entropy, coherence, active clusters, AND curation "
                    "tasks. Call before using advanced tools to decide next action. PROACTIVE: curation_tasks "
                    "contains merge/cleanup work the system identified for you. Engram reads the session's cached "
                    "state (your latest session without session_id); top_active_concepts are the names or keywords "
                    "of the nodes its latest items activated most; each task has its id. " + DREAM_BASIS,
        input_model=MemeticStatusInput, adapter=get_memetic_status, scope=READ, output_schema=MEMETIC_OUTPUT,
    ),
    ToolSpec(
        name="epistemic_action",
        description="Get system-generated clarifying question to reduce graph uncertainty. Engram asks about the "
                    "weakest real spot: an open ambiguity task, else the closest unlinked pair of nodes your "
                    "session activated (which opens an ambiguity task in your inbox), else the least coherent "
                    "cluster, else a query that found nothing. When nothing needs asking, question and action_type "
                    "are left out and reason says why.",
        input_model=EpistemicActionInput, adapter=epistemic_action, scope=WRITE, output_schema=EPISTEMIC_OUTPUT,
    ),
    ToolSpec(
        name="temporary_scratchpad",
        description="SHORT-TERM THOUGHT BUFFER: Store high-ΔS (surprising) thoughts not yet committed to long-term "
                    "graph. Auto-archived during Dream phase. ISOLATION: Each agent+session combo has its own "
                    "scratchpad. Engram: retrieve shows your own items, your session's team and shared items, and "
                    "your other sessions' shared items; clear removes your own only; items expire after "
                    f"{SCRATCHPAD_TTL_MINUTES} minutes.",
        input_model=ScratchpadInput, adapter=temporary_scratchpad, scope=WRITE, output_schema=SCRATCHPAD_OUTPUT,
    ),
    ToolSpec(
        name="get_node_lineage",
        description="Semantic versioning: how a node changed over time, newest first (created, merged, annotated, "
                    "dreamed, boosted, pruned, restored), who changed it (agent, user or the system), each change's "
                    "field diffs and undo hash, the nodes merged into it and those made from it.",
        input_model=NodeLineageInput, adapter=get_node_lineage, scope=READ, output_schema=LINEAGE_OUTPUT,
    ),
    ToolSpec(
        name="get_system_logs",
        description="Why memories went missing: what was pruned, forgotten, quarantined, merged, blocked or changed "
                    "by a dream in your graph, with the reason, whether it can still be undone and with which "
                    "tool, and an explanation to give the user.",
        input_model=SystemLogsInput, adapter=get_system_logs, scope=READ, output_schema=LOGS_OUTPUT,
    ),
)
