"""Context Graph's curation tools: annotate_node, boost_importance, merge_concepts, forget_concept, the undo log's
restore_from_hash and restore_concept, and search_tombstones. Input and output schemas are the seed's (restore_concept,
which the seed names without a block, takes node_id); the adapters call apps/cognition's services."""
from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, WithJsonSchema

from apps.accounts.models import User
from apps.cognition.limits import ANNOTATION_MAX_CHARS, MERGE_MAX_SOURCES, TOMBSTONE_TOP_K
from apps.cognition.models import UndoEntry
from apps.cognition.selectors.tombstones import RECOVERY_INSTRUCTIONS, SEARCHABLE_REASONS, tombstones_search
from apps.cognition.services.curation import (
    ANNOTATION_TYPES, FORGET_REASONS, STRATEGIES, annotation_add, node_boost, node_forget, nodes_merge,
)
from apps.cognition.services.undo import UndoResult, node_restore, undo_apply
from apps.core.aliases import Aliases
from apps.core.limits import BOOST_FACTOR
from apps.core.threads import run_sync
from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import ToolSpec
from apps.mcp.schema import SnakeCaseSeedModel
from apps.memories.services.lifecycle import MAX_BOOST_REASON_CHARS


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError("must be a UUID, e.g. a node_id that search_graph returned") from None


NodeId = Annotated[str, AfterValidator(_uuid), WithJsonSchema({"type": "string", "format": "uuid"})]
DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
UUID_OUT = {"type": "string", "format": "uuid"}
DATE_TIME_OUT = {"type": "string", "format": "date-time"}

# The services' argument names -> the tools', where they differ: a service's error names what the caller sent.
BOOST_ALIASES = Aliases({"memory_id": "node_id", "factor": "boost_factor"})
NODE_ALIASES = Aliases({"memory_id": "node_id"})
# restore_concept finds the hash from the node: an error about the hash is about the node named.
RESTORE_CONCEPT_ALIASES = Aliases({"reversal_hash": "node_id"})


# --- input models: the seed's inputSchema blocks -----------------------------------------------------------------

class MergeConceptsInput(SnakeCaseSeedModel):
    source_node_ids: list[NodeId] = Field(min_length=2, max_length=MERGE_MAX_SOURCES)
    target_name: str = Field(description="Name for merged concept")
    merge_strategy: Literal[STRATEGIES] | None = "keep_highest"
    force_merge: bool | None = Field(False, description=(
        "SAFETY: Override priors_vibe_check incompatibility. Use ONLY when you're certain nodes should merge despite "
        "different agent perspectives."))


class AnnotateNodeInput(SnakeCaseSeedModel):
    node_id: NodeId
    annotation: str = Field(max_length=ANNOTATION_MAX_CHARS)
    annotation_type: Literal[ANNOTATION_TYPES] | None = "user_note"
    reference_node_id: NodeId | None = Field(None, description="For reference/deprecation types")


class ForgetConceptInput(SnakeCaseSeedModel):
    node_id: NodeId
    reason: Literal[FORGET_REASONS]
    cascade_edges: bool | None = Field(True, description="Also remove connected edges")
    soft_delete: bool | None = Field(True, description=(
        "SAFETY: If true (default), node moves to trash bin and can be restored via restore_concept within 30 days. "
        "If false, permanent deletion (requires reason='user_requested')."))


class RestoreFromHashInput(SnakeCaseSeedModel):
    reversal_hash: str = Field(description="Hash from merge_concepts or forget_concept response")
    preview: bool | None = Field(True, description="If true, show what would be restored without executing")


class RestoreConceptInput(SnakeCaseSeedModel):
    node_id: NodeId = Field(description="A node in your trash (forgotten, or merged into another node)")
    preview: bool | None = Field(False, description="If true, show what would be restored without executing")


class BoostImportanceInput(SnakeCaseSeedModel):
    node_id: NodeId
    boost_factor: float | None = Field(1.5, **BOOST_FACTOR.schema())
    reason: str | None = Field(None, max_length=MAX_BOOST_REASON_CHARS)


class SearchTombstonesInput(SnakeCaseSeedModel):
    query: str = Field(description="What the agent remembers searching for")
    deletion_reason: Literal[SEARCHABLE_REASONS] | None = Field("all", description="Filter by why nodes were deleted")
    deleted_after: DateTime | None = Field(None, description="Only show nodes deleted after this time")
    top_k: int | None = Field(TOMBSTONE_TOP_K.default, **TOMBSTONE_TOP_K.schema())


# --- output schemas: the seed's outputSchema blocks ----------------------------------------------------------------

