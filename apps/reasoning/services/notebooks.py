"""Thoughtbox's notebooks: literate documents of markdown and code cells, whose code runs with node in the
notebook's own directory (apps/reasoning/sandbox.py has the limits and what each one really enforces).

All ten operations of the seed's ``notebook`` tool land here but run_cell (services/cell_runs.py, where a run
has an id and may run in the background): create, list, load, add_cell, update_cell, install_deps, list_cells,
get_cell, export; plus soft delete, restore and delete for good (notebook_purge, from the trash). Reads live here too
(notebook_get, notebook_list, cell_get, cell_list): a notebook is its owner's alone, so every read and
write filters on ``owner=actor``, and a foreign or malformed id is simply not found.

Input names in errors (``InvalidInput.field``) are these services' own argument names (notebook_id,
cell_id, cell_type, filename, ...); each edge renames them to what its caller sent.

- Cells have a 0-based ``position``; a new cell goes at the end unless a position is given, and the cells
  from there on move down one.
- Code cells need a file name: a plain name (letters, digits, ``_.-``, no folders) whose extension
  matches the notebook's language (.js/.mjs/.cjs or .ts/.mts), unique in the notebook, since every code
  cell is written to that file before a run and cells import each other by it.
- Changing a cell's content or file name clears its last run (the output no longer matches the code).
- Running and installing execute code, so both refuse with ``execution_disabled`` unless the server
  enables ``ENGRAM_NOTEBOOK_EXECUTION``.
- install_deps with no packages installs what the notebook lists (after a load).
- export / load: the .src.md format (apps/reasoning/srcmd.py), in ``ENGRAM_NOTEBOOK_DIR/exports/<user pk>/``;
  a path is a relative name in that folder, never a server path.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, QuerySet
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import Conflict, DomainError, InvalidInput, NotFound, PermissionDenied, Unavailable
from apps.core.limits import CELL_POSITION
from apps.core.validation import clean_choice, clean_title, parse_uuid
from apps.reasoning import sandbox, srcmd
from apps.reasoning.models import Cell, CellRun, Notebook
from apps.reasoning.notebook_templates import TEMPLATES, notebook_templates  # noqa: F401 (part of this API)

MAX_CONTENT_CHARS = 200_000
MAX_SOURCE_CHARS = 2_000_000
MAX_CELLS = CELL_POSITION.high + 1
MAX_DEPENDENCIES = 20
EXTENSIONS = {
    Notebook.Language.JAVASCRIPT: (".js", ".mjs", ".cjs"),
    Notebook.Language.TYPESCRIPT: (".ts", ".mts"),
}
SAFE_FILENAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
SAFE_PATH_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_. -]{0,99}$")
# npm package names (lowercase, optionally scoped) with an optional version or range or dist-tag. No ":" and
# no "/" outside the scope, so no URL, git remote, file: or path can pass.
NPM_SPEC = re.compile(r"^(?P<name>(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]{0,213})"
                      r"(?:@(?P<version>[A-Za-z0-9.^~<>=*|+_ -]{1,100}))?$")
SRC_MD_SUFFIX = ".src.md"


@dataclass(frozen=True)
class InstallResult:
    notebook: Notebook
    installed: dict[str, str]  # the packages asked for -> the version npm installed
    output: str  # npm's own report


@dataclass(frozen=True)
class NotebookExported:
    text: str
    path: Path | None


# ---- reads -------------------------------------------------------------------------------------------------

def notebook_list(*, actor: User, include_deleted: bool = False) -> QuerySet[Notebook]:
    """The actor's notebooks (live ones unless ``include_deleted``), most recently changed first, each with
    ``cell_count``."""
    queryset = Notebook.objects.filter(owner=actor)
    if not include_deleted:
        queryset = queryset.filter(deleted_at__isnull=True)
    return queryset.annotate(cell_count=Count("cells"))


def _notebook_query(*, actor: User, notebook_id, deleted: bool = False) -> QuerySet[Notebook]:
    pk = parse_uuid(notebook_id, field="notebook_id", label="Notebook", code="notebook_not_found")
    return Notebook.objects.filter(owner=actor, pk=pk, deleted_at__isnull=not deleted)


def _found(query: QuerySet[Notebook], notebook_id) -> Notebook:
    notebook = query.first()
    if notebook is None:
        raise NotFound(f"Notebook {notebook_id} not found: use the list operation to see your notebooks' ids.",
                       code="notebook_not_found", extra={"field": "notebook_id"})
    return notebook


def notebook_get(*, actor: User, notebook_id, include_deleted: bool = False) -> Notebook:
    """The actor's notebook; ``include_deleted``: a deleted one too (its page shows it, read only, to restore)."""
    if include_deleted:
        pk = parse_uuid(notebook_id, field="notebook_id", label="Notebook", code="notebook_not_found")
        return _found(Notebook.objects.filter(owner=actor, pk=pk), notebook_id)
    return _found(_notebook_query(actor=actor, notebook_id=notebook_id), notebook_id)


