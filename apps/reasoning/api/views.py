"""REST views of reasoning. Each parses its input, calls one service or selector of apps.reasoning, and formats
the answer; errors reach the client in the API's one envelope (apps/core/api/errors.py): an unreachable
language model, or a server that cannot run notebook cells, is a 503.

The eight analyses share one view class, configured per tool by an ``Analysis`` row: its request serializer
and its service; REASONING_ALIASES (serializers.py) maps the REST names onto the service's arguments.
"""
from collections.abc import Callable
from dataclasses import dataclass

from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.core.api.serializers import NoBodySerializer, error_responses, validated
from apps.reasoning import mental_models, selectors
from apps.reasoning.api import serializers as s
from apps.reasoning.services import analysis, cell_runs, notebooks, thoughts

SESSION_ID = OpenApiParameter("session_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
NOTEBOOK_ID = OpenApiParameter("notebook_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
CELL_ID = OpenApiParameter("cell_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
MODEL_NAME = OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH,
                              description="A mental model's name, e.g. first-principles.")
OBJECT = OpenApiTypes.OBJECT  # shapes a seed defines, described by each operation


def rest_client_key(request) -> str:
    """Whose current thought session a REST thought without session_id continues: the token's, or the signed-in
    browser's. Kept apart from MCP clients, whose keys name their token and MCP session."""
    return f"rest-token-{request.auth.pk}" if request.auth is not None else f"rest-user-{request.user.pk}"


# --- Thought sessions ----------------------------------------------------------------------------

def _counted(session):
    """A session as the list shows it, with its number of thoughts (a single session is not annotated)."""
    session.thought_count = session.thoughts.count()
    return session


@extend_schema(tags=["reasoning"])
class ThoughtSessionListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_sessions_list",
        summary="List your thought sessions",
        description="Latest activity first, each with its number of thoughts; `q` matches words of the title, "
                    "`tag` one tag.",
        parameters=[s.SessionListQuerySerializer],
        responses={200: s.ThoughtSessionSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(s.SessionListQuerySerializer, request.query_params)
        rows = selectors.session_list(actor=request.user, query=query.get("q"), tag=query.get("tag"),
                                      include_deleted=query["deleted"] == "include")
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(s.ThoughtSessionSerializer(page, many=True).data)


@extend_schema(tags=["reasoning"], parameters=[SESSION_ID])
class ThoughtSessionDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_sessions_get",
        summary="Get a thought session with its thoughts",
        description="Thoughts in the order they were recorded, with their hash-chain fields. Soft-deleted "
                    "sessions are returned too, with `deleted_at` set.",
        responses={200: s.ThoughtSessionDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, session_id: str):
        session = selectors.session_get(actor=request.user, session_id=session_id, include_deleted=True)
        chain = selectors.thoughts_of(session)
        session.thought_count = len(chain)
        return Response(s.ThoughtSessionDetailSerializer({"session": session, "thoughts": chain}).data)

    @extend_schema(
        operation_id="reasoning_sessions_delete",
        summary="Delete a thought session",
        description="A soft delete, with the thoughts' memory-graph nodes: POST .../restore/ brings all back.",
        responses={204: None, **error_responses(401, 403, 404)},
    )
    def delete(self, request, session_id: str):
        thoughts.session_delete(actor=request.user, session_id=session_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["reasoning"], parameters=[SESSION_ID])
class ThoughtSessionRestoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_sessions_restore",
        summary="Restore a deleted thought session",
        request=NoBodySerializer,
        responses={200: s.ThoughtSessionSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, session_id: str):
        validated(NoBodySerializer, request.data)
        session = thoughts.session_restore(actor=request.user, session_id=session_id)
        return Response(s.ThoughtSessionSerializer(_counted(session)).data)


@extend_schema(tags=["reasoning"], parameters=[SESSION_ID])
class ThoughtSessionExportView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_sessions_export",
        summary="Export a thought session",
        description="Thoughtbox's Session Export Format: the session and its thoughts as a linked list with "
                    "branches (`next` holds every child), revisions (`revisesNode`), and an `integrity` report of "
                    "the hash chain.",
        responses={200: OBJECT, **error_responses(401, 403, 404)},
    )
    def get(self, request, session_id: str):
        return Response(thoughts.session_export(actor=request.user, session_id=session_id))


@extend_schema(tags=["reasoning"], parameters=[SESSION_ID])
class ThoughtSessionVerifyView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_sessions_verify",
        summary="Verify a thought session's hash chain",
        description="Recomputes every thought's SHA-256 and parent link; `broken` lists each thought whose text, "
                    "number, parent or hash was changed after it was recorded.",
        responses={200: s.ChainVerificationSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, session_id: str):
        result = thoughts.chain_verify(actor=request.user, session_id=session_id)
        return Response({"valid": result.valid, "checked": result.checked, "broken": result.broken})


@extend_schema(tags=["reasoning"])
class ThoughtCreateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_thoughts_add",
        summary="Add a thought",
        description="Thoughtbox's `thoughtbox` tool over REST. Revisions and branches must name thoughts that "
                    "exist in the session (404 thought_not_found otherwise).",
        request=s.ThoughtCreateSerializer,
        responses={201: s.ThoughtAddedSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(s.ThoughtCreateSerializer, request.data)
        added = thoughts.thought_add(actor=request.user, client_key=rest_client_key(request), **data)
        added.session.thought_count = added.history_length  # every thought of the session, this one included
        body = {"session": added.session, "thought": added.thought, "session_created": added.session_created,
                "history_length": added.history_length, "branches": added.branches, "is_final": added.is_final}
        return Response(s.ThoughtAddedSerializer(body).data, status=status.HTTP_201_CREATED)


# --- Notebooks -----------------------------------------------------------------------------------

def _notebook_detail(actor, notebook_id) -> dict:
    notebook = notebooks.notebook_get(actor=actor, notebook_id=notebook_id)
    cells = notebooks.cells_of(notebook)
    notebook.cell_count = len(cells)  # the list annotates it; a single notebook counts the cells it shows
    return s.NotebookDetailSerializer({"notebook": notebook, "cells": cells}).data


@extend_schema(tags=["reasoning"])
class NotebookListCreateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_notebooks_list",
        summary="List your notebooks",
        description="Latest change first, each with its number of cells.",
        parameters=[s.DeletedQuerySerializer],
        responses={200: s.NotebookSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(s.DeletedQuerySerializer, request.query_params)
        rows = notebooks.notebook_list(actor=request.user, include_deleted=query["deleted"] == "include")
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(s.NotebookSerializer(page, many=True).data)

    @extend_schema(
        operation_id="reasoning_notebooks_create",
        summary="Create a notebook",
        description="JavaScript or TypeScript; a template fills in starting cells.",
        request=s.NotebookCreateSerializer,
        responses={201: s.NotebookDetailSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        notebook = notebooks.notebook_create(actor=request.user, **validated(s.NotebookCreateSerializer, request.data))
        return Response(_notebook_detail(request.user, notebook.pk), status=status.HTTP_201_CREATED)


@extend_schema(tags=["reasoning"])
class NotebookLoadView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_notebooks_load",
        summary="Load a notebook from .src.md",
        description="Creates a new notebook from a .src.md text (what the export operation writes).",
        request=s.NotebookLoadSerializer,
        responses={201: s.NotebookDetailSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        notebook = notebooks.notebook_load(actor=request.user, **validated(s.NotebookLoadSerializer, request.data))
        return Response(_notebook_detail(request.user, notebook.pk), status=status.HTTP_201_CREATED)


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID])
class NotebookDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_notebooks_get",
        summary="Get a notebook with its cells",
        description="Each code cell carries its last run: status, stdout, stderr, exit code, duration.",
        responses={200: s.NotebookDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, notebook_id: str):
        return Response(_notebook_detail(request.user, notebook_id))

    @extend_schema(
        operation_id="reasoning_notebooks_delete",
        summary="Delete a notebook",
        description="A soft delete: POST .../restore/ brings it back.",
        responses={204: None, **error_responses(401, 403, 404)},
    )
    def delete(self, request, notebook_id: str):
        notebooks.notebook_delete(actor=request.user, notebook_id=notebook_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID])
class NotebookRestoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_notebooks_restore",
        summary="Restore a deleted notebook",
        request=NoBodySerializer,
        responses={200: s.NotebookDetailSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, notebook_id: str):
        validated(NoBodySerializer, request.data)
        notebooks.notebook_restore(actor=request.user, notebook_id=notebook_id)
        return Response(_notebook_detail(request.user, notebook_id))


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID])
class NotebookExportView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_notebooks_export",
        summary="Export a notebook as .src.md",
        responses={200: s.NotebookExportSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, notebook_id: str):
        exported = notebooks.notebook_export(actor=request.user, notebook_id=notebook_id)
        notebook = notebooks.notebook_get(actor=request.user, notebook_id=notebook_id)
        return Response({"filename": f"{notebook.pk}.src.md", "text": exported.text})


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID])
class NotebookDependenciesView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_notebooks_install_deps",
        summary="Install npm dependencies",
        description="Runs npm install (install scripts disabled) in the notebook's folder. 403 execution_disabled "
                    "when the server does not run notebook code (ENGRAM_NOTEBOOK_EXECUTION).",
        request=s.DependenciesSerializer,
        responses={200: s.NotebookDetailSerializer, **error_responses(400, 401, 403, 404, 409, 503)},
    )
    def post(self, request, notebook_id: str):
        data = validated(s.DependenciesSerializer, request.data)
        notebooks.notebook_install_deps(actor=request.user, notebook_id=notebook_id, **data)
        return Response(_notebook_detail(request.user, notebook_id))


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID])
class CellListCreateView(generics.GenericAPIView):
    pagination_class = None  # a notebook holds at most MAX_CELLS (500): its cells come whole, in order
    @extend_schema(
        operation_id="reasoning_cells_list",
        summary="List a notebook's cells",
        responses={200: s.CellSerializer(many=True), **error_responses(401, 403, 404)},
    )
    def get(self, request, notebook_id: str):
        return Response(s.CellSerializer(notebooks.cell_list(actor=request.user, notebook_id=notebook_id),
                                         many=True).data)

    @extend_schema(
        operation_id="reasoning_cells_add",
        summary="Add a cell",
        description="Code cells need a filename (its extension matches the notebook's language); other cells "
                    "can import it by that name.",
        request=s.CellCreateSerializer,
        responses={201: s.CellSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, notebook_id: str):
        data = validated(s.CellCreateSerializer, request.data)
        cell = notebooks.cell_add(actor=request.user, notebook_id=notebook_id, **data)
        return Response(s.CellSerializer(cell).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID, CELL_ID])
class CellDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_cells_get",
        summary="Get a cell",
        responses={200: s.CellSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, notebook_id: str, cell_id: str):
        return Response(s.CellSerializer(notebooks.cell_get(actor=request.user, notebook_id=notebook_id,
                                                            cell_id=cell_id)).data)

    @extend_schema(
        operation_id="reasoning_cells_update",
        summary="Update a cell",
        request=s.CellUpdateSerializer,
        responses={200: s.CellSerializer, **error_responses(400, 401, 403, 404)},
    )
    def patch(self, request, notebook_id: str, cell_id: str):
        data = validated(s.CellUpdateSerializer, request.data)
        cell = notebooks.cell_update(actor=request.user, notebook_id=notebook_id, cell_id=cell_id, **data)
        return Response(s.CellSerializer(cell).data)


@extend_schema(tags=["reasoning"], parameters=[NOTEBOOK_ID, CELL_ID])
class CellRunView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_cells_run",
        summary="Run a code cell",
        description="Runs the cell with node in the notebook's folder, under a timeout and memory limit and "
                    "without network where the host allows it. A cell whose code fails is still a 200, with "
                    "status failed and its stderr. 403 execution_disabled when the server does not run notebook "
                    "code (ENGRAM_NOTEBOOK_EXECUTION); 409 cell_running while the cell is already running (a "
                    "run started from the dashboard, whose id is in details.run_id); 503 execution_failed when it "
                    "cannot (node or esbuild missing).",
        request=NoBodySerializer,
        responses={200: s.CellSerializer, **error_responses(400, 401, 403, 404, 409, 503)},
    )
    def post(self, request, notebook_id: str, cell_id: str):
        validated(NoBodySerializer, request.data)
        cell = cell_runs.cell_run(actor=request.user, notebook_id=notebook_id, cell_id=cell_id)
        return Response(s.CellSerializer(cell).data)