MERGE_OUTPUT = {"type": "object", "properties": {
    "merged_node_id": UUID_OUT,
    "nodes_merged": {"type": "integer"},
    "edges_redirected": {"type": "integer"},
    "priors_compatible": {"type": "boolean",
                          "description": "True if source nodes had compatible priors_vibe_check vectors"},
    "relational_edge_created": {"type": "boolean", "description": "If priors incompatible and force_merge=false, "
                                                                  "system creates relational edge instead of merging"},
    "relational_note": {"type": "string", "description": "E.g., 'In Python, X; but in Java, Y' - preserves "
                                                         "domain-specific truth"},
}}
ANNOTATE_OUTPUT = {"type": "object", "properties": {"annotation_id": UUID_OUT, "node_id": UUID_OUT}}
FORGET_OUTPUT = {"type": "object", "properties": {
    "deleted": {"type": "boolean"},
    "soft_deleted": {"type": "boolean", "description": "True if in trash (recoverable), false if permanent"},
    "edges_removed": {"type": "integer"},
    "restore_deadline": {**DATE_TIME_OUT, "description": "For soft deletes: when node will be permanently purged"},
}}
RESTORE_OUTPUT = {"type": "object", "properties": {
    "restored_nodes": {"type": "array", "items": UUID_OUT},
    "restored_edges": {"type": "integer"},
    "original_operation": {"type": "string", "enum": ["merge", "forget"]},
    "operation_timestamp": DATE_TIME_OUT,
    "success": {"type": "boolean"},
}}
BOOST_OUTPUT = {"type": "object", "properties": {"new_importance": {"type": "number"},
                                                 "previous_importance": {"type": "number"}}}
TOMBSTONES_OUTPUT = {"type": "object", "properties": {
    "tombstones": {"type": "array", "items": {"type": "object", "properties": {
        "node_id": UUID_OUT,
        "original_content": {"type": "string", "description": "What the node contained"},
        "deletion_reason": {"type": "string"},
        "deleted_at": DATE_TIME_OUT,
        "deleted_by": {"type": "string", "description": "Agent ID or 'system' or 'user'"},
        "recoverable": {"type": "boolean", "description": "Can this be restored?"},
        "explanation": {"type": "string", "description": "Human-readable explanation for deletion"},
    }}},
    "recovery_instructions": {"type": "string", "description": "How to restore if user confirms node was correct"},
}}


# --- adapters ------------------------------------------------------------------------------------------------------

async def annotate_node(actor: User, params: AnnotateNodeInput) -> dict[str, Any]:
    annotation = await run_sync(annotation_add)(
        actor=actor, node_id=params.node_id, text=params.annotation,
        annotation_type=params.annotation_type or "user_note", reference_node_id=params.reference_node_id)
    return {"annotation_id": str(annotation.pk), "node_id": str(annotation.memory_id)}


async def boost_importance(actor: User, params: BoostImportanceInput) -> dict[str, Any]:
    boosted = await run_sync(node_boost)(
        actor=actor, node_id=params.node_id, boost_factor=1.5 if params.boost_factor is None else params.boost_factor,
        reason=params.reason or "")
    return {"new_importance": boosted.memory.importance, "previous_importance": boosted.previous_importance}


async def merge_concepts(actor: User, params: MergeConceptsInput) -> dict[str, Any]:
    merged = await run_sync(nodes_merge)(
        actor=actor, source_node_ids=list(params.source_node_ids), target_name=params.target_name,
        merge_strategy=params.merge_strategy or "keep_highest", force_merge=bool(params.force_merge))
    data: dict[str, Any] = {
        "nodes_merged": merged.nodes_merged, "edges_redirected": merged.edges_redirected,
        "priors_compatible": merged.priors_compatible, "relational_edge_created": merged.relational_edge_created,
        "reversal_hash": merged.reversal_hash,
    }
    if merged.merged is not None:
        data["merged_node_id"] = str(merged.merged.pk)
    if merged.relational_note is not None:
        data["relational_note"] = merged.relational_note
    return data


async def forget_concept(actor: User, params: ForgetConceptInput) -> dict[str, Any]:
    forgotten = await run_sync(node_forget)(
        actor=actor, node_id=params.node_id, reason=params.reason, cascade_edges=params.cascade_edges is not False,
        soft_delete=params.soft_delete is not False)
    data: dict[str, Any] = {"deleted": True, "soft_deleted": forgotten.soft, "edges_removed": forgotten.edges_removed,
                            "reversal_hash": forgotten.reversal_hash}
    if forgotten.restore_deadline is not None:
        data["restore_deadline"] = forgotten.restore_deadline.isoformat()
    return data


# The seed names two operations; a relational link is what a merge_concepts call did instead of merging.
SEED_OPERATIONS = {UndoEntry.Operation.RELATE: UndoEntry.Operation.MERGE}


def _restored(result: UndoResult) -> dict[str, Any]:
    plan, entry = result.plan, result.plan.entry
    operation = SEED_OPERATIONS.get(entry.operation, entry.operation)
    # A dream's undo has no name among the seed's two: it says so in `operation` instead.
    named = ({"original_operation": operation} if operation in RESTORE_OUTPUT["properties"]["original_operation"][
        "enum"] else {"operation": operation})
    return {
        "restored_nodes": plan.restored_nodes, "restored_edges": plan.restored_edges,
        **named, "operation_timestamp": entry.created_at.isoformat(),
        "success": True, "preview": not result.executed, "plan": plan.as_dict(),
    }


async def restore_from_hash(actor: User, params: RestoreFromHashInput) -> dict[str, Any]:
    return _restored(await run_sync(undo_apply)(actor=actor, reversal_hash=params.reversal_hash,
                                                preview=params.preview is not False))


