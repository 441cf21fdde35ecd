"""Reads of Mind: projects, sessions, decisions, issues, sharp edges and episodes.

Every query starts from the cubes the actor may read (a subquery, so an argument can only narrow), and
hides deleted rows unless asked. An entity of a deleted project is hidden with its project. Another
user's project or entity, an unknown id and a malformed one all give the same NotFound.
"""
from __future__ import annotations

from django.db.models import Case, Count, F, Q, QuerySet, Value, When
from django.db.models.functions import Concat, Length

from apps.accounts.models import User
from apps.core.exceptions import NotFound
from apps.cubes.access import cube_ids_readable, cube_ids_writable
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.core.validation import clean_choice
from apps.projects.validation import parse_entity_id, parse_project_id

ENTITY_MODELS = {"decision": Decision, "issue": Issue, "sharp_edge": SharpEdge, "episode": Episode}
ENTITY_LABELS = {"decision": "Decision", "issue": "Issue", "sharp_edge": "Sharp edge", "episode": "Episode"}
ENTITY_ID_FIELDS = {"decision": "decision_id", "issue": "issue_id", "sharp_edge": "edge_id", "episode": "episode_id"}


# Projects

def projects_readable(*, actor: User, include_deleted: bool = False) -> QuerySet[Project]:
    queryset = Project.objects.filter(cube_id__in=cube_ids_readable(actor=actor))
    return queryset if include_deleted else queryset.filter(deleted_at__isnull=True)


def project_get(*, actor: User, project_id, include_deleted: bool = False, field: str = "project_id") -> Project:
    project = (
        projects_readable(actor=actor, include_deleted=include_deleted)
        .select_related("owner", "cube").filter(pk=parse_project_id(project_id, field=field)).first()
    )
    if project is None:
        raise NotFound(f"Project {project_id!r} not found.", code="project_not_found", extra={"field": field})
    return project


def project_get_shown(*, actor: User, project_id) -> Project:
    """A project for its page: a live one the actor may read, or a deleted one they may restore (its page shows it
    read only, with Restore). Anything else, a deleted project of someone else's cube included, is not found."""
    restorable = Q(deleted_at__isnull=True) | Q(cube_id__in=cube_ids_writable(actor=actor))
    project = (projects_readable(actor=actor, include_deleted=True).filter(restorable)
               .select_related("owner", "cube").filter(pk=parse_project_id(project_id)).first())
    if project is None:
        raise NotFound(f"Project {project_id!r} not found.", code="project_not_found", extra={"field": "project_id"})
    return project


def project_find(*, actor: User, name: str | None = None, repo_path: str | None = None) -> Project | None:
    """A live project by name (case-insensitive) or by repository path, or None.

    A path finds the project whose ``repo_path`` is that path or the deepest one containing it, so a
    client working in ``/src/app/lib`` finds the project at ``/src/app``. The actor's own projects come
    before projects shared with them; then the most recently updated."""
    if not name and not repo_path:
        return None
    queryset = projects_readable(actor=actor).alias(foreign=Case(When(owner=actor, then=0), default=1))
    order = [F("foreign").asc()]
    if name:
        queryset = queryset.filter(name__iexact=name.strip())
    if repo_path:
        path = repo_path.strip().rstrip("/") or "/"
        queryset = queryset.exclude(repo_path="").alias(
            asked=Value(path), stored=Length("repo_path"),
        ).filter(Q(repo_path=path) | Q(repo_path=path + "/") | Q(asked__startswith=Concat(F("repo_path"), Value("/"))))
        order.append(F("stored").desc())
    return queryset.order_by(*order, "-updated_at").first()


def project_list(*, actor: User, status: str | None = None, include_deleted: bool = False,
                 only_deleted: bool = False, name_contains: str | None = None) -> QuerySet[Project]:
    """Readable projects, newest activity first, each with ``open_issue_count`` (live issues not resolved
    or won't-fix), in one query; ``name_contains``: only those whose name holds it, in any case."""
    queryset = _only_deleted(projects_readable(actor=actor, include_deleted=include_deleted or only_deleted),
                             only_deleted)
    if name_contains:
        queryset = queryset.filter(name__icontains=name_contains)
    if status is not None:
        queryset = queryset.filter(status=clean_choice(status, field="status", choices=Project.Status.values))
    open_issues = Q(issues__deleted_at__isnull=True) & ~Q(issues__status__in=Issue.CLOSED)
    return queryset.select_related("owner").annotate(open_issue_count=Count("issues", filter=open_issues))


def project_checked(*, actor: User, project_id) -> Project:
    """The project a list is scoped to: ``project_id``, or the Project itself when the caller has read it
    with project_get already (a page showing several lists reads it once). An instance cannot widen
    access: every list also filters on the actor's readable cubes."""
    return project_id if isinstance(project_id, Project) else project_get(actor=actor, project_id=project_id)


# Sessions

def session_list(*, actor: User, project_id) -> QuerySet[Session]:
    """``project_id``: an id or an already-read Project (project_checked)."""
    project = project_checked(actor=actor, project_id=project_id)
    return (Session.objects.filter(project=project, project__cube_id__in=cube_ids_readable(actor=actor))
            .select_related("project"))


def session_get(*, actor: User, session_id) -> Session:
    session = (
        Session.objects.filter(project__in=projects_readable(actor=actor))
        .select_related("project").filter(pk=parse_entity_id(session_id, field="session_id", label="Session")).first()
    )
    if session is None:
        raise NotFound(f"Session {session_id!r} not found.", code="entity_not_found", extra={"field": "session_id"})
    return session