def _notebook_locked(*, actor: User, notebook_id) -> Notebook:
    """The notebook, row-locked until the transaction ends, so concurrent cell writes take turns."""
    return _found(_notebook_query(actor=actor, notebook_id=notebook_id).select_for_update(), notebook_id)


def cells_of(notebook: Notebook) -> list[Cell]:
    """The cells of a notebook the caller already read (with notebook_get), in order."""
    return list(notebook.cells.order_by("position"))


def cell_list(*, actor: User, notebook_id) -> list[Cell]:
    return cells_of(notebook_get(actor=actor, notebook_id=notebook_id))


def cell_in(notebook: Notebook, cell_id) -> Cell:
    """A cell of a notebook the caller already read (with notebook_get)."""
    pk = parse_uuid(cell_id, field="cell_id", label="Cell", code="cell_not_found")
    cell = notebook.cells.filter(pk=pk).first()
    if cell is None:
        raise NotFound(f"Cell {cell_id} not found in notebook {notebook.pk}: use list_cells to see its cells' ids.",
                       code="cell_not_found", extra={"field": "cell_id"})
    return cell


def cell_get(*, actor: User, notebook_id, cell_id) -> Cell:
    return cell_in(notebook_get(actor=actor, notebook_id=notebook_id), cell_id)


def notebook_directory(notebook: Notebook) -> Path:
    return Path(settings.ENGRAM_NOTEBOOK_DIR) / str(notebook.pk)


# ---- validation --------------------------------------------------------------------------------------------

def _clean_template(value) -> str:
    if value in (None, ""):
        return ""
    if value not in TEMPLATES:
        raise InvalidInput(f"Unknown template {value!r}; the templates are: {', '.join(TEMPLATES)}.", field="template")
    return value


def _clean_content(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"content must be a string, got {type(value).__name__}.", field="content")
    if "\x00" in value:
        raise InvalidInput("content cannot contain NUL bytes (\\u0000): remove them.", field="content")
    if len(value) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"content is {len(value)} characters long; the limit is {MAX_CONTENT_CHARS}.",
                           field="content")
    return srcmd.trim_blank_lines(value)


def _clean_filename(value, *, notebook: Notebook, cell_type: str, cell: Cell | None = None) -> str:
    if cell_type == Cell.CellType.MARKDOWN:
        if value:
            raise InvalidInput("Markdown cells have no file: leave filename out.", field="filename")
        return ""
    extensions = EXTENSIONS[notebook.language]
    example = f"example{extensions[0]}"
    if not value:
        raise InvalidInput(f"Code cells need a filename, like {example!r}: cells import each other by it.",
                           field="filename")
    if not isinstance(value, str) or not SAFE_FILENAME.match(value) or ".." in value:
        raise InvalidInput(f"filename {value!r} is not allowed: use a plain file name of letters, digits, '_', '.' "
                           f"and '-' (no folders, no '..'), like {example!r}.", field="filename")
    if not value.endswith(extensions):
        raise InvalidInput(f"filename {value!r} does not fit this {notebook.language} notebook: use one of "
                           f"{', '.join(extensions)}, like {example!r}.", field="filename")
    clash = notebook.cells.filter(filename=value)
    if cell is not None:
        clash = clash.exclude(pk=cell.pk)
    if clash.exists():
        raise InvalidInput(f"filename {value!r} is already used by another cell of this notebook: pick another "
                           f"name.", field="filename")
    return value