# --- Mental models -------------------------------------------------------------------------------

@extend_schema(tags=["reasoning"])
class MentalModelListView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_models_list",
        summary="List mental models",
        description="Thoughtbox's fifteen reasoning frameworks, optionally those with one tag.",
        parameters=[s.ModelListQuerySerializer],
        responses={200: OBJECT, **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(s.ModelListQuerySerializer, request.query_params)
        return Response({"models": [model.as_dict() for model in mental_models.models_list(tag=query.get("tag"))]})


@extend_schema(tags=["reasoning"])
class MentalModelTagsView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_models_tags",
        summary="List mental model tags",
        responses={200: OBJECT, **error_responses(401, 403)},
    )
    def get(self, request):
        return Response({"tags": [{"name": name, "description": text} for name, text in mental_models.TAGS.items()]})


@extend_schema(tags=["reasoning"])
class CapabilityGraphView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_models_capability_graph",
        summary="Get the mental models' capability graph",
        description="Models and tags as entities with their relations, ready to load into a knowledge graph.",
        responses={200: OBJECT, **error_responses(401, 403)},
    )
    def get(self, request):
        return Response(mental_models.capability_graph())


@extend_schema(tags=["reasoning"], parameters=[MODEL_NAME])
class MentalModelDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="reasoning_models_get",
        summary="Get a mental model",
        description="What it is, when to use it, its steps, a worked example and its pitfalls, plus the same as "
                    "markdown (`markdown`), ready to hand to an agent.",
        responses={200: OBJECT, **error_responses(401, 403, 404)},
    )
    def get(self, request, name: str):
        model = mental_models.model_get(name)
        return Response({**model.as_dict(), "markdown": model.as_markdown()})


