"""Running a notebook's code cell: each run is a CellRun with an id, done by a Celery worker for the pages
(``cell_run_start``, then the task reasoning.cell_run calls ``cell_run_execute``) or inline for REST and MCP,
whose callers wait for the result (``cell_run``).

- A run takes up to the notebook time limit, so it never holds a transaction: the run is claimed (queued ->
  running) in one write, the cell runs, the output so far is saved every WATCH_SECONDS, then the result is
  saved on the run and on its cell.
- One unfinished run per cell: starting another is a Conflict (``cell_running``) naming the unfinished one.
- Idempotent on redelivery: only a queued run is claimed, so a second delivery of a running or finished run does
  nothing. A run left "running" by a worker that died (its started_at older than ORPHAN_AFTER_SECONDS beyond the
  limits) is taken over by the next delivery, or marked failed when the cell is started again.
- Cancel: a queued run is cancelled at once; a running one is flagged, and the worker running it kills its
  process group at its next look (WATCH_SECONDS).
- Every state change nudges the run's watchers (apps/graph/events.py ``notify_after_commit``, the run's group
  from apps/graph/groups.py); the socket (apps/reasoning/consumers.py) reads the run and sends its state.
- A cell whose code throws, times out, runs out of memory or is cancelled is a failed run with the reason in
  ``message``; ``execution_failed`` (a DomainError) means the server could not run it at all, and is recorded
  on the run and the cell as a failure too.
- Runs are their owner's alone: a foreign or malformed run id is simply not found.
"""
from __future__ import annotations

import uuid
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import Conflict, DomainError, InvalidInput, NotFound, Unavailable
from apps.core.validation import parse_uuid
from apps.graph.events import notify_after_commit
from apps.graph.groups import cell_run_group
from apps.reasoning import sandbox
from apps.reasoning.models import Cell, CellRun, Notebook
from apps.reasoning.services.notebooks import cell_in, notebook_directory, notebook_get, require_execution

TASK_NAME = "reasoning.cell_run"
# Beyond the two time limits a run may take (a TypeScript build, then node), before "running" means orphaned.
ORPHAN_AFTER_SECONDS = 60
Status = CellRun.Status


# ---- reads -------------------------------------------------------------------------------------------------

def _run_query(*, actor: User, run_id) -> QuerySet[CellRun]:
    pk = parse_uuid(run_id, field="run_id", label="Run", code="run_not_found")
    return CellRun.objects.filter(owner=actor, pk=pk).select_related("cell", "notebook")


def cell_run_get(*, actor: User, run_id) -> CellRun:
    run = _run_query(actor=actor, run_id=run_id).first()
    if run is None:
        raise NotFound(f"Run {run_id} not found: start a run from its notebook's page.", code="run_not_found",
                       extra={"field": "run_id"})
    return run


def cell_run_active(*, actor: User, notebook: Notebook) -> dict:
    """The unfinished runs of a notebook the actor read (notebook_get): cell id -> run, in one query."""
    runs = CellRun.objects.filter(owner=actor, notebook=notebook, status__in=CellRun.ACTIVE)
    return {run.cell_id: run for run in runs}


def elapsed_ms(run: CellRun) -> int:
    """How long the run has run: its duration when finished, the time since it started while running."""
    if run.duration_ms is not None:
        return run.duration_ms
    if run.started_at is None:
        return 0
    return max(int((timezone.now() - run.started_at).total_seconds() * 1000), 0)


