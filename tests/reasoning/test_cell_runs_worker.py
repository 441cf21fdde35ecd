"""A notebook cell run on a real Celery worker (the SQL broker of the embedded default): the run a page starts is
done by the worker, and the same task delivered again (as the broker does when it cannot know a worker acked it)
does nothing: the cell, which counts its runs in a file, ran once."""
import shutil

import pytest
from celery import current_app
from django.conf import settings

from apps.reasoning.models import CellRun
from apps.reasoning.services.cell_runs import TASK_NAME, cell_run_start
from apps.reasoning.services.notebooks import cell_add, notebook_create, notebook_directory
from tests.memories.test_faults_worker import (  # noqa: F401 (fixtures)
    _close_broker_connections, broker_messages, wait_for, workers,
)

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="reads the SQL broker's queue; REDIS_URL is set"),
]

COUNTS_ITS_RUNS = ("const fs = require('fs'); fs.appendFileSync('runs', 'x');"
                   "console.log('run', fs.readFileSync('runs', 'utf8').length);")


@pytest.fixture
def notebook(user):
    """In the run's notebook folder (config/settings/test.py), which the worker's settings name too."""
    notebook = notebook_create(actor=user, title="Counted")
    yield notebook
    shutil.rmtree(notebook_directory(notebook), ignore_errors=True)


def test_a_worker_runs_the_cell_and_a_second_delivery_of_the_finished_run_does_nothing(user, workers, notebook):  # noqa: F811
    cell = cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="count.js",
                    content=COUNTS_ITS_RUNS)
    run = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    assert CellRun.objects.get(pk=run.pk).status == "queued"
    workers("cells")
    wait_for(lambda: CellRun.objects.get(pk=run.pk).finished, "the worker to run the cell")
    done = CellRun.objects.get(pk=run.pk)
    assert (done.status, done.stdout, done.exit_code) == ("completed", "run 1\n", 0)
    wait_for(lambda: broker_messages() == [], "the worker to ack the task")

    current_app.send_task(TASK_NAME, args=[str(run.pk)])
    assert broker_messages() == [True]
    wait_for(lambda: broker_messages() == [], "the worker to take and ack the second delivery")
    again = CellRun.objects.get(pk=run.pk)
    assert (again.status, again.stdout, again.finished_at) == ("completed", "run 1\n", done.finished_at)
    assert (notebook_directory(notebook) / "runs").read_text() == "x"