def _clean_position(value, *, count: int) -> int:
    if value is None:
        return count
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= count:
        raise InvalidInput(f"position must be a whole number from 0 (first) to {count} (last), got {value!r}.",
                           field="position")
    return value


def _clean_dependencies(value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInput('dependencies must be a list of npm package names, like ["is-odd", "left-pad@1.3.0"].',
                           field="dependencies")
    if len(value) > MAX_DEPENDENCIES:
        raise InvalidInput(f"at most {MAX_DEPENDENCIES} dependencies at once, got {len(value)}.",
                           field="dependencies")
    specs = [item.strip() for item in value]
    for spec in specs:
        if not NPM_SPEC.match(spec):
            raise InvalidInput(f"{spec!r} is not an npm package from the registry: give a name with an optional "
                               f"@version (like 'lodash' or 'date-fns@3.6.0'); URLs, git, file: and paths are "
                               f"not allowed.", field="dependencies")
    return specs


def _split_spec(spec: str) -> tuple[str, str | None]:
    """A cleaned npm spec as (package name, version or None)."""
    match = NPM_SPEC.match(spec)
    return match.group("name"), match.group("version")


def require_execution() -> None:
    if not settings.ENGRAM_NOTEBOOK_EXECUTION:
        raise PermissionDenied(
            "Code execution is off on this server, so notebook cells cannot run and npm packages cannot be "
            "installed. An operator can enable it by setting ENGRAM_NOTEBOOK_EXECUTION=true in the server's "
            "environment; that lets every user with a write token run code on the host, under time, memory, "
            "process and network limits, so enable it only where those users are trusted.",
            code="execution_disabled")


# ---- writes ------------------------------------------------------------------------------------------------

def _insert_cell(notebook: Notebook, *, cell_type: str, content: str, filename: str, position: int) -> Cell:
    """Insert at ``position``, moving later cells down in two steps (the unique position constraint is
    checked row by row, so a plain +1 could collide halfway)."""
    later = notebook.cells.filter(position__gte=position)
    if later.exists():
        offset = MAX_CELLS * 10
        later.update(position=F("position") + offset)
        notebook.cells.filter(position__gte=offset).update(position=F("position") - offset + 1)
    return Cell.objects.create(notebook=notebook, position=position, cell_type=cell_type, content=content,
                               filename=filename)


def _touch(notebook: Notebook) -> None:
    notebook.save(update_fields=["updated_at"])  # auto_now sets it


def notebook_create(*, actor: User, title, language="javascript", template: str | None = None) -> Notebook:
    title = clean_title(title, field="title")
    language = clean_choice(language, choices=Notebook.Language.values, field="language")
    template = _clean_template(template)
    with transaction.atomic():
        notebook = Notebook.objects.create(owner=actor, title=title, language=language, template=template)
        if template:
            for position, cell in enumerate(TEMPLATES[template].source_cells(title=title, language=language)):
                Cell.objects.create(notebook=notebook, position=position, cell_type=cell.cell_type,
                                    content=cell.content, filename=cell.filename)
    return notebook


def cell_add(*, actor: User, notebook_id, cell_type, content, filename=None, position=None) -> Cell:
    cell_type = clean_choice(cell_type, choices=Cell.CellType.values, field="cell_type")
    content = _clean_content(content)
    with transaction.atomic():
        notebook = _notebook_locked(actor=actor, notebook_id=notebook_id)
        count = notebook.cells.count()
        if count >= MAX_CELLS:
            raise InvalidInput(f"A notebook holds at most {MAX_CELLS} cells: start another notebook.",
                               field="notebook_id")
        filename = _clean_filename(filename, notebook=notebook, cell_type=cell_type)
        cell = _insert_cell(notebook, cell_type=cell_type, content=content, filename=filename,
                            position=_clean_position(position, count=count))
        _touch(notebook)
    return cell


def cell_update(*, actor: User, notebook_id, cell_id, content=None, filename=None) -> Cell:
    if content is None and filename is None:
        raise InvalidInput("Nothing to update: give content, filename or both.", field="content")
    with transaction.atomic():
        notebook = _notebook_locked(actor=actor, notebook_id=notebook_id)
        cell = cell_in(notebook, cell_id)
        if content is not None:
            cell.content = _clean_content(content)
        if filename is not None:
            cell.filename = _clean_filename(filename, notebook=notebook, cell_type=cell.cell_type, cell=cell)
        # The last run was of the old code; keeping its output would show results the code no longer gives.
        cell.status, cell.stdout, cell.stderr = Cell.Status.IDLE, "", ""
        cell.exit_code = cell.duration_ms = cell.executed_at = None
        cell.save()
        _touch(notebook)
    return cell


def notebook_install_deps(*, actor: User, notebook_id, dependencies: list[str]) -> InstallResult:
    require_execution()
    specs = _clean_dependencies(dependencies)
    notebook = notebook_get(actor=actor, notebook_id=notebook_id)
    if not specs:
        specs = [f"{name}@{version}" for name, version in sorted(notebook.dependencies.items())]
        if not specs:
            raise InvalidInput('Name the packages to install, like ["is-odd"]: this notebook lists none yet.',
                               field="dependencies")
    try:
        installed = sandbox.npm_install(directory=notebook_directory(notebook), specs=specs,
                                        notebook_key=notebook.pk.int, package_name=f"notebook-{notebook.pk.hex[:12]}")
    except OSError as exc:
        raise Unavailable(f"The notebook directory could not be used: {exc}", code="execution_failed") from exc
    notebook.dependencies = installed.versions
    notebook.save(update_fields=["dependencies", "updated_at"])
    asked = {_split_spec(spec)[0] for spec in specs}
    return InstallResult(notebook=notebook, output=installed.output,
                         installed={name: version for name, version in installed.versions.items() if name in asked})


def notebook_delete(*, actor: User, notebook_id) -> Notebook:
    notebook = notebook_get(actor=actor, notebook_id=notebook_id)
    notebook.deleted_at = timezone.now()
    notebook.save(update_fields=["deleted_at", "updated_at"])
    return notebook


def notebook_restore(*, actor: User, notebook_id) -> Notebook:
    notebook = _found(_notebook_query(actor=actor, notebook_id=notebook_id, deleted=True), notebook_id)
    notebook.deleted_at = None
    notebook.save(update_fields=["deleted_at", "updated_at"])
    return notebook


@transaction.atomic
def notebook_purge(*, actor: User, notebook_id) -> None:
    """Delete a deleted notebook for good: its cells, runs and outputs, and its directory (files and installed
    packages) once the transaction commits. Only from the trash (notebook_delete first), and not while a cell runs."""
    notebook = _found(_notebook_query(actor=actor, notebook_id=notebook_id, deleted=True).select_for_update(),
                      notebook_id)
    if CellRun.objects.filter(notebook=notebook, status__in=CellRun.ACTIVE).exists():
        raise Conflict("A cell of this notebook is still running: wait for it to finish (or cancel it), then delete "
                       "the notebook for good.", extra={"field": "notebook_id"})
    directory = notebook_directory(notebook)
    notebook.delete()
    # Files last, and only once the rows are gone for sure: a rolled-back purge keeps a notebook that still runs.
    transaction.on_commit(lambda: shutil.rmtree(directory, ignore_errors=True))


# ---- export and load (.src.md) -----------------------------------------------------------------------------

def _exports_folder(actor: User) -> Path:
    return Path(settings.ENGRAM_NOTEBOOK_DIR) / "exports" / str(actor.pk)


def _export_file(actor: User, path) -> Path:
    """``path`` as a file in the actor's exports folder: relative, no '..', plain names, ending .src.md."""
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput("path must be a file name like 'analysis.src.md'.", field="path")
    relative = PurePosixPath(path.strip())
    parts = relative.parts
    if relative.is_absolute() or "\\" in path or not parts or any(not SAFE_PATH_PART.match(p) for p in parts) \
            or any(".." in p for p in parts):
        raise InvalidInput(f"path {path!r} is not allowed: give a relative file name like 'analysis.src.md' (folders "
                           f"allowed, no '..' and no absolute paths); files live in your own notebook exports "
                           f"folder on the server.", field="path")
    if not relative.name.endswith(SRC_MD_SUFFIX):
        relative = relative.with_name(relative.name + SRC_MD_SUFFIX)
    return _exports_folder(actor).joinpath(*relative.parts)


def _source_notebook(notebook: Notebook, cells: list[Cell]) -> srcmd.SourceNotebook:
    def output(cell: Cell) -> str:
        if cell.status not in (Cell.Status.COMPLETED, Cell.Status.FAILED):
            return ""
        return cell.stdout + (f"\n[stderr]\n{cell.stderr}" if cell.stderr else "")

    return srcmd.SourceNotebook(
        title=notebook.title, language=notebook.language, template=notebook.template,
        dependencies=dict(notebook.dependencies),
        cells=tuple(srcmd.SourceCell(cell_type=c.cell_type, content=c.content, filename=c.filename, output=output(c))
                    for c in cells))


def notebook_export(*, actor: User, notebook_id, path: str | None = None) -> NotebookExported:
    notebook = notebook_get(actor=actor, notebook_id=notebook_id)
    text = srcmd.render(_source_notebook(notebook, list(notebook.cells.order_by("position"))))
    if path is None:
        return NotebookExported(text=text, path=None)
    target = _export_file(actor, path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _exports_folder(actor).parent.chmod(0o700)
        # Written aside and renamed into place, so a reader never sees half a file.
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".export-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except OSError as exc:
        raise DomainError(f"The export could not be written: {exc.strerror}.", code="export_failed") from exc
    return NotebookExported(text=text, path=target)


def _read_export(actor: User, path) -> str:
    source = _export_file(actor, path)
    try:
        if source.stat().st_size > MAX_SOURCE_CHARS * 4:
            raise InvalidInput(f"{path!r} is too large to be a notebook.", field="path")
        return source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"There is no {source.name!r} in your notebook exports folder: export a notebook there "
                           f"first, or pass its text.", field="path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path!r} could not be read as UTF-8 text: {exc}.", field="path") from None


def notebook_load(*, actor: User, path: str | None = None, text: str | None = None) -> Notebook:
    """A new notebook from a .src.md file of the actor's exports folder, or from its text."""
    if (path is None) == (text is None):
        raise InvalidInput("Give either path (a file in your notebook exports folder) or text (the .src.md content).",
                           field="path")
    field = "path" if path is not None else "text"
    if text is None:
        text = _read_export(actor, path)
    elif not isinstance(text, str) or len(text) > MAX_SOURCE_CHARS:
        raise InvalidInput(f"text must be the .src.md content, at most {MAX_SOURCE_CHARS} characters.", field="text")
    try:
        source = srcmd.parse(text)
        title = clean_title(source.title, field="title")
        language = clean_choice(source.language, choices=Notebook.Language.values, field="language")
        template = _clean_template(source.template)
        dependencies = _clean_dependencies([f"{name}@{version}" for name, version in source.dependencies.items()])
    except InvalidInput as exc:
        raise InvalidInput(f"{exc.message} (in the front matter)" if exc.field != "text" else exc.message,
                           field=field, extra={**exc.extra, "field": field}) from None
    with transaction.atomic():
        notebook = Notebook.objects.create(
            owner=actor, title=title, language=language, template=template,
            dependencies={name: version or "*" for name, version in map(_split_spec, dependencies)})
        for position, cell in enumerate(source.cells):
            try:
                cell_type = clean_choice(cell.cell_type, choices=Cell.CellType.values, field="cell_type")
                content = _clean_content(cell.content)
                filename = _clean_filename(cell.filename, notebook=notebook, cell_type=cell_type)
            except InvalidInput as exc:
                raise InvalidInput(f"line {cell.line}: {exc.message}", field=field,
                                   extra={"line": cell.line, "field": field}) from None
            Cell.objects.create(notebook=notebook, position=position, cell_type=cell_type, content=content,
                                filename=filename)
    return notebook