def cell_run_state(run: CellRun) -> dict:
    """The run as its watchers see it (the socket's "run" message and the page's JSON)."""
    return {
        "id": str(run.pk), "notebook": str(run.notebook_id), "cell": str(run.cell_id), "filename": run.cell.filename,
        "status": run.status, "finished": run.finished, "succeeded": run.status == Status.COMPLETED,
        "cancel_requested": run.cancel_requested, "exit_code": run.exit_code, "message": run.message,
        "stdout": run.stdout, "stderr": run.stderr, "elapsed_ms": elapsed_ms(run),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


# ---- writes ------------------------------------------------------------------------------------------------

def _orphan_cutoff():
    limit = float(settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS)
    return timezone.now() - timedelta(seconds=2 * limit + ORPHAN_AFTER_SECONDS)


def _changed(run_id) -> None:
    notify_after_commit(cell_run_group(run_id), {"type": "run.changed", "run": str(run_id)})


def cell_run_start(*, actor: User, notebook_id, cell_id, background: bool = True) -> CellRun:
    """A new queued run of a code cell; with ``background`` a worker is asked to run it once this commits."""
    require_execution()
    notebook = notebook_get(actor=actor, notebook_id=notebook_id)
    with transaction.atomic():
        # The cell's row lock makes concurrent starts take turns, so the second sees the first's run.
        cell = cell_in(notebook, cell_id)
        Cell.objects.select_for_update().filter(pk=cell.pk).first()
        if cell.cell_type != Cell.CellType.CODE:
            raise InvalidInput(f"Cell {cell.pk} is a markdown cell; only code cells run.", field="cell_id")
        orphans = CellRun.objects.filter(cell=cell, status=Status.RUNNING, started_at__lt=_orphan_cutoff())
        for orphan in orphans:
            _finish(orphan, lease=orphan.lease, status=Status.FAILED,
                    message="the worker running it stopped before it finished")
        active = CellRun.objects.filter(cell=cell, status__in=CellRun.ACTIVE).first()
        if active is not None:
            raise Conflict(f"{cell.filename} is already running (run {active.pk}): wait for it to finish or cancel "
                           f"it.", code="cell_running", extra={"run_id": str(active.pk), "field": "cell_id"})
        run = CellRun.objects.create(owner=actor, notebook=notebook, cell=cell)
        if background:
            transaction.on_commit(lambda: current_app.send_task(TASK_NAME, args=[str(run.pk)]))
    return run


def _claim(run_id) -> tuple[CellRun, str] | None:
    """Take a queued run (or one orphaned by a dead worker) for this delivery; None when there is nothing to do."""
    lease, now = uuid.uuid4().hex, timezone.now()
    taken = CellRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
        status=Status.RUNNING, lease=lease, started_at=now, updated_at=now)
    if not taken:
        taken = CellRun.objects.filter(pk=run_id, status=Status.RUNNING, started_at__lt=_orphan_cutoff()).update(
            lease=lease, started_at=now, stdout="", stderr="", updated_at=now)
    if not taken:
        return None
    run = CellRun.objects.select_related("cell", "notebook").get(pk=run_id)
    Cell.objects.filter(pk=run.cell_id).update(status=Cell.Status.RUNNING, updated_at=now)
    _changed(run.pk)
    return run, lease


def _finish(run: CellRun, *, lease: str, status: str, message: str, result: sandbox.RunResult | None = None,
            stderr: str | None = None) -> bool:
    """Record the outcome on the run and its cell, if this delivery still holds the run (False otherwise)."""
    now = timezone.now()
    fields = {"status": status, "message": message, "finished_at": now, "updated_at": now, "lease": ""}
    if result is not None:
        fields.update(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr,
                      duration_ms=result.duration_ms)
    elif stderr is not None:
        fields.update(exit_code=None, stdout="", stderr=stderr, duration_ms=elapsed_ms(run))
    with transaction.atomic():
        if not CellRun.objects.filter(pk=run.pk, status__in=CellRun.ACTIVE, lease=lease).update(**fields):
            return False
        # A cancelled run is a failed one from the cell's side (a cell has no "cancelled" state).
        cell_status = Cell.Status.COMPLETED if status == Status.COMPLETED else Cell.Status.FAILED
        if result is not None or stderr is not None:
            Cell.objects.filter(pk=run.cell_id).update(
                status=cell_status, stdout=fields["stdout"], stderr=fields["stderr"], exit_code=fields["exit_code"],
                duration_ms=fields["duration_ms"], executed_at=now, updated_at=now)
        else:
            Cell.objects.filter(pk=run.cell_id, status=Cell.Status.RUNNING).update(status=cell_status, updated_at=now)
        _changed(run.pk)
    return True


