"""The gardener over REST (/api/v1/cognition/gardener/ and gardener/run/): the actor's own gardener only, through the
selector and the service the page and the admin use."""
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response

from apps.cognition.api.gardener_serializers import (
    GardenerCycleSerializer, GardenerRunRequestSerializer, GardenerStatusSerializer, report_answer, status_answer,
)
from apps.cognition.selectors.gardener import gardener_status
from apps.cognition.services.gardener.cycle import gardener_run
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
        description="One cycle on your graph, now, whatever your activity: prune weak idle links, dedupe, cut causal "
                    "cycles, glymphatic clearance, importance scaling. 409 while a cycle or a dream of yours runs, "
                    "or when your graph is over 1000 live nodes. Undo it with its reversal_hash.",
        request=GardenerRunRequestSerializer,
        responses={200: GardenerCycleSerializer, **error_responses(400, 401, 403, 409)},
    )
    def post(self, request):
        data = validated(GardenerRunRequestSerializer, request.data)
        report = gardener_run(actor=request.user, trigger="manual", batch_size=data["batch_size"])
        return Response(GardenerCycleSerializer(report_answer(report)).data)
