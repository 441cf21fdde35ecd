"""Context Graph over REST (/api/v1/cognition/): the same services and selectors as the MCP profile, each view
calling one of them. Another user's session, task, node, undo entry or pad is not found, as an unknown one is."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.cognition.api.serializers import (
    AdversarialCheckSerializer, AdversarialResultSerializer, CritiqueResultSerializer, CritiqueSerializer,
    QuarantinedNodeSerializer, ReleasedSerializer,
)
from apps.cognition.api.serializers import (
    BOOST_ALIASES, DECISION_ALIASES, NEIGHBORHOOD_ALIASES, NODE_ALIASES, RESTORE_ALIASES, SEARCH_ALIASES,
    STORE_ALIASES, AnnotateSerializer, AnnotationSerializer, ApproveSerializer, NodeBoostResultSerializer, NodeBoostSerializer,
    CurationTaskSerializer, ForgetResultSerializer, ForgetSerializer, LineageQuerySerializer, LineageSerializer,
    MergeResultSerializer, MergeSerializer, NeighborhoodQuerySerializer, NeighborhoodSerializer,
    NodeSearchResponseSerializer, NodeSearchSerializer, NodeStoreSerializer, PreviewSerializer, RecentQuerySerializer,
    RecentSerializer, ScratchpadSerializer, ScratchpadStoreSerializer, SessionDetailSerializer,
    SessionListItemSerializer, SessionSerializer, StoredNodeSerializer, SystemLogQuerySerializer, SystemLogSerializer,
    TaskListQuerySerializer, TombstoneListQuerySerializer, TombstoneSearchQuerySerializer, TombstoneSearchSerializer,
    TombstoneSerializer, UndoEntrySerializer, UndoListQuerySerializer, UndoResultSerializer,
)
from apps.cognition.representations import edge_summary, node_summary
from apps.cognition.selectors.graph import node_neighborhood, node_recent
from apps.cognition.selectors.immune import quarantine_blocks, quarantine_list
from apps.cognition.selectors.lineage import node_lineage, system_log
from apps.cognition.selectors.records import (
    session_detail, session_list, session_pulse, task_list, tombstone_list, undo_list,
)
from apps.cognition.selectors.tombstones import RECOVERY_INSTRUCTIONS, tombstones_search
from apps.cognition.services.critique import critique_context
from apps.cognition.services.curation import annotation_add, node_boost, node_forget, nodes_merge
from apps.cognition.services.decisions import task_approve, task_reject
from apps.cognition.services.immune import adversarial_check
from apps.cognition.services.quarantine import node_release
from apps.cognition.services.scratchpad import scratchpad_clear, scratchpad_retrieve, scratchpad_store
from apps.cognition.services.search import node_search
from apps.cognition.services.store import node_store
from apps.cognition.services.undo import UndoResult, node_restore, undo_apply
from apps.core.api.serializers import NoBodySerializer, PageQuerySerializer, error_responses, validated

TAGS = ["cognition"]
SESSION_ID = OpenApiParameter("session_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
TASK_ID = OpenApiParameter("task_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
NODE_ID = OpenApiParameter("node_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
REVERSAL_HASH = OpenApiParameter("reversal_hash", OpenApiTypes.STR, OpenApiParameter.PATH,
                                 description="The reversal_hash a merge or forget answered.")
AGENT_ID = OpenApiParameter("agent_id", OpenApiTypes.STR, OpenApiParameter.PATH,
                            description="The agent whose pad this is.")


def _actor_label(event) -> str:
    return event.actor_label or (event.actor.username if event.actor_id else "system")


def _undo_body(result: UndoResult) -> dict:
    plan, entry = result.plan, result.plan.entry
    return {"reversal_hash": entry.reversal_hash, "original_operation": entry.operation,
            "operation_timestamp": entry.created_at, "restored_nodes": plan.restored_nodes,
            "restored_edges": plan.restored_edges, "executed": result.executed, "plan": plan.as_dict()}


def _pad_body(pad) -> dict:
    return {"pad_id": pad.pad_id, "items": pad.items, "items_count": pad.items_count,
            "stored_id": pad.stored.pk if pad.stored else None, "cleared": pad.cleared}


# --- sessions ----------------------------------------------------------------------------------------------------

@extend_schema(tags=TAGS)
class SessionListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_sessions_list",
        summary="List your Context Graph sessions",
        description="The latest active first, each with its cached UTL state and pulse.",
        parameters=[PageQuerySerializer],
        responses={200: SessionListItemSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(session_list(actor=request.user))
        return self.get_paginated_response([{**SessionSerializer(session).data,
                                             "pulse": session_pulse(session).as_dict()} for session in page])


@extend_schema(tags=TAGS, parameters=[SESSION_ID])
class SessionDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_sessions_get",
        summary="Get a session",
        description="Its UTL state, pulse and latest items (queries and stores, with the nodes each activated).",
        responses={200: SessionDetailSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, session_id: str):
        detail = session_detail(actor=request.user, session_id=session_id)
        return Response({**SessionSerializer(detail.session).data, "pulse": detail.pulse.as_dict(), "recent_items": [
            {"kind": item.kind, "text": item.text,
             "activated": [{"node_id": node, "score": round(score, 4)} for node, score in item.activated]}
            for item in detail.recent_items]})


# --- curation tasks ----------------------------------------------------------------------------------------------

@extend_schema(tags=TAGS)
class TaskListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_tasks_list",
        summary="List your curation tasks",
        description="The curation inbox (potential merges, ambiguities, obsolete information, semantic cancer), "
                    "newest first; `status` filters (open, approved, rejected, done).",
        parameters=[TaskListQuerySerializer],
        responses={200: CurationTaskSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(TaskListQuerySerializer, request.query_params)
        page = self.paginate_queryset(task_list(actor=request.user, status=query["status"]))
        return self.get_paginated_response(CurationTaskSerializer(page, many=True).data)


@extend_schema(tags=TAGS, parameters=[TASK_ID])
class TaskApproveView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_tasks_approve",
        summary="Approve a curation task",
        description="Runs the tool the task suggests on its nodes: a merge (keeping the most important content), a "
                    "forget, or for an ambiguity a correction that `note` writes on each node.",
        request=ApproveSerializer,
        responses={200: CurationTaskSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, task_id: str):
        data = validated(ApproveSerializer, request.data)
        with DECISION_ALIASES.reported():
            decision = task_approve(actor=request.user, task_id=task_id, note=data["note"])
        return Response(CurationTaskSerializer(decision.task).data)


@extend_schema(tags=TAGS, parameters=[TASK_ID])
class TaskRejectView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_tasks_reject",
        summary="Reject a curation task",
        description="Its node set is never proposed for this kind of task again.",
        request=None,
        responses={200: CurationTaskSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, task_id: str):
        validated(NoBodySerializer, request.data)
        return Response(CurationTaskSerializer(task_reject(actor=request.user, task_id=task_id).task).data)


# --- nodes: store and navigation ---------------------------------------------------------------------------------

@extend_schema(tags=TAGS)
class NodeStoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_store",
        summary="Store a node",
        description="Context Graph's store_memory: a node in your personal cube with its rationale, recorded in "
                    "your latest session, answered with its steering reward. Give exactly one of content, "
                    "content_base64 (with modality) or data_uri. A near-duplicate of one of your nodes opens a "
                    "potential_merge task.",
        request=NodeStoreSerializer,
        responses={201: StoredNodeSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(NodeStoreSerializer, request.data)
        with STORE_ALIASES.reported():
            stored = node_store(actor=request.user, rationale=data["rationale"], content=data.get("content"),
                                content_base64=data.get("content_base64"), data_uri=data.get("data_uri"),
                                modality=data.get("modality"), importance=data.get("importance"),
                                metadata=data.get("metadata"), link_to=data.get("link_to"))
        body = {"node_id": stored.memory.pk, "session_id": stored.session.pk, "modality": stored.profile.modality,
                "delta_s": round(stored.delta_s, 4), "links_created": stored.links_created,
                "linked_to": stored.linked_to, "embedded_from": stored.embedded_from,
                "steering_reward": stored.reward.as_dict(), "near_duplicate_of": stored.near_duplicate_of,
                "curation_task_id": stored.merge_task.pk if stored.merge_task else None}
        return Response(StoredNodeSerializer(body).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAGS)
class NodeSearchView(generics.GenericAPIView):
    read_only_post = True  # a read sent as POST (a structured body): a read token may call it

    @extend_schema(
        operation_id="cognition_nodes_search",
        summary="Search nodes",
        description="Context Graph's search_graph: fused retrieval over the nodes you can read, with filters and a "
                    "perspective lock (domain, agent_ids, exclude_agent_ids). The query is recorded in your latest "
                    "session and the nodes found count as accessed.",
        request=NodeSearchSerializer,
        responses={200: NodeSearchResponseSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        data = validated(NodeSearchSerializer, request.data)
        with SEARCH_ALIASES.reported():
            found = node_search(actor=request.user, query=data["query"], top_k=data.get("top_k"),
                                min_importance=data.get("min_importance"),
                                johari_quadrants=data.get("johari_quadrants"),
                                created_after=data.get("created_after"), domain=data.get("domain"),
                                agent_ids=data.get("agent_ids"), exclude_agent_ids=data.get("exclude_agent_ids"))
        return Response(NodeSearchResponseSerializer({
            "results": [node_summary(item.memory, item.score) for item in found.items],
            "session_id": found.session.pk}).data)


@extend_schema(tags=TAGS)
class NeighborhoodView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_neighbourhood",
        summary="A node's neighbourhood",
        description="Best-first over links in both directions from focal_node_id, or else from the nodes your "
                    "session's latest search or store activated; a node's score is the best product of link "
                    "weights along a path to it.",
        parameters=[NeighborhoodQuerySerializer],
        responses={200: NeighborhoodSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(NeighborhoodQuerySerializer, request.query_params)
        with NEIGHBORHOOD_ALIASES.reported():
            found = node_neighborhood(actor=request.user, session_id=query.get("session_id"),
                                      focal_node_id=query.get("focal_node_id"), max_hops=query.get("max_hops"),
                                      max_nodes=query.get("max_nodes"), include_edges=query["include_edges"])
        return Response(NeighborhoodSerializer({
            "nodes": [node_summary(memory, score) for memory, score in found.nodes],
            "edges": [edge_summary(*edge) for edge in found.edges], "focal_point": found.focal_point,
            "note": found.note}).data)


@extend_schema(tags=TAGS)
class RecentView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_recent",
        summary="Recently used nodes",
        description="Nodes retrieved or changed in the last lookback_minutes (with session_id, those that "
                    "session's searches and stores activated); score is the node's recency in the window.",
        parameters=[RecentQuerySerializer],
        responses={200: RecentSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(RecentQuerySerializer, request.query_params)
        found = node_recent(actor=request.user, session_id=query.get("session_id"),
                            lookback_minutes=query.get("lookback_minutes"), limit=query.get("limit"),
                            sort_by=query.get("sort_by"))
        return Response(RecentSerializer({
            "nodes": [node_summary(memory, score) for memory, score in found.nodes],
            "time_range": {"start": found.since, "end": found.until}}).data)


@extend_schema(tags=TAGS, parameters=[NODE_ID])
class LineageView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_lineage",
        summary="A node's lineage",
        description="Its latest changes (created, merged, annotated, boosted, forgotten, restored, ...), newest "
                    "first, with the nodes merged into it and those made from it. Deleted nodes you can read too.",
        parameters=[LineageQuerySerializer],
        responses={200: LineageSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, node_id: str):
        query = validated(LineageQuerySerializer, request.query_params)
        lineage = node_lineage(actor=request.user, node_id=node_id, depth=query.get("depth"))
        return Response(LineageSerializer({
            "node_id": lineage.memory.pk, "current_content": lineage.memory.content,
            "deleted": lineage.memory.deleted_at is not None, "merged_from": lineage.merged_from,
            "forked_to": lineage.forked_to, "total_changes": lineage.total,
            "changes": [{"timestamp": event.created_at, "action": event.action, "reason": event.reason,
                         "actor": _actor_label(event), "reversal_hash": event.reversal_hash, "detail": event.detail}
                        for event in lineage.events]}).data)


# --- nodes: curation ---------------------------------------------------------------------------------------------

@extend_schema(tags=TAGS, parameters=[NODE_ID])
class AnnotateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_annotate",
        summary="Annotate a node",
        description="Marginalia on a node you may write (a note, correction, reference or deprecation); closes "
                    "the curation tasks open about it.",
        request=AnnotateSerializer,
        responses={201: AnnotationSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, node_id: str):
        data = validated(AnnotateSerializer, request.data)
        with NODE_ALIASES.reported():
            annotation = annotation_add(actor=request.user, node_id=node_id, text=data["text"],
                                        annotation_type=data["annotation_type"],
                                        reference_node_id=data.get("reference_node_id"))
        return Response(AnnotationSerializer({
            "annotation_id": annotation.pk, "node_id": annotation.memory_id,
            "annotation_type": annotation.annotation_type, "text": annotation.text}).data,
            status=status.HTTP_201_CREATED)


@extend_schema(tags=TAGS, parameters=[NODE_ID])
class BoostView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_boost",
        summary="Boost a node's importance",
        description="importance becomes clamp(importance x boost_factor, 0, 1).",
        request=NodeBoostSerializer,
        responses={200: NodeBoostResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, node_id: str):
        data = validated(NodeBoostSerializer, request.data)
        with BOOST_ALIASES.reported():
            boosted = node_boost(actor=request.user, node_id=node_id, boost_factor=data["boost_factor"],
                                 reason=data["reason"])
        return Response(NodeBoostResultSerializer({
            "node_id": boosted.memory.pk, "new_importance": boosted.memory.importance,
            "previous_importance": boosted.previous_importance}).data)


@extend_schema(tags=TAGS)
class MergeView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_merge",
        summary="Merge nodes",
        description="Nodes of one cube you may write become one new node (content by merge_strategy, every edge "
                    "of the sources); the sources wait in the trash until the undo expires. Nodes of different "
                    "domains, or of agents that see the world differently, are linked instead unless force_merge. "
                    "The answer's reversal_hash undoes it.",
        request=MergeSerializer,
        responses={200: MergeResultSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request):
        data = validated(MergeSerializer, request.data)
        merged = nodes_merge(actor=request.user, source_node_ids=[str(node) for node in data["source_node_ids"]],
                             target_name=data["target_name"], merge_strategy=data["merge_strategy"],
                             force_merge=data["force_merge"])
        return Response(MergeResultSerializer({
            "merged_node_id": merged.merged.pk if merged.merged else None, "nodes_merged": merged.nodes_merged,
            "edges_redirected": merged.edges_redirected, "priors_compatible": merged.priors_compatible,
            "relational_edge_created": merged.relational_edge_created, "relational_note": merged.relational_note,
            "reversal_hash": merged.reversal_hash}).data)


@extend_schema(tags=TAGS, parameters=[NODE_ID])
class ForgetView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_forget",
        summary="Forget a node",
        description="Soft by default: the node goes to the trash, restorable until restore_deadline (its "
                    "reversal_hash, or POST .../restore/). soft_delete false removes it for good and needs reason "
                    "user_requested.",
        request=ForgetSerializer,
        responses={200: ForgetResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, node_id: str):
        data = validated(ForgetSerializer, request.data)
        with NODE_ALIASES.reported():
            forgotten = node_forget(actor=request.user, node_id=node_id, reason=data["reason"],
                                    cascade_edges=data["cascade_edges"], soft_delete=data["soft_delete"])
        return Response(ForgetResultSerializer({
            "node_id": node_id, "soft_deleted": forgotten.soft, "edges_removed": forgotten.edges_removed,
            "restore_deadline": forgotten.restore_deadline, "reversal_hash": forgotten.reversal_hash}).data)


@extend_schema(tags=TAGS, parameters=[NODE_ID])
class RestoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_restore",
        summary="Restore a node from the trash",
        description="The exact undo of the forget (or merge) that removed the node: same id, vector, edges, "
                    "profile and notes. preview true shows the plan and changes nothing.",
        request=PreviewSerializer,
        responses={200: UndoResultSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, node_id: str):
        data = validated(PreviewSerializer, request.data)
        with RESTORE_ALIASES.reported():
            result = node_restore(actor=request.user, node_id=node_id, preview=data["preview"])
        return Response(UndoResultSerializer(_undo_body(result)).data)


# --- trash and undo log ------------------------------------------------------------------------------------------

@extend_schema(tags=TAGS)
class TombstoneListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_tombstones_list",
        summary="List your trash",
        description="Forgotten and merged-away nodes you can read, newest first, each with whether an undo of "
                    "yours can still bring it back.",
        parameters=[TombstoneListQuerySerializer],
        responses={200: TombstoneSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(TombstoneListQuerySerializer, request.query_params)
        page = self.paginate_queryset(tombstone_list(actor=request.user, deletion_reason=query["deletion_reason"]))
        return self.get_paginated_response(TombstoneSerializer(page, many=True).data)


@extend_schema(tags=TAGS)
class TombstoneSearchView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_tombstones_search",
        summary="Search your trash",
        description="The trashed nodes nearest in meaning to what you remember of them, with why each went and "
                    "whether it can come back.",
        parameters=[TombstoneSearchQuerySerializer],
        responses={200: TombstoneSearchSerializer, **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(TombstoneSearchQuerySerializer, request.query_params)
        hits = tombstones_search(actor=request.user, query=query["query"],
                                 deletion_reason=query["deletion_reason"],
                                 deleted_after=query.get("deleted_after"), top_k=query.get("top_k"))
        return Response(TombstoneSearchSerializer({"recovery_instructions": RECOVERY_INSTRUCTIONS, "tombstones": [{
            "node_id": hit.tombstone.memory_id, "original_content": hit.tombstone.memory.content,
            "deletion_reason": hit.tombstone.reason, "deleted_at": hit.tombstone.created_at,
            "deleted_by": hit.deleted_by, "restore_deadline": hit.tombstone.deadline,
            "recoverable": hit.recoverable, "similarity": hit.similarity, "explanation": hit.explanation,
            "merged_into": hit.merged_into} for hit in hits]}).data)


@extend_schema(tags=TAGS)
class UndoListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_undo_list",
        summary="List your undo entries",
        description="Your merges and forgets, newest first, each with its reversal_hash and whether it can still "
                    "be applied (kept 30 days, once).",
        parameters=[UndoListQuerySerializer],
        responses={200: UndoEntrySerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(UndoListQuerySerializer, request.query_params)
        page = self.paginate_queryset(undo_list(actor=request.user, usable_only=query["usable"]))
        return self.get_paginated_response(UndoEntrySerializer(page, many=True).data)


class UndoView(generics.GenericAPIView):
    preview = True

    def post(self, request, reversal_hash: str):
        validated(NoBodySerializer, request.data)
        result = undo_apply(actor=request.user, reversal_hash=reversal_hash, preview=self.preview)
        return Response(UndoResultSerializer(_undo_body(result)).data)


@extend_schema(tags=TAGS, parameters=[REVERSAL_HASH])
class UndoPreviewView(UndoView):
    @extend_schema(
        operation_id="cognition_undo_preview",
        summary="Preview an undo",
        description="What applying the undo would add, remove and change, changing nothing. An apply after a "
                    "preview is refused (409) when the plan has changed since.",
        request=None,
        responses={200: UndoResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, reversal_hash: str):
        return super().post(request, reversal_hash)


@extend_schema(tags=TAGS, parameters=[REVERSAL_HASH])
class UndoApplyView(UndoView):
    preview = False

    @extend_schema(
        operation_id="cognition_undo_apply",
        summary="Apply an undo",
        description="Puts every row of the merge's or forget's snapshot back as it was and removes what it made; "
                    "the hash is used up.",
        request=None,
        responses={200: UndoResultSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, reversal_hash: str):
        return super().post(request, reversal_hash)


@extend_schema(tags=TAGS)
class SystemLogView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_system_log",
        summary="The system log",
        description="What was taken out of, merged in or changed in your graph since `since` (default the last "
                    "24 hours), newest first, one entry per change, each with whether it can still be undone.",
        parameters=[SystemLogQuerySerializer],
        responses={200: SystemLogSerializer, **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(SystemLogQuerySerializer, request.query_params)
        log = system_log(actor=request.user, log_type=query["log_type"], node_id=query.get("node_id"),
                         since=query.get("since"), limit=query.get("limit"))
        return Response(SystemLogSerializer({"since": log.since, "log_type": log.log_type, "entries": [{
            "timestamp": entry.event.created_at, "action": entry.action, "node_ids": entry.node_ids,
            "reason": entry.event.reason, "details": entry.details, "actor": _actor_label(entry.event),
            "recoverable": entry.recoverable, "recovery_tool": entry.recovery_tool,
            "reversal_hash": entry.event.reversal_hash} for entry in log.entries]}).data)


# --- scratchpad --------------------------------------------------------------------------------------------------

@extend_schema(tags=TAGS, parameters=[SESSION_ID, AGENT_ID])
class ScratchpadView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_scratchpad_get",
        summary="Read an agent's scratchpad",
        description="What the agent sees in the session: its own items, the session's team items and your shared "
                    "items, oldest first; items expire after an hour.",
        responses={200: ScratchpadSerializer, **error_responses(400, 401, 403)},
    )
    def get(self, request, session_id: str, agent_id: str):
        return Response(ScratchpadSerializer(_pad_body(scratchpad_retrieve(
            actor=request.user, session_id=session_id, agent_id=agent_id))).data)

    @extend_schema(
        operation_id="cognition_scratchpad_store",
        summary="Store a thought in an agent's scratchpad",
        description="Kept an hour, with its surprise against the session (started under session_id when new).",
        request=ScratchpadStoreSerializer,
        responses={201: ScratchpadSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, session_id: str, agent_id: str):
        data = validated(ScratchpadStoreSerializer, request.data)
        pad = scratchpad_store(actor=request.user, session_id=session_id, agent_id=agent_id, content=data["content"],
                               privacy=data["privacy"], tags=data.get("tags"),
                               auto_commit_threshold=data.get("auto_commit_threshold"))
        return Response(ScratchpadSerializer(_pad_body(pad)).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="cognition_scratchpad_clear",
        summary="Clear an agent's scratchpad",
        description="Removes the agent's own items of the session; others' team and shared items stay.",
        responses={200: ScratchpadSerializer, **error_responses(400, 401, 403)},
    )
    def delete(self, request, session_id: str, agent_id: str):
        return Response(ScratchpadSerializer(_pad_body(scratchpad_clear(
            actor=request.user, session_id=session_id, agent_id=agent_id))).data)


# --- immune system, critique and the quarantine --------------------------------------------------------------------

@extend_schema(tags=TAGS)
class AdversarialCheckView(generics.GenericAPIView):
    read_only_post = True  # a read sent as POST (a body of up to 64 KiB): a read token may call it

    @extend_schema(
        operation_id="cognition_adversarial_check",
        summary="Check content for adversarial attacks",
        description="Context Graph's check_adversarial, storing nothing: prompt injection patterns (the matched span "
                    "quoted), the content's distance from the centroid of your nodes (over 3 standard deviations, "
                    "from 30 nodes), a given embedding's cosine to the content's own (under 0.4), and causal claims "
                    "that would close a cycle of your causal links. `quarantine` says whether a store would be "
                    "quarantined.",
        request=AdversarialCheckSerializer,
        responses={200: AdversarialResultSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        data = validated(AdversarialCheckSerializer, request.data)
        check = adversarial_check(actor=request.user, content=data["content"], embedding=data.get("embedding"))
        return Response(AdversarialResultSerializer(check.as_dict()).data)


@extend_schema(tags=TAGS)
class CritiqueView(generics.GenericAPIView):
    read_only_post = True

    @extend_schema(
        operation_id="cognition_critique",
        summary="Critique a reasoning summary against your graph",
        description="Context Graph's critique_context: each sentence against its nearest nodes (and focal_nodes); "
                    "negations, number/version/date clashes, correction notes, superseded decisions and causal "
                    "claims the graph links the other way, each scored; those at contradiction_threshold or above "
                    "are reported. No language model.",
        request=CritiqueSerializer,
        responses={200: CritiqueResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(CritiqueSerializer, request.data)
        found = critique_context(actor=request.user, reasoning_summary=data["reasoning_summary"],
                                 focal_nodes=[str(node) for node in data["focal_nodes"]]
                                 if "focal_nodes" in data else None,
                                 contradiction_threshold=data.get("contradiction_threshold"))
        return Response(CritiqueResultSerializer(found.as_dict()).data)


@extend_schema(tags=TAGS)
class QuarantineListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_quarantine_list",
        summary="List the quarantine",
        description="Nodes that store_memory kept out of retrieval because check_adversarial found an injection or "
                    "an anomaly, in the cubes you may write (you may review them), newest first, each with what was "
                    "found. Release one, or forget it (POST nodes/<id>/forget/).",
        parameters=[PageQuerySerializer],
        responses={200: QuarantinedNodeSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(quarantine_list(actor=request.user))
        blocks = quarantine_blocks([profile.memory_id for profile in page])
        return self.get_paginated_response(QuarantinedNodeSerializer([{
            "node_id": profile.memory_id, "content": profile.memory.content, "cube": profile.memory.cube_id,
            "created_at": profile.memory.created_at,
            "attack_type": block.detail.get("attack_type", "") if block else "",
            "reason": block.reason if block else "", "findings": block.detail.get("findings", []) if block else [],
        } for profile in page for block in [blocks.get(str(profile.memory_id))]], many=True).data)


@extend_schema(tags=TAGS, parameters=[NODE_ID])
class QuarantineReleaseView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_quarantine_release",
        summary="Release a quarantined node",
        description="The node comes back into retrieval with the links its store made and those it asked for "
                    "(link_to), where their other ends still live. You must be able to write its cube.",
        request=None,
        responses={200: ReleasedSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, node_id: str):
        validated(NoBodySerializer, request.data)
        released = node_release(actor=request.user, node_id=node_id)
        return Response(ReleasedSerializer({"node_id": released.memory.pk, "links_restored": released.links_restored,
                                            "links_lost": released.links_lost}).data)