def _outcome(result: sandbox.RunResult) -> tuple[str, str]:
    """The run's status and its one-line message."""
    if result.succeeded:
        return Status.COMPLETED, "completed, exit code 0"
    if result.cancelled:
        return Status.CANCELLED, f"{result.failure} (exit code {result.exit_code})"
    reason = result.failure or "the code failed"
    return Status.FAILED, f"{reason} (exit code {result.exit_code})"


def _execute(run: CellRun, lease: str) -> CellRun:
    """Run the claimed run's cell in the sandbox, saving its output as it comes, and record how it ended. A
    DomainError (the server could not run it) is recorded as the run's failure, then raised."""
    notebook = run.notebook
    sources = dict(notebook.cells.filter(cell_type=Cell.CellType.CODE).values_list("filename", "content"))
    seen = {"stdout": "", "stderr": ""}

    def watch(stdout: str, stderr: str) -> bool:
        if (stdout, stderr) != (seen["stdout"], seen["stderr"]):
            seen.update(stdout=stdout, stderr=stderr)
            CellRun.objects.filter(pk=run.pk, lease=lease).update(stdout=stdout, stderr=stderr,
                                                                  updated_at=timezone.now())
            _changed(run.pk)
        return CellRun.objects.filter(pk=run.pk, cancel_requested=True).exists()

    try:
        if notebook.deleted_at is not None:
            raise NotFound(f"Notebook {notebook.pk} was deleted before the run started: restore it to run its cells.",
                           code="notebook_not_found", extra={"field": "notebook_id"})
        result = sandbox.run_cell(directory=notebook_directory(notebook), filename=run.cell.filename,
                                  sources=sources, notebook_key=notebook.pk.int, watch=watch)
    except (DomainError, OSError) as exc:
        error = exc if isinstance(exc, DomainError) else Unavailable(
            f"The notebook directory could not be used: {exc}", code="execution_failed")
        _finish(run, lease=lease, status=Status.FAILED, message=error.message, stderr=error.message)
        if isinstance(exc, DomainError):
            raise
        raise error from exc
    status, message = _outcome(result)
    _finish(run, lease=lease, status=status, message=message, result=result)
    run.refresh_from_db()
    return run


def cell_run_execute(*, run_id) -> CellRun | None:
    """The task's work: run a queued run (or take over an orphaned one). A run that is running elsewhere or has
    finished is left as it is (None): a second delivery does nothing."""
    pk = parse_uuid(run_id, field="run_id", label="Run", code="run_not_found")
    claimed = _claim(pk)
    if claimed is None:
        return None
    return _execute(*claimed)


def cell_run(*, actor: User, notebook_id, cell_id) -> Cell:
    """Run a code cell inline and return it with its result (REST and MCP: their callers wait for it)."""
    run = cell_run_start(actor=actor, notebook_id=notebook_id, cell_id=cell_id, background=False)
    claimed = _claim(run.pk)
    if claimed is not None:  # a cancel may have come first
        _execute(*claimed)
    return Cell.objects.get(pk=run.cell_id)


def cell_run_cancel(*, actor: User, run_id) -> CellRun:
    """Cancel a run: a queued one at once, a running one at its worker's next look. A finished run stays as it
    finished."""
    with transaction.atomic():
        run = _run_query(actor=actor, run_id=run_id).select_for_update(of=("self",)).first()
        if run is None:
            raise NotFound(f"Run {run_id} not found: start a run from its notebook's page.", code="run_not_found",
                           extra={"field": "run_id"})
        if run.status == Status.QUEUED:
            _finish(run, lease=run.lease, status=Status.CANCELLED, message="cancelled before it started")
        elif run.status == Status.RUNNING and not run.cancel_requested:
            CellRun.objects.filter(pk=run.pk).update(cancel_requested=True, updated_at=timezone.now())
            _changed(run.pk)
    return cell_run_get(actor=actor, run_id=run.pk)