async def restore_concept(actor: User, params: RestoreConceptInput) -> dict[str, Any]:
    return _restored(await run_sync(node_restore)(actor=actor, node_id=params.node_id, preview=bool(params.preview)))


async def search_tombstones(actor: User, params: SearchTombstonesInput) -> dict[str, Any]:
    hits = await run_sync(tombstones_search)(
        actor=actor, query=params.query, deletion_reason=params.deletion_reason or "all",
        deleted_after=params.deleted_after, top_k=params.top_k)
    return {
        "tombstones": [{
            "node_id": str(hit.tombstone.memory_id), "original_content": hit.tombstone.memory.content,
            "deletion_reason": hit.tombstone.reason, "deleted_at": hit.tombstone.created_at.isoformat(),
            "deleted_by": hit.deleted_by, "recoverable": hit.recoverable, "explanation": hit.explanation,
            "restore_deadline": hit.tombstone.deadline.isoformat(), "similarity": hit.similarity,
            **({"merged_into": hit.merged_into} if hit.merged_into else {}),
        } for hit in hits],
        "recovery_instructions": RECOVERY_INSTRUCTIONS,
    }


UNDO_NOTE = (" Engram: the answer also carries reversal_hash (null when nothing can be undone), the key of an exact "
             "undo (same ids, vectors, edges both ways, profiles, notes) kept 30 days.")

TOOLS = (
    ToolSpec(
        name="merge_concepts",
        description="Curation: Merge semantically identical nodes. Agent acts as librarian to maintain graph quality."
                    " Engram: memory and summary nodes of one cube you may write; the merged node is a new node "
                    "(a summary when summarized or when a source is one, else a memory) whose content follows "
                    "merge_strategy (keep_highest = the most important source's; summarize = the most central "
                    "sentences, extractive), re-embedded, with the highest importance, and every edge of the sources "
                    "(duplicates at their highest weight). The sources stay hidden in the trash until the undo "
                    "expires. Different domains, or agents whose nodes' mean vectors have cos < 0.7, are linked "
                    "instead (relational_note; its reversal_hash puts back the links the pairs had) unless force_merge."
                    + UNDO_NOTE,
        input_model=MergeConceptsInput, adapter=merge_concepts, scope=WRITE, output_schema=MERGE_OUTPUT,
    ),
    ToolSpec(
        name="annotate_node",
        description="Curation: Add marginalia to existing node (corrections, references, deprecation notes). "
                    "Engram: closes the curation tasks open about the node.",
        input_model=AnnotateNodeInput, adapter=annotate_node, scope=WRITE, output_schema=ANNOTATE_OUTPUT,
    ),
    ToolSpec(
        name="forget_concept",
        description="Curation: Explicit node removal for semantic cancer, adversarial injection, or obsolete info. "
                    "SAFETY: Uses soft_delete by default (recoverable within 30 days)." + UNDO_NOTE,
        input_model=ForgetConceptInput, adapter=forget_concept, scope=WRITE, output_schema=FORGET_OUTPUT,
        aliases=NODE_ALIASES,
    ),
    ToolSpec(
        name="restore_from_hash",
        description="UNDO LOG: Rollback a merge or forget operation using its reversal hash. Every merge_concepts and "
                    "forget_concept generates a reversal_hash in its response. Use this for one-click disaster "
                    "recovery. Engram: a preview (the default) changes nothing and lists in `plan` what the undo "
                    "adds, removes and changes; an undo whose plan changed since its preview is refused (-32001); a "
                    "hash runs once.",
        input_model=RestoreFromHashInput, adapter=restore_from_hash, scope=WRITE, output_schema=RESTORE_OUTPUT,
    ),
    ToolSpec(
        name="restore_concept",
        description="Restore a node from the trash within 30 days: the exact undo of the forget_concept (or the "
                    "merge_concepts) that removed it, as restore_from_hash does with its hash. preview true shows the "
                    "plan without executing.",
        input_model=RestoreConceptInput, adapter=restore_concept, scope=WRITE, output_schema=RESTORE_OUTPUT,
        aliases=RESTORE_CONCEPT_ALIASES,
    ),
    ToolSpec(
        name="boost_importance",
        description="Curation: Agent marks content as critical. Use for passive capture refinement. Engram: "
                    "importance becomes clamp(importance x boost_factor, 0, 1).",
        input_model=BoostImportanceInput, adapter=boost_importance, scope=WRITE, output_schema=BOOST_OUTPUT,
        aliases=BOOST_ALIASES,
    ),
    ToolSpec(
        name="search_tombstones",
        description="AMNESIA EXPLAINER: Search soft-deleted nodes (trash bin). Use when agent remembers something that "
                    "no longer appears in search results. Explains WHY nodes were removed (semantic cancer, obsolete, "
                    "adversarial, user-requested). Engram: merged-away nodes are listed too, and each node's "
                    "restore_deadline.",
        input_model=SearchTombstonesInput, adapter=search_tombstones, scope=READ, output_schema=TOMBSTONES_OUTPUT,
    ),
)
