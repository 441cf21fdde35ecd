"""Writes of projects: create, update, soft delete, restore and delete for good (from the trash).

A project's name is unique per owner among live projects, ignoring case ("Spawner" and "spawner" are
one project); two users may each have their own "spawner". New projects go in the actor's personal
cube unless a writable ``cube_id`` is given; the project's entities live in the same cube.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import Conflict, InvalidInput, PermissionDenied
from apps.cubes.access import cube_get_writable, cube_ids_writable
from apps.cubes.services import cube_ensure_personal
from apps.projects.models import Decision, Episode, Issue, Project, SharpEdge
from apps.projects.selectors import project_get
from apps.projects.services.nodes import node_delete, node_purge, node_sync
from apps.core.validation import clean_choice
from apps.projects.validation import MAX_PATH_CHARS, clean_list, clean_name, clean_text, parse_project_id

PROJECT_ENTITY_MODELS = (Decision, Issue, SharpEdge, Episode)


def project_get_writable(*, actor: User, project_id, include_deleted: bool = False, lock: bool = False) -> Project:
    """A project the actor may change: not found when unreadable, forbidden when only readable (shared
    read-only). ``lock`` holds its row for the rest of the transaction."""
    project = project_get(actor=actor, project_id=project_id, include_deleted=include_deleted)
    if not Project.objects.filter(pk=project.pk, cube_id__in=cube_ids_writable(actor=actor)).exists():
        raise PermissionDenied("You may read this project but not change it.", extra={"field": "project_id"})
    if lock:
        project = Project.objects.select_for_update(of=("self",)).select_related("cube", "owner").get(pk=project.pk)
    return project


def curator_acts_as_owner(*, actor: User, model, pk) -> User:
    """The admin's curator mode: a staff user with the model's change permission acts on any user's
    project or entity as its owner would (so the node follows through the memory services with the
    owner's access). Granted by the actor's own status and permission, never by the argument itself."""
    if not (actor.is_active and actor.is_staff and actor.has_perm(f"projects.change_{model._meta.model_name}")):
        raise PermissionDenied(f"Curating other users' {model._meta.verbose_name_plural} needs staff status and the "
                               f"'change {model._meta.verbose_name}' permission.")
    owner = User.objects.filter(pk=model.objects.filter(pk=pk).values("owner_id")[:1]).first()
    return owner or actor  # a row that does not exist is "not found" for its owner and curator alike


def _name_taken(*, owner: User, name: str, excluding=None) -> bool:
    queryset = Project.objects.filter(owner=owner, name__iexact=name, deleted_at__isnull=True)
    return queryset.exclude(pk=excluding).exists() if excluding else queryset.exists()


def _name_conflict(name: str) -> Conflict:
    return Conflict(f"You already have a project named {name!r}: choose another name, or use that project.",
                    code="project_name_taken", extra={"field": "name"})


def _save_named(project: Project, **save_kwargs) -> None:
    """Save, turning a lost race on the unique name into the same Conflict as the check before it."""
    try:
        with transaction.atomic():
            project.save(**save_kwargs)
    except IntegrityError as exc:
        if "project_name_unique_per_owner" in str(exc):
            raise _name_conflict(project.name) from exc
        raise


def clean_repo_path(value) -> str:
    return clean_text(value, field="repo_path", max_chars=MAX_PATH_CHARS).rstrip("/") if value else ""


@transaction.atomic
def project_create(*, actor: User, name, cube_id: str | None = None, stack=None, repo_path="", current_goal="",
                   status="active") -> Project:
    name = clean_name(name)
    project = Project(
        owner=actor, name=name, stack=clean_list(stack, field="stack"), repo_path=clean_repo_path(repo_path),
        current_goal=clean_text(current_goal, field="current_goal"),
        status=clean_choice(status, field="status", choices=Project.Status.values),
        cube=cube_get_writable(actor=actor, cube_id=cube_id) if cube_id else cube_ensure_personal(actor=actor),
    )
    if _name_taken(owner=actor, name=name):
        raise _name_conflict(name)
    _save_named(project, force_insert=True)
    return project


@transaction.atomic
def project_update(*, actor: User, project_id, name=None, current_goal=None, blocked_by=None, open_threads=None,
                   add_to_stack=None, stack=None, repo_path=None, status=None) -> Project:
    """Change only the given fields. ``stack`` replaces the stack, ``add_to_stack`` appends to it
    (after ``stack`` when both are given), skipping what is already there. Lists replace lists."""
    project = project_get_writable(actor=actor, project_id=project_id, lock=True)
    if name is not None:
        project.name = clean_name(name)
        if _name_taken(owner=project.owner, name=project.name, excluding=project.pk):
            raise _name_conflict(project.name)
    if current_goal is not None:
        project.current_goal = clean_text(current_goal, field="current_goal")
    if blocked_by is not None:
        project.blocked_by = clean_list(blocked_by, field="blocked_by")
    if open_threads is not None:
        project.open_threads = clean_list(open_threads, field="open_threads")
    if stack is not None:
        project.stack = clean_list(stack, field="stack")
    if add_to_stack is not None:
        project.stack = clean_list(project.stack + clean_list(add_to_stack, field="add_to_stack"), field="stack")
    if repo_path is not None:
        project.repo_path = clean_repo_path(repo_path)
    if status is not None:
        project.status = clean_choice(status, field="status", choices=Project.Status.values)
    _save_named(project)
    return project


def _live_entities(project: Project) -> list:
    """The project's live entities that have a node, for the nodes to follow the project."""
    return [entity for model in PROJECT_ENTITY_MODELS
            for entity in model.objects.filter(project=project, deleted_at__isnull=True, node__isnull=False)]


@transaction.atomic
def project_delete(*, actor: User, project_id, curator: bool = False) -> Project:
    """Soft delete: the project and its entities disappear from every read, and the entities' nodes
    leave the memory graph. The entities themselves keep their own state, so restoring the project
    brings back exactly the entities that were live. ``curator``: see curator_acts_as_owner."""
    if curator:
        actor = curator_acts_as_owner(actor=actor, model=Project, pk=parse_project_id(project_id))
    project = project_get_writable(actor=actor, project_id=project_id, lock=True)
    for entity in _live_entities(project):
        node_delete(actor=actor, entity=entity)
    project.deleted_at = timezone.now()
    project.save(update_fields=["deleted_at", "updated_at"])
    return project


@transaction.atomic
def project_restore(*, actor: User, project_id, curator: bool = False) -> Project:
    if curator:
        actor = curator_acts_as_owner(actor=actor, model=Project, pk=parse_project_id(project_id))
    project = project_get_writable(actor=actor, project_id=project_id, include_deleted=True, lock=True)
    if project.deleted_at is None:
        return project
    if _name_taken(owner=project.owner, name=project.name):
        raise Conflict(f"A live project is already named {project.name!r}: rename or delete it first, then "
                       "restore this one.", code="project_name_taken", extra={"field": "name"})
    project.deleted_at = None
    _save_named(project, update_fields=["deleted_at", "updated_at"])
    for entity in _live_entities(project):
        node_sync(actor=actor, entity=entity)
    return project


@transaction.atomic
def project_purge(*, actor: User, project_id) -> None:
    """Delete a deleted project for good, with its decisions, issues, sharp edges, episodes and sessions, and their
    nodes (vectors and links too). Only from the trash: a live project is deleted (soft) first, so nothing live is
    ever one step from gone."""
    project = project_get_writable(actor=actor, project_id=project_id, include_deleted=True, lock=True)
    if project.deleted_at is None:
        raise InvalidInput("This project is not deleted: delete it first, then delete it for good from the trash.",
                           field="project_id")
    for model in PROJECT_ENTITY_MODELS:
        for entity in model.objects.filter(project=project, node__isnull=False):
            node_purge(actor=actor, entity=entity)
    project.delete()