def session_owned(*, actor: User, session: Session | None) -> Session | None:
    """``session`` when it is one of the actor's own (None stays None): the session a write is credited to
    or a read is scoped by. Another user's session is "not found"."""
    if session is not None and session.owner_id != actor.pk:
        raise NotFound("Session not found.", code="entity_not_found", extra={"field": "session_id"})
    return session


# Decisions, issues, sharp edges, episodes

def entities_readable(*, actor: User, kind: str, include_deleted: bool = False) -> QuerySet:
    """The readable entities of one kind. Entities of a deleted project stay hidden even with
    ``include_deleted`` (restore the project first); a global sharp edge has no project to hide it."""
    model = ENTITY_MODELS[clean_choice(kind, field="kind", choices=ENTITY_MODELS)]
    live_project = Q(project__deleted_at__isnull=True)
    if model._meta.get_field("project").null:
        live_project |= Q(project__isnull=True)
    queryset = model.objects.filter(live_project, cube_id__in=cube_ids_readable(actor=actor))
    return queryset if include_deleted else queryset.filter(deleted_at__isnull=True)


def entity_get(*, actor: User, kind: str, entity_id, include_deleted: bool = False):
    field, label = ENTITY_ID_FIELDS.get(kind, "entity_id"), ENTITY_LABELS.get(kind, "Entity")
    entity = (
        entities_readable(actor=actor, kind=kind, include_deleted=include_deleted)
        .select_related("project", "node").filter(pk=parse_entity_id(entity_id, field=field, label=label)).first()
    )
    if entity is None:
        raise NotFound(f"{label} {entity_id!r} not found.", code="entity_not_found", extra={"field": field})
    return entity


def _only_deleted(queryset: QuerySet, only_deleted: bool) -> QuerySet:
    """Lists show live rows, or live and deleted ones (``include_deleted``), or only deleted ones."""
    return queryset.filter(deleted_at__isnull=False) if only_deleted else queryset


def _entity_list(*, actor: User, kind: str, project_id=None, include_deleted: bool = False,
                 only_deleted: bool = False) -> QuerySet:
    queryset = _only_deleted(
        entities_readable(actor=actor, kind=kind, include_deleted=include_deleted or only_deleted), only_deleted,
    ).select_related("project")
    if project_id is not None:
        queryset = queryset.filter(project=project_checked(actor=actor, project_id=project_id))
    return queryset


def decision_list(*, actor: User, project_id=None, status: str | None = None,
                  include_deleted: bool = False, only_deleted: bool = False) -> QuerySet[Decision]:
    queryset = _entity_list(actor=actor, kind="decision", project_id=project_id, include_deleted=include_deleted,
                            only_deleted=only_deleted)
    if status is not None:
        queryset = queryset.filter(status=clean_choice(status, field="status", choices=Decision.Status.values))
    return queryset.select_related("superseded_by")


def issue_list(*, actor: User, project_id=None, status: str | None = None, severity: str | None = None,
               open_only: bool = False, include_deleted: bool = False, only_deleted: bool = False) -> QuerySet[Issue]:
    """``open_only`` keeps issues that are neither resolved nor won't-fix."""
    queryset = _entity_list(actor=actor, kind="issue", project_id=project_id, include_deleted=include_deleted,
                            only_deleted=only_deleted)
    if status is not None:
        queryset = queryset.filter(status=clean_choice(status, field="status", choices=Issue.Status.values))
    if severity is not None:
        queryset = queryset.filter(severity=clean_choice(severity, field="severity", choices=Issue.Severity.values))
    if open_only:
        queryset = queryset.exclude(status__in=Issue.CLOSED)
    return queryset


def edge_list(*, actor: User, project_id=None, include_global: bool = False, global_only: bool = False,
              include_deleted: bool = False, only_deleted: bool = False) -> QuerySet[SharpEdge]:
    """Sharp edges: of one project (plus the readable global ones with ``include_global``), only the
    global ones (``global_only``), or all readable ones."""
    readable = entities_readable(actor=actor, kind="sharp_edge", include_deleted=include_deleted or only_deleted)
    queryset = _only_deleted(readable, only_deleted)
    if global_only:
        queryset = queryset.filter(project__isnull=True)
    elif project_id is not None:
        project = project_checked(actor=actor, project_id=project_id)
        queryset = queryset.filter(Q(project=project) | Q(project__isnull=True)) if include_global \
            else queryset.filter(project=project)
    return queryset.select_related("project")


def episode_list(*, actor: User, project_id=None, include_deleted: bool = False,
                 only_deleted: bool = False) -> QuerySet[Episode]:
    return _entity_list(actor=actor, kind="episode", project_id=project_id, include_deleted=include_deleted,
                        only_deleted=only_deleted).select_related("session")


def decision_get(*, actor: User, decision_id, include_deleted: bool = False) -> Decision:
    return entity_get(actor=actor, kind="decision", entity_id=decision_id, include_deleted=include_deleted)


def issue_get(*, actor: User, issue_id, include_deleted: bool = False) -> Issue:
    return entity_get(actor=actor, kind="issue", entity_id=issue_id, include_deleted=include_deleted)


def edge_get(*, actor: User, edge_id, include_deleted: bool = False) -> SharpEdge:
    return entity_get(actor=actor, kind="sharp_edge", entity_id=edge_id, include_deleted=include_deleted)


def episode_get(*, actor: User, episode_id, include_deleted: bool = False) -> Episode:
    return entity_get(actor=actor, kind="episode", entity_id=episode_id, include_deleted=include_deleted)
