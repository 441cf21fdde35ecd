"""Context Graph's reasoning over REST (/api/v1/cognition/causal/..., nodes/<id>/entailment/): the services and
selector the MCP tools call, one per view, answering the tools' own data (apps/cognition/causal_answers.py). Reads
only; a concept that matches none of your nodes is a 404 naming the nearest ones."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from apps.cognition.api.reasoning_serializers import (
    CausalExpandQuerySerializer, CausalExpansionSerializer, CausalPathQuerySerializer, CausalPathSerializer,
    CausalQueryQuerySerializer, CausalQuerySerializer, EntailmentQuerySerializer, EntailmentSerializer,
)
from apps.cognition.causal_answers import (
    causal_expansion_answer, causal_path_answer, causal_query_answer, entailment_answer,
)
from apps.cognition.selectors.entailment import node_entailment
from apps.cognition.services.causal import causal_expand, causal_path_find, causal_query
from apps.core.api.serializers import error_responses, validated

TAGS = ["cognition"]
NODE_ID = OpenApiParameter("node_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=TAGS)
class CausalQueryView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_causal_query",
        summary="Query causal relationships",
        description="Over your causal links (cause -> effect): do (the default) cuts the action's own causes and "
                    "lists its effects, effect_strength = the best product of weights along a path; observe lists "
                    "what goes with it both ways (causes, effects, nodes sharing a cause); counterfactual lists the "
                    "effects that lose all support without it. With outcome, about that node alone.",
        parameters=[CausalQueryQuerySerializer],
        responses={200: CausalQuerySerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(CausalQueryQuerySerializer, request.query_params)
        found = causal_query(actor=request.user, action=query["action"], outcome=query.get("outcome"),
                             intervention_type=query.get("intervention_type"))
        return Response(CausalQuerySerializer(causal_query_answer(found)).data)


@extend_schema(tags=TAGS)
class CausalPathView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_causal_path",
        summary="Find the best path between two concepts",
        description="The path with the highest product of link weights of at most max_hops links (causal links "
                    "only from cause to effect, other links either way; path_type keeps only causal or semantic "
                    "ones), with a narrative; include_alternatives adds the next best loopless paths (Yen).",
        parameters=[CausalPathQuerySerializer],
        responses={200: CausalPathSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(CausalPathQuerySerializer, request.query_params)
        found = causal_path_find(actor=request.user, start_concept=query["start_concept"],
                                 end_concept=query["end_concept"], max_hops=query.get("max_hops"),
                                 path_type=query.get("path_type"), include_alternatives=query["include_alternatives"])
        return Response(CausalPathSerializer(
            causal_path_answer(found, include_alternatives=query["include_alternatives"])).data)


@extend_schema(tags=TAGS)
class CausalExpandView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_causal_expand",
        summary="Expand a concept's causal chains",
        description="Each node reached from the concept along causal links of at least min_weight (effects), "
                    "against them (causes) or both, within max_hops links, with its best chain (cause first, "
                    "strength = the product of its weights); the strongest first.",
        parameters=[CausalExpandQuerySerializer],
        responses={200: CausalExpansionSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request):
        query = validated(CausalExpandQuerySerializer, request.query_params)
        found = causal_expand(actor=request.user, concept=query["concept"], direction=query.get("direction"),
                              max_hops=query.get("max_hops"), min_weight=query["min_weight"])
        return Response(CausalExpansionSerializer(causal_expansion_answer(found)).data)


@extend_schema(tags=TAGS, parameters=[NODE_ID])
class EntailmentView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_nodes_entailment",
        summary="A node's entailment cone",
        description="The closure over hierarchical links (a member -> its summary, a kind -> its genus) up to "
                    "max_depth: ancestors along them, descendants against them; entailment_confidence is the mean "
                    "best path product of weights. No hyperbolic embedding is computed.",
        parameters=[EntailmentQuerySerializer],
        responses={200: EntailmentSerializer, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, node_id: str):
        query = validated(EntailmentQuerySerializer, request.query_params)
        found = node_entailment(actor=request.user, node_id=node_id, direction=query.get("direction"),
                                max_depth=query.get("max_depth"))
        return Response(EntailmentSerializer(entailment_answer(found)).data)