# --- Analyses ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Analysis:
    """One analysis endpoint: its path, request and service."""

    path: str
    summary: str
    description: str
    request: type
    service: Callable[..., dict]


ANALYSES = (
    Analysis("think", "Reason about a problem",
             "ThoughtMCP's think: one mode (analytical, creative, critical, synthetic) or all four in parallel.",
             s.ThinkSerializer, analysis.reasoning_think),
    Analysis("analyze-systematically", "Analyse with a thinking framework",
             "ThoughtMCP's analyze_systematically: selects one of eight frameworks from the problem (or uses "
             "`preferred_framework`) and applies its steps.",
             s.AnalyzeSystematicallySerializer, analysis.reasoning_analyze_systematically),
    Analysis("think-parallel", "Reason in four parallel streams",
             "ThoughtMCP's think_parallel: analytical, creative, critical and synthetic streams under one timeout "
             "(milliseconds), synthesised with their sources and conflicts kept.",
             s.ThinkParallelSerializer, analysis.reasoning_think_parallel),
    Analysis("decompose", "Decompose a problem",
             "ThoughtMCP's decompose_problem: sub-problems to `max_depth`, their dependencies, and an execution "
             "order that respects them.",
             s.DecomposeSerializer, analysis.reasoning_decompose),
    Analysis("assess-confidence", "Assess confidence in reasoning",
             "ThoughtMCP's assess_confidence: evidence quality, coherence, completeness, uncertainty and freedom "
             "from bias, with warnings and recommendations.",
             s.AssessConfidenceSerializer, analysis.reasoning_assess_confidence),
    Analysis("detect-bias", "Detect cognitive biases",
             "ThoughtMCP's detect_bias: the eight bias types with the evidence found and a correction for each.",
             s.DetectBiasSerializer, analysis.reasoning_detect_bias),
    Analysis("detect-emotion", "Detect emotion",
             "ThoughtMCP's detect_emotion: valence, arousal and dominance, and the eleven discrete emotions.",
             s.DetectEmotionSerializer, analysis.reasoning_detect_emotion),
    Analysis("analyze-reasoning", "Analyse reasoning quality",
             "ThoughtMCP's analyze_reasoning: coherence, completeness, logical validity and evidence support, "
             "with strengths, weaknesses and optional confidence, bias and emotion reports.",
             s.AnalyzeReasoningSerializer, analysis.reasoning_analyze),
)
ANALYSIS_NOTE = (" The answer is ThoughtMCP's own data object (camelCase), plus `method` (llm, sampling or "
                 "deterministic: which one ran) and `memories` (your memories, decisions and sharp edges used as "
                 "evidence). 503 llm_unavailable when the configured language model cannot be reached.")


def analysis_view(spec: Analysis) -> type[generics.GenericAPIView]:
    @extend_schema(tags=["reasoning"])
    class AnalysisView(generics.GenericAPIView):
        @extend_schema(operation_id=f"reasoning_{spec.path.replace('-', '_')}", summary=spec.summary,
                       description=spec.description + ANALYSIS_NOTE, request=spec.request,
                       responses={200: OBJECT, **error_responses(400, 401, 403, 503)})
        def post(self, request):
            data = validated(spec.request, request.data)
            with s.REASONING_ALIASES.reported():
                return Response(spec.service(actor=request.user, **s.REASONING_ALIASES.arguments(data)))

    AnalysisView.__name__ = AnalysisView.__qualname__ = f"{spec.path.title().replace('-', '')}View"
    return AnalysisView
