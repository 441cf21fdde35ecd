"""Context Graph's planning and benchmarks over REST (/api/v1/cognition/plans/, reflect/, retrieval/compare/,
benchmarks/): the services the MCP tools call, one per view, answering the tools' own data
(apps/cognition/planning_answers.py). A benchmark run that outlasts its inline budget answers status running; poll
benchmarks/<run_id>/. Another user's session or run is not found, as an unknown one is."""
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics
from rest_framework.response import Response

from apps.cognition.api.planning_serializers import (
    BenchmarkRequestSerializer, BenchmarkRunSerializer, CompareRequestSerializer, ComparisonSerializer,
    ReflectionSerializer, ReflectRequestSerializer, SearchPlanRequestSerializer, SearchPlanSerializer,
)
from apps.cognition.planning_answers import benchmark_answer, comparison_answer, plan_answer, reflection_answer
from apps.cognition.selectors.benchmarks import benchmark_run_get
from apps.cognition.services.benchmark import recall_test_start, retrieval_compare
from apps.cognition.services.plan import search_plan_generate
from apps.cognition.services.reflect import memory_reflect
from apps.core.api.serializers import error_responses, validated

TAGS = ["cognition"]
RUN_ID = OpenApiParameter("run_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


def _ids(values):
    return [str(value) for value in values] if values is not None else None


@extend_schema(tags=TAGS)
class SearchPlanView(generics.GenericAPIView):
    read_only_post = True  # a read sent as POST (a structured body): a read token may call it

    @extend_schema(
        operation_id="cognition_search_plan",
        summary="Plan queries for a goal",
        description="generate_search_plan: one query per perspective, from the goal's words and those your graph "
                    "uses near it; expected_recall is the measured share of the goal's own best nodes each query "
                    "retrieves. Nothing is written.",
        request=SearchPlanRequestSerializer,
        responses={200: SearchPlanSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        data = validated(SearchPlanRequestSerializer, request.data)
        plan = search_plan_generate(actor=request.user, goal=data["goal"], query_types=data.get("query_types"),
                                    max_queries=data.get("max_queries"))
        return Response(SearchPlanSerializer(plan_answer(plan)).data)


@extend_schema(tags=TAGS)
class ReflectView(generics.GenericAPIView):
    read_only_post = True

    @extend_schema(
        operation_id="cognition_reflect",
        summary="Next steps toward a goal",
        description="reflect_on_memory: steps from the session's state (coherence below 0.4: trigger_dream; entropy "
                    "above 0.6: epistemic_action) and from the goal, each with its tool, arguments and why.",
        request=ReflectRequestSerializer,
        responses={200: ReflectionSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(ReflectRequestSerializer, request.data)
        session_id = data.get("session_id")
        reflection = memory_reflect(actor=request.user, goal=data["goal"],
                                    session_id=str(session_id) if session_id else None,
                                    max_steps=data.get("max_steps"))
        return Response(ReflectionSerializer(reflection_answer(reflection)).data)


@extend_schema(tags=TAGS)
class CompareView(generics.GenericAPIView):
    read_only_post = True

    @extend_schema(
        operation_id="cognition_retrieval_compare",
        summary="Compare retrieval methods on one query",
        description="debug_compare_retrieval: dense cosine, fused retrieval, spreading activation over links and "
                    "hierarchy expansion side by side on your graph, with latency, overlap and, against "
                    "ground_truth_node_ids, precision and recall.",
        request=CompareRequestSerializer,
        responses={200: ComparisonSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(CompareRequestSerializer, request.data)
        comparison = retrieval_compare(actor=request.user, query=data["query"], top_k=data.get("top_k"),
                                       methods=data.get("methods"),
                                       ground_truth_node_ids=_ids(data.get("ground_truth_node_ids")))
        return Response(ComparisonSerializer(comparison_answer(comparison)).data)


@extend_schema(tags=TAGS)
class BenchmarkStartView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_benchmarks_start",
        summary="Run a recall benchmark",
        description="test_recall_accuracy: seeded needles and a haystack stored in a hidden cube of yours (deleted "
                    "when the run ends), found again from paraphrases by fused retrieval and by dense cosine. A run "
                    "that outlasts the call's budget answers status running with its progress: poll "
                    "benchmarks/<run_id>/. One run at a time (409 while one runs).",
        request=BenchmarkRequestSerializer,
        responses={200: BenchmarkRunSerializer, **error_responses(400, 401, 403, 409)},
    )
    def post(self, request):
        data = validated(BenchmarkRequestSerializer, request.data)
        run = recall_test_start(actor=request.user, test_type=data.get("test_type"),
                                needle_count=data.get("needle_count"), haystack_size=data.get("haystack_size"),
                                baseline_model=data.get("baseline_model"), seed=data.get("seed"))
        return Response(BenchmarkRunSerializer(benchmark_answer(run)).data)


@extend_schema(tags=TAGS, parameters=[RUN_ID])
class BenchmarkDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="cognition_benchmarks_detail",
        summary="A recall benchmark's status",
        description="The run's status and progress (phase, items stored, queries answered) and, once completed, "
                    "its figures.",
        responses={200: BenchmarkRunSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, run_id: str):
        return Response(BenchmarkRunSerializer(benchmark_answer(benchmark_run_get(actor=request.user,
                                                                                  run_id=run_id))).data)
