"""The dream over REST (/api/v1/cognition/dreams/): list your runs, trigger one (queued for the worker, as
trigger_dream without blocking), follow its progress step by step and batch by batch, and interrupt it. Another
user's run is not found, as an unknown one is."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.cognition.api.dream_serializers import DreamRunListItemSerializer, DreamRunSerializer, DreamTriggerSerializer
from apps.cognition.dream_answers import dream_answer, dream_list_answer
from apps.cognition.selectors.dreams import dream_list
from apps.cognition.services.dream import dream_get, dream_interrupt, dream_trigger
from apps.cognition.tasks import dream_queue
from apps.core.api.serializers import NoBodySerializer, PageQuerySerializer, error_responses, validated

TAGS = ["cognition"]
DREAM_RUN_ID = OpenApiParameter("dream_run_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=TAGS)
class DreamListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_dreams_list",
        summary="List your dream runs",
        description="Your dreams, newest first: phase, status, the step the next batch starts at, batches and items "
                    "done, why it stopped.",
        parameters=[PageQuerySerializer],
        responses={200: DreamRunListItemSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        page = self.paginate_queryset(dream_list(actor=request.user))
        return self.get_paginated_response(DreamRunListItemSerializer([dream_list_answer(run) for run in page],
                                                                      many=True).data)

    @extend_schema(
        operation_id="cognition_dreams_trigger",
        summary="Start a dream",
        description="trigger_dream in the background: the run is queued for the worker (202) and works your graph "
                    "in batches within its budget; follow it at dreams/<dream_run_id>/. Your interrupted dream is "
                    "resumed instead of a new one started. One dream per user: 409 while one runs.",
        request=DreamTriggerSerializer,
        responses={202: DreamRunSerializer, **error_responses(400, 401, 403, 409)},
    )
    def post(self, request):
        data = validated(DreamTriggerSerializer, request.data)
        run = dream_trigger(actor=request.user, phase=data["phase"], duration_minutes=data.get("duration_minutes"),
                            synthetic_query_count=data.get("synthetic_query_count"),
                            abort_on_query=data["abort_on_query"])
        return Response(DreamRunSerializer(dream_answer(dream_queue(run))).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=TAGS, parameters=[DREAM_RUN_ID])
class DreamDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_dreams_detail",
        summary="A dream run's progress",
        description="The run's steps (done, running, next, pending) with the batches and items each took, every "
                    "counter (each equals the rows changed), its notes and the reversal_hash that undoes it.",
        responses={200: DreamRunSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, dream_run_id: str):
        return Response(DreamRunSerializer(dream_answer(dream_get(actor=request.user, run_id=dream_run_id))).data)


@extend_schema(tags=TAGS, parameters=[DREAM_RUN_ID])
class DreamInterruptView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_dreams_interrupt",
        summary="Interrupt a dream",
        description="A queued dream stops at once, a running one at its next batch (the batch under way finishes): "
                    "interrupted and resumable by the next trigger. 409 when the run is not under way.",
        request=None,
        responses={200: DreamRunSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, dream_run_id: str):
        validated(NoBodySerializer, request.data)
        return Response(DreamRunSerializer(dream_answer(dream_interrupt(actor=request.user,
                                                                        run_id=dream_run_id))).data)
