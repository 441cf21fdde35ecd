"""REST views of Mind. Each parses its input, calls one service or selector of apps.projects, and formats
the answer; errors reach the client in the API's one envelope (apps/core/api/errors.py).

Decisions, issues, sharp edges and episodes behave alike (list, get, soft delete, restore; all but episodes
are added and patched here, episodes are written by ending a session), so their views share base classes
configured by an ``EntityEndpoint``.
"""
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from django.db.models import QuerySet
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, OpenApiTypes, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from apps.core.api.serializers import NoBodySerializer, PageQuerySerializer, error_responses, validated
from apps.projects.api.serializers import (
    PROJECT_ALIASES, AttemptSerializer, ContextQuerySerializer, ContextResultSerializer, DecisionAddedSerializer,
    DecisionCreateSerializer, DecisionListQuerySerializer, DecisionSerializer, DecisionUpdateSerializer,
    EdgeCheckResultSerializer, EdgeCheckSerializer, EdgeCreateSerializer, EdgeUpdateSerializer,
    EntityListQuerySerializer, EpisodeSerializer, EpisodeUpdateSerializer, ExportCreatedSerializer,
    ExportCreateSerializer, ExportFileSerializer, IssueCreateSerializer, IssueListQuerySerializer, IssueSerializer,
    IssueUpdateSerializer,
    ProjectCreateSerializer, ProjectListItemSerializer, ProjectListQuerySerializer, ProjectSerializer,
    ProjectUpdateSerializer, SessionSerializer, SharpEdgeSerializer,
)
from apps.projects.selectors import (
    decision_get, decision_list, edge_get, edge_list, episode_get, episode_list, issue_get, issue_list, project_get,
    project_list, session_list,
)
from apps.projects.services import (
    context_get, decision_add, decision_update, edge_add, edge_update, edges_check, entity_delete, entity_restore,
    episode_update, export_list, export_path, issue_add, issue_update, project_create, project_delete, project_export,
    project_restore, project_update,
)

PROJECT_ID = OpenApiParameter("project_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
# Set rather than guessed from the name, so that the answer is the documented type on every host.
EXPORT_CONTENT_TYPES = {".json": "application/json", ".md": "text/markdown"}
EXPORT_NAME = OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH,
                               description="A file name from GET /api/v1/exports/.")


def _paginated(view: generics.GenericAPIView, items, serializer_class) -> Response:
    page = view.paginate_queryset(items)
    return view.get_paginated_response(serializer_class(page, many=True).data)


def _listed(view: generics.GenericAPIView, query: dict, serializer_class, select: Callable[..., QuerySet]) -> Response:
    """A page of what a list selector returns for the query's ``deleted`` choice (exclude, include, only)."""
    rows = select(include_deleted=query["deleted"] == "include", only_deleted=query["deleted"] == "only")
    return _paginated(view, rows, serializer_class)


# --- Projects ------------------------------------------------------------------------------------

