"""The gardener over REST (/api/v1/cognition/gardener/ and gardener/run/): the actor's own gardener only, through the
selector and the service the page and the admin use."""
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.cognition.api.gardener_serializers import (
    GardenerCycleSerializer, GardenerRunRequestSerializer, GardenerStatusSerializer, report_answer, status_answer,
)
from apps.cognition.selectors.gardener import gardener_status
from apps.cognition.services.gardener.cycle import gardener_request, gardener_run
from apps.cognition.tasks import gardener_queue
from apps.core.api.serializers import error_responses, validated

TAGS = ["cognition"]


@extend_schema(tags=TAGS)
class GardenerStatusView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_gardener_status",
        summary="Your gardener: activity, last cycle, why it waits",
        description="Your activity (an EWMA of your queries), the last gardener cycle (or the one under way) with "
                    "its counters and reversal hash, and why no cycle starts now.",
        responses={200: GardenerStatusSerializer, **error_responses(401, 403)},
    )
    def get(self, request):
        return Response(GardenerStatusSerializer(status_answer(gardener_status(actor=request.user))).data)


@extend_schema(tags=TAGS)
class GardenerRunView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_gardener_run",
        summary="Run a gardener cycle now",
        description="One cycle on the next window of your graph (at most 1000 nodes), now, whatever your activity: "
                    "prune weak idle links, dedupe, cut causal cycles, glymphatic clearance, importance scaling. By "
                    "default the worker runs it and the answer is 202 with your gardener's status (the cycle "
                    "queued; follow it with GET gardener/); with blocking true the cycle runs in this request and "
                    "the answer is its report (a large window can take a minute). 409 while a cycle or a dream of "
                    "yours runs. Undo it with its reversal_hash.",
        request=GardenerRunRequestSerializer,
        responses={200: GardenerCycleSerializer, 202: GardenerStatusSerializer,
                   **error_responses(400, 401, 403, 409)},
    )
    def post(self, request):
        data = validated(GardenerRunRequestSerializer, request.data)
        if data["blocking"]:
            report = gardener_run(actor=request.user, trigger="manual", batch_size=data["batch_size"])
            return Response(GardenerCycleSerializer(report_answer(report)).data)
        token = gardener_request(actor=request.user)
        gardener_queue(request.user, token, batch_size=data["batch_size"])
        return Response(GardenerStatusSerializer(status_answer(gardener_status(actor=request.user))).data,
                        status=status.HTTP_202_ACCEPTED)
