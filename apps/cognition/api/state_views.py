"""Context Graph's state over REST (/api/v1/cognition/sessions/<id>/utl/, neuromodulation/, homeostasis/): the
selectors the MCP tools call, one per view, answering the tools' own data (apps/cognition/state_answers.py). Reads
only; another user's session is a 404, as an unknown one is."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from apps.cognition.api.state_serializers import (
    HomeostasisSerializer, NeuromodulationQuerySerializer, NeuromodulationSerializer, UtlStatusSerializer,
)
from apps.cognition.selectors.state import homeostasis_get, neuromodulation_get, utl_status_get
from apps.cognition.state_answers import homeostasis_answer, neuromodulation_answer, utl_status_answer
from apps.core.api.serializers import error_responses, validated

TAGS = ["cognition"]
SESSION_ID = OpenApiParameter("session_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=TAGS, parameters=[SESSION_ID])
class UtlStatusView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_sessions_utl",
        summary="A session's UTL status",
        description="Its cached entropy, coherence and learning score, lifecycle stage, interactions, Johari "
                    "quadrant, the stage's thresholds and its 20 latest items with the nodes each activated.",
        responses={200: UtlStatusSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, session_id: str):
        return Response(UtlStatusSerializer(utl_status_answer(
            utl_status_get(actor=request.user, session_id=session_id))).data)


@extend_schema(tags=TAGS)
class NeuromodulationView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_neuromodulation",
        summary="Neuromodulator levels and their effects",
        description="Dopamine, serotonin, noradrenaline and acetylcholine from the session's UTL state (your latest "
                    "without session_id; at rest without any), the mode, and what search_graph and inject_context "
                    "rank with now (effects); method gives the formulas.",
        parameters=[NeuromodulationQuerySerializer],
        responses={200: NeuromodulationSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(NeuromodulationQuerySerializer, request.query_params)
        return Response(NeuromodulationSerializer(neuromodulation_answer(
            neuromodulation_get(actor=request.user, session_id=query.get("session_id")))).data)


@extend_schema(tags=TAGS)
class HomeostasisView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_homeostasis",
        summary="Graph health and immune status",
        description="Over the live graph you can read: importance mean and variance, links, quarantined nodes, "
                    "semantic-cancer suspects (important nodes on a directed causal cycle or in an open conflict "
                    "task) and health_score, the mean of the four health_parts.",
        responses={200: HomeostasisSerializer, **error_responses(401, 403)},
    )
    def get(self, request):
        return Response(HomeostasisSerializer(homeostasis_answer(homeostasis_get(actor=request.user))).data)