@extend_schema(tags=["projects"])
class ProjectListCreateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="projects_list",
        summary="List projects",
        description="The projects of every cube you can read, latest activity first, each with its open issue count.",
        parameters=[ProjectListQuerySerializer],
        responses={200: ProjectListItemSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(ProjectListQuerySerializer, request.query_params)
        return _listed(self, query, ProjectListItemSerializer,
                       partial(project_list, actor=request.user, status=query.get("status")))

    @extend_schema(
        operation_id="projects_create",
        summary="Create a project",
        description="The name is unique among your live projects, ignoring case (409 project_name_taken otherwise).",
        request=ProjectCreateSerializer,
        responses={201: ProjectSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request):
        data = validated(ProjectCreateSerializer, request.data)
        with PROJECT_ALIASES.reported():
            project = project_create(actor=request.user, **PROJECT_ALIASES.arguments(data))
        return Response(ProjectSerializer(project).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["projects"], parameters=[PROJECT_ID])
class ProjectDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="projects_get",
        summary="Get a project",
        description="Soft-deleted projects are returned too, with `deleted_at` set.",
        responses={200: ProjectSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, project_id: str):
        return Response(ProjectSerializer(project_get(actor=request.user, project_id=project_id,
                                                      include_deleted=True)).data)

    @extend_schema(
        operation_id="projects_update",
        summary="Update a project",
        description="Only the fields given change. Lists replace lists; `add_to_stack` appends to the stack.",
        request=ProjectUpdateSerializer,
        responses={200: ProjectSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def patch(self, request, project_id: str):
        changes = validated(ProjectUpdateSerializer, request.data)
        return Response(ProjectSerializer(project_update(actor=request.user, project_id=project_id, **changes)).data)

    @extend_schema(
        operation_id="projects_delete",
        summary="Delete a project",
        description="Soft: the project and its entities leave every list and the memory graph; restorable.",
        responses={204: None, **error_responses(401, 403, 404)},
    )
    def delete(self, request, project_id: str):
        project_delete(actor=request.user, project_id=project_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["projects"], parameters=[PROJECT_ID])
class ProjectRestoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="projects_restore",
        summary="Restore a soft-deleted project",
        description="Brings back the project with the entities that were live when it was deleted. 409 when a "
                    "live project has taken its name meanwhile.",
        request=None,
        responses={200: ProjectSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, project_id: str):
        validated(NoBodySerializer, request.data)
        return Response(ProjectSerializer(project_restore(actor=request.user, project_id=project_id)).data)


@extend_schema(tags=["projects"], parameters=[PROJECT_ID])
class ProjectSessionsView(generics.GenericAPIView):
    @extend_schema(
        operation_id="projects_sessions",
        summary="List a project's sessions",
        description="Newest first; sessions are started and ended by agents (MCP mind_start_session/end_session).",
        parameters=[PageQuerySerializer],
        responses={200: SessionSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, project_id: str):
        validated(PageQuerySerializer, request.query_params)
        return _paginated(self, session_list(actor=request.user, project_id=project_id), SessionSerializer)


@extend_schema(tags=["projects"])
class ContextView(generics.GenericAPIView):
    """A read sent as POST (for a structured body), so a read token may call it."""

    read_only_post = True

    @extend_schema(
        operation_id="projects_context",
        summary="Get relevant context",
        description="POST /api/v1/projects/context/ (a POST, not a GET with ?query=, so the body can carry types "
                    "and a long query; a read token may call it). Finds decisions, issues, sharp edges and "
                    "episodes relevant to `query`, by meaning and by words, ranked with recency, access counts, "
                    "trigger phrases and decay (superseded and resolved ones fade faster). Scoped to `project` "
                    "(with global sharp edges unless `include_global` is false), else all your projects.",
        request=ContextQuerySerializer,
        responses={200: ContextResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(ContextQuerySerializer, request.data)
        with PROJECT_ALIASES.reported():
            result = context_get(actor=request.user, query=data["query"], types=data.get("types"),
                                 project_id=data.get("project"), include_global=data["include_global"],
                                 limit=data["limit"])
        return Response(ContextResultSerializer(result).data)


# --- Decisions, issues, sharp edges, episodes ----------------------------------------------------

@dataclass(frozen=True)
class EntityEndpoint:
    """One entity kind as REST sees it: the service's kind, the path parameter, shapes and reads."""

    kind: str
    id_kwarg: str
    serializer: type[serializers.Serializer]
    get: Callable
    update: Callable | None = None
    update_serializer: type[serializers.Serializer] | None = None

    def fetch(self, request, entity_id: str):
        return self.get(actor=request.user, **{self.id_kwarg: entity_id}, include_deleted=True)


DECISIONS = EntityEndpoint("decision", "decision_id", DecisionSerializer, decision_get, decision_update,
                           DecisionUpdateSerializer)
ISSUES = EntityEndpoint("issue", "issue_id", IssueSerializer, issue_get, issue_update, IssueUpdateSerializer)
EDGES = EntityEndpoint("sharp_edge", "edge_id", SharpEdgeSerializer, edge_get, edge_update, EdgeUpdateSerializer)
EPISODES = EntityEndpoint("episode", "episode_id", EpisodeSerializer, episode_get, episode_update,
                          EpisodeUpdateSerializer)


class EntityDetailView(generics.GenericAPIView):
    endpoint: EntityEndpoint

    def get(self, request, **kwargs):
        return Response(self.endpoint.serializer(self.endpoint.fetch(request, kwargs[self.endpoint.id_kwarg])).data)

    def delete(self, request, **kwargs):
        entity_delete(actor=request.user, kind=self.endpoint.kind, entity_id=kwargs[self.endpoint.id_kwarg])
        return Response(status=status.HTTP_204_NO_CONTENT)


class EntityUpdateMixin:
    endpoint: EntityEndpoint

    def patch(self, request, **kwargs):
        changes = validated(self.endpoint.update_serializer, request.data)
        entity = self.endpoint.update(actor=request.user, **{self.endpoint.id_kwarg: kwargs[self.endpoint.id_kwarg]},
                                      **changes)
        return Response(self.endpoint.serializer(entity).data)


class EntityRestoreView(generics.GenericAPIView):
    endpoint: EntityEndpoint

    def post(self, request, **kwargs):
        validated(NoBodySerializer, request.data)
        entity = entity_restore(actor=request.user, kind=self.endpoint.kind, entity_id=kwargs[self.endpoint.id_kwarg])
        return Response(self.endpoint.serializer(entity).data)


def entity_schema(endpoint: EntityEndpoint, *, tag: str, label: str, update: str = "") -> Callable:
    """The OpenAPI operations of one kind's detail (get, patch, delete) and restore views."""
    path = OpenApiParameter(endpoint.id_kwarg, OpenApiTypes.UUID, OpenApiParameter.PATH)
    operations = {
        "get": extend_schema(
            operation_id=f"{tag}_get", summary=f"Get {label}", parameters=[path],
            description="Soft-deleted ones are returned too, with `deleted_at` set.",
            responses={200: endpoint.serializer, **error_responses(401, 403, 404)},
        ),
        "delete": extend_schema(
            operation_id=f"{tag}_delete", summary=f"Delete {label}", parameters=[path],
            description="Soft: hidden from lists and context, its memory-graph node too; restorable.",
            responses={204: None, **error_responses(401, 403, 404)},
        ),
        "post": extend_schema(
            operation_id=f"{tag}_restore", summary=f"Restore {label}", parameters=[path], request=None,
            responses={200: endpoint.serializer, **error_responses(400, 401, 403, 404)},
        ),
    }
    if endpoint.update is not None:
        operations["patch"] = extend_schema(
            operation_id=f"{tag}_update", summary=f"Update {label}", parameters=[path], description=update,
            request=endpoint.update_serializer,
            responses={200: endpoint.serializer, **error_responses(400, 401, 403, 404)},
        )

    def decorate(view):
        methods = {name: schema for name, schema in operations.items() if hasattr(view, name)}
        return extend_schema(tags=[tag])(extend_schema_view(**methods)(view))

    return decorate


@entity_schema(DECISIONS, tag="decisions", label="a decision",
               update="Only the fields given change; a new text re-embeds the decision's node.")
class DecisionDetailView(EntityUpdateMixin, EntityDetailView):
    endpoint = DECISIONS


@entity_schema(DECISIONS, tag="decisions", label="a decision")
class DecisionRestoreView(EntityRestoreView):
    endpoint = DECISIONS


@entity_schema(ISSUES, tag="issues", label="an issue",
               update="Only the fields given change. Resolving sets `resolved_at`. Attempts are added with "
                      "POST /api/v1/issues/{issue_id}/attempts/.")
class IssueDetailView(EntityUpdateMixin, EntityDetailView):
    endpoint = ISSUES


@entity_schema(ISSUES, tag="issues", label="an issue")
class IssueRestoreView(EntityRestoreView):
    endpoint = ISSUES


@entity_schema(EDGES, tag="sharp_edges", label="a sharp edge",
               update="Only the fields given change; `detection_patterns` replaces the list, each pattern "
                      "validated (code regexes must compile).")
class EdgeDetailView(EntityUpdateMixin, EntityDetailView):
    endpoint = EDGES


@entity_schema(EDGES, tag="sharp_edges", label="a sharp edge")
class EdgeRestoreView(EntityRestoreView):
    endpoint = EDGES


@entity_schema(EPISODES, tag="episodes", label="an episode",
               update="Only the fields given change; a new text re-embeds the episode's node. Episodes are "
                      "written when a significant session ends; people curate them here.")
class EpisodeDetailView(EntityUpdateMixin, EntityDetailView):
    endpoint = EPISODES


@entity_schema(EPISODES, tag="episodes", label="an episode")
class EpisodeRestoreView(EntityRestoreView):
    endpoint = EPISODES


def list_schema(tag: str, plural: str, query: type[serializers.Serializer], serializer,
                note: str = "") -> extend_schema:
    return extend_schema(
        operation_id=f"{tag}_list", summary=f"List {plural}",
        description=f"The {plural} of every project you can read, newest first. {note}".strip(),
        parameters=[query], responses={200: serializer(many=True), **error_responses(400, 401, 403, 404)},
    )


@extend_schema(tags=["decisions"])
class DecisionListCreateView(generics.GenericAPIView):
    @list_schema("decisions", "decisions", DecisionListQuerySerializer, DecisionSerializer)
    def get(self, request):
        query = validated(DecisionListQuerySerializer, request.query_params)
        with PROJECT_ALIASES.reported():
            return _listed(self, query, DecisionSerializer, partial(
                decision_list, actor=request.user, project_id=query.get("project"), status=query.get("status")))

    @extend_schema(
        operation_id="decisions_create",
        summary="Record a decision",
        description="An active decision of the same project that this one replaces is marked superseded and "
                    "returned as `superseded`.",
        request=DecisionCreateSerializer,
        responses={201: DecisionAddedSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(DecisionCreateSerializer, request.data)
        with PROJECT_ALIASES.reported():
            added = decision_add(actor=request.user, **PROJECT_ALIASES.arguments(data))
        return Response(DecisionAddedSerializer(added).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["issues"])
class IssueListCreateView(generics.GenericAPIView):
    @list_schema("issues", "issues", IssueListQuerySerializer, IssueSerializer)
    def get(self, request):
        query = validated(IssueListQuerySerializer, request.query_params)
        with PROJECT_ALIASES.reported():
            return _listed(self, query, IssueSerializer, partial(
                issue_list, actor=request.user, project_id=query.get("project"), status=query.get("status"),
                severity=query.get("severity")))

    @extend_schema(
        operation_id="issues_create",
        summary="Open an issue",
        request=IssueCreateSerializer,
        responses={201: IssueSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(IssueCreateSerializer, request.data)
        with PROJECT_ALIASES.reported():
            issue = issue_add(actor=request.user, **PROJECT_ALIASES.arguments(data))
        return Response(IssueSerializer(issue).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["issues"], parameters=[OpenApiParameter("issue_id", OpenApiTypes.UUID, OpenApiParameter.PATH)])
class IssueAttemptsView(generics.GenericAPIView):
    @extend_schema(
        operation_id="issues_add_attempt",
        summary="Record an attempt at an issue",
        description="Appended to the issue's `attempts` with the time; earlier attempts are never lost.",
        request=AttemptSerializer,
        responses={201: IssueSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, issue_id: str):
        attempt = validated(AttemptSerializer, request.data)
        issue = issue_update(actor=request.user, issue_id=issue_id, add_attempt=attempt)
        return Response(IssueSerializer(issue).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["sharp_edges"])
class EdgeListCreateView(generics.GenericAPIView):
    @list_schema("sharp_edges", "sharp edges", EntityListQuerySerializer, SharpEdgeSerializer,
                 note="Global edges (no project) are listed too, unless `project` picks one project's own edges.")
    def get(self, request):
        query = validated(EntityListQuerySerializer, request.query_params)
        with PROJECT_ALIASES.reported():
            return _listed(self, query, SharpEdgeSerializer,
                           partial(edge_list, actor=request.user, project_id=query.get("project")))

    @extend_schema(
        operation_id="sharp_edges_create",
        summary="Register a sharp edge",
        description="Without `project` the edge is global: checked for every project of yours. Code patterns "
                    "must compile; a bad one is refused naming it (`detection_patterns[2].pattern`).",
        request=EdgeCreateSerializer,
        responses={201: SharpEdgeSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(EdgeCreateSerializer, request.data)
        with PROJECT_ALIASES.reported():
            edge = edge_add(actor=request.user, **PROJECT_ALIASES.arguments(data))
        return Response(SharpEdgeSerializer(edge).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["sharp_edges"])
class EdgeCheckView(generics.GenericAPIView):
    """A read sent as POST (for a structured body), so a read token may call it."""

    read_only_post = True

    @extend_schema(
        operation_id="sharp_edges_check",
        summary="Check code or intent for sharp edges",
        description="Code patterns (regexes, optionally limited by a file glob) and intent patterns warn with "
                    "severity high, context patterns and symptoms with medium. Without `project`, every edge you "
                    "can read is checked. REST checks have no session, so nothing is suppressed as already warned.",
        request=EdgeCheckSerializer,
        responses={200: EdgeCheckResultSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(EdgeCheckSerializer, request.data)
        with PROJECT_ALIASES.reported():
            warnings = edges_check(actor=request.user, code=data.get("code"), intent=data.get("intent"),
                                   context=data.get("context"), project_id=data.get("project"))
        return Response(EdgeCheckResultSerializer({"warnings": warnings}).data)


@extend_schema(tags=["episodes"])
class EpisodeListView(generics.GenericAPIView):
    @list_schema("episodes", "episodes", EntityListQuerySerializer, EpisodeSerializer)
    def get(self, request):
        query = validated(EntityListQuerySerializer, request.query_params)
        with PROJECT_ALIASES.reported():
            return _listed(self, query, EpisodeSerializer,
                           partial(episode_list, actor=request.user, project_id=query.get("project")))


# --- Exports -------------------------------------------------------------------------------------

def _download_url(name: str) -> str:
    return reverse("projects_api:export-download", kwargs={"name": name})


@extend_schema(tags=["exports"])
class ExportListCreateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="exports_list",
        summary="List your exports",
        description="Your export files, newest first.",
        parameters=[PageQuerySerializer],
        responses={200: ExportFileSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        validated(PageQuerySerializer, request.query_params)
        files = [{**item, "download_url": _download_url(item["name"])} for item in export_list(actor=request.user)]
        return _paginated(self, files, ExportFileSerializer)

    @extend_schema(
        operation_id="exports_create",
        summary="Export your Mind data",
        description="Writes a JSON or Markdown file of one project (or all of yours) to your export folder; "
                    "download it from `download_url`.",
        request=ExportCreateSerializer,
        responses={201: ExportCreatedSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(ExportCreateSerializer, request.data)
        with PROJECT_ALIASES.reported():
            result = project_export(actor=request.user, format=data["format"], project_id=data.get("project"),
                                    include_sessions=data["include_sessions"])
        return Response(ExportCreatedSerializer({
            "name": result.path.name, "path": str(result.path), "download_url": _download_url(result.path.name),
            "entities": result.entities,
        }).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["exports"], parameters=[EXPORT_NAME])
class ExportDownloadView(generics.GenericAPIView):
    @extend_schema(
        operation_id="exports_download",
        summary="Download an export",
        description="The file as an attachment: JSON for a .json export, Markdown for a .md one. Only your own "
                    "exports; any other name is 404.",
        responses={(200, EXPORT_CONTENT_TYPES[".json"]): OpenApiResponse(OpenApiTypes.OBJECT),
                   (200, EXPORT_CONTENT_TYPES[".md"]): OpenApiResponse(OpenApiTypes.STR),
                   **error_responses(401, 403, 404)},
    )
    def get(self, request, name: str):
        path = export_path(actor=request.user, name=name)
        return FileResponse(path.open("rb"), as_attachment=True, filename=path.name,
                            content_type=EXPORT_CONTENT_TYPES[path.suffix])
