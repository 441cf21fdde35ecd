"""Notebook services with real node and npm: create/templates, cells, runs, install_deps, the production
switch, export/load, bad input and isolation between users."""
import threading
import time

import pytest
from django.db import connection

from apps.core.exceptions import DomainError, InvalidInput, NotFound, PermissionDenied
from apps.reasoning.models import Cell, Notebook
from apps.reasoning.services.cell_runs import cell_run
from apps.reasoning.services.notebooks import (
    cell_add, cell_get, cell_list, cell_update, notebook_create, notebook_delete, notebook_directory,
    notebook_export, notebook_get, notebook_install_deps, notebook_list, notebook_load, notebook_restore,
    notebook_templates,
)
from tests.reasoning.notebook_support import esbuild, esbuild_binary, notebook_dir  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("notebook_dir")]


@pytest.fixture
def notebook(user):
    return notebook_create(actor=user, title="Scratch", language="javascript")


def code(user, notebook, content, filename="main.js", **kwargs):
    return cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", content=content, filename=filename,
                    **kwargs)


# ---- create, templates, cells ------------------------------------------------------------------------------

def test_create_and_get(user):
    created = notebook_create(actor=user, title="  My Analysis ", language="typescript")
    fetched = notebook_get(actor=user, notebook_id=str(created.pk))
    assert (fetched.title, fetched.language, fetched.template) == ("My Analysis", "typescript", "")


def test_templates_are_listed_with_descriptions():
    templates = notebook_templates()
    assert "sequential-feynman" in templates and "data-exploration" in templates
    assert all(description for description in templates.values())


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_the_feynman_template_fills_the_walkthrough_and_its_code_runs(user, language, esbuild):
    created = notebook_create(actor=user, title="Binary search", language=language, template="sequential-feynman")
    cells = cell_list(actor=user, notebook_id=created.pk)
    headings = [c.content.splitlines()[0] for c in cells if c.cell_type == "markdown"]
    assert headings == ["# Binary search", "## 1. The concept", "## 2. Explain it simply", "## 3. Find the gaps",
                        "## 4. Refine", "## 5. Demonstrate"]
    demo = next(c for c in cells if c.cell_type == "code")
    assert demo.filename == ("demonstration.ts" if language == "typescript" else "demonstration.js")
    ran = cell_run(actor=user, notebook_id=created.pk, cell_id=demo.pk)
    assert ran.status == Cell.Status.COMPLETED, ran.stderr
    assert "23 is at index 8 of 12" in ran.stdout


def test_the_data_exploration_template_runs(user):
    created = notebook_create(actor=user, title="Weather", template="data-exploration")
    demo = next(c for c in cell_list(actor=user, notebook_id=created.pk) if c.cell_type == "code")
    ran = cell_run(actor=user, notebook_id=created.pk, cell_id=demo.pk)
    assert ran.status == Cell.Status.COMPLETED, ran.stderr
    assert 'temperature {"count":6' in ran.stdout
    assert "Oslo: yearly swing 20.3 degrees" in ran.stdout


def test_cells_are_added_at_the_end_or_at_a_position(user, notebook):
    first = cell_add(actor=user, notebook_id=notebook.pk, cell_type="markdown", content="# one")
    last = code(user, notebook, "console.log(3)")
    middle = cell_add(actor=user, notebook_id=notebook.pk, cell_type="markdown", content="two", position=1)
    top = cell_add(actor=user, notebook_id=notebook.pk, cell_type="markdown", content="zero", position=0)
    assert [c.pk for c in cell_list(actor=user, notebook_id=notebook.pk)] == [top.pk, first.pk, middle.pk, last.pk]
    assert [c.position for c in cell_list(actor=user, notebook_id=notebook.pk)] == [0, 1, 2, 3]


def test_updating_a_cell_changes_it_and_clears_its_stale_output(user, notebook):
    cell = code(user, notebook, "console.log('old')")
    cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    updated = cell_update(actor=user, notebook_id=notebook.pk, cell_id=cell.pk, content="console.log('new')")
    assert (updated.content, updated.status, updated.stdout, updated.exit_code) == (
        "console.log('new')", Cell.Status.IDLE, "", None)
    renamed = cell_update(actor=user, notebook_id=notebook.pk, cell_id=cell.pk, filename="renamed.mjs")
    assert cell_get(actor=user, notebook_id=notebook.pk, cell_id=cell.pk).filename == renamed.filename == "renamed.mjs"


# ---- running -----------------------------------------------------------------------------------------------

def test_running_a_cell_records_its_output(user, notebook):
    cell = code(user, notebook, "console.log('hello from node', [1, 2, 3].map(n => n * 2).join(','))")
    cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    stored = Cell.objects.get(pk=cell.pk)
    assert stored.status == Cell.Status.COMPLETED
    assert stored.stdout == "hello from node 2,4,6\n"
    assert stored.exit_code == 0
    assert stored.duration_ms is not None and stored.executed_at is not None


def test_a_cell_that_throws_is_a_failed_run_not_an_error(user, notebook):
    cell = code(user, notebook, "null.property")
    ran = cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    assert ran.status == Cell.Status.FAILED
    assert ran.exit_code == 1
    assert "TypeError" in ran.stderr


def test_a_cell_imports_another_cell_by_file_name(user, notebook):
    code(user, notebook, "exports.total = (xs) => xs.reduce((a, b) => a + b, 0);", filename="sum.js")
    main = code(user, notebook, "const { total } = require('./sum.js'); console.log(total([4, 5, 6]));")
    assert cell_run(actor=user, notebook_id=notebook.pk, cell_id=main.pk).stdout == "15\n"


def test_a_typescript_cell_with_types_runs(user, esbuild):
    typed = notebook_create(actor=user, title="Typed", language="typescript")
    code(user, typed, "export type Point = { x: number; y: number };\n"
                      "export const norm = (p: Point): number => Math.hypot(p.x, p.y);", filename="geometry.ts")
    main = code(user, typed, "import { norm, type Point } from './geometry.js';\n"
                             "const p: Point = { x: 3, y: 4 };\nconsole.log(`norm ${norm(p)}`);", filename="main.ts")
    ran = cell_run(actor=user, notebook_id=typed.pk, cell_id=main.pk)
    assert ran.status == Cell.Status.COMPLETED, ran.stderr
    assert ran.stdout == "norm 5\n"


def test_a_timeout_is_recorded_as_a_failed_run(user, notebook, settings):
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = 1
    cell = code(user, notebook, "while (true) {}")
    ran = cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    assert ran.status == Cell.Status.FAILED
    assert "timed out after 1 s" in Cell.objects.get(pk=cell.pk).stderr


def test_a_run_the_server_cannot_make_is_an_execution_failure_recorded_on_the_cell(user, settings, tmp_path):
    typed = notebook_create(actor=user, title="No compiler", language="typescript")
    cell = code(user, typed, "console.log(1)", filename="main.ts")
    settings.ENGRAM_NOTEBOOK_ESBUILD = str(tmp_path / "no-esbuild")
    settings.BASE_DIR = tmp_path
    with pytest.raises(DomainError) as caught:
        cell_run(actor=user, notebook_id=typed.pk, cell_id=cell.pk)
    assert caught.value.code == "execution_failed"
    stored = Cell.objects.get(pk=cell.pk)
    assert stored.status == Cell.Status.FAILED
    assert "make frontend" in stored.stderr


def test_markdown_cells_cannot_run(user, notebook):
    prose = cell_add(actor=user, notebook_id=notebook.pk, cell_type="markdown", content="# prose")
    with pytest.raises(InvalidInput) as caught:
        cell_run(actor=user, notebook_id=notebook.pk, cell_id=prose.pk)
    assert caught.value.field == "cell_id"


def test_the_production_switch_refuses_run_and_install(user, notebook, settings):
    cell = code(user, notebook, "console.log('never')")
    settings.ENGRAM_NOTEBOOK_EXECUTION = False
    for attempt in (lambda: cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk),
                    lambda: notebook_install_deps(actor=user, notebook_id=notebook.pk, dependencies=["is-odd"])):
        with pytest.raises(PermissionDenied) as caught:
            attempt()
        assert caught.value.code == "execution_disabled"
        assert "ENGRAM_NOTEBOOK_EXECUTION=true" in caught.value.message
    assert Cell.objects.get(pk=cell.pk).status == Cell.Status.IDLE


@pytest.mark.network
def test_install_deps_installs_a_real_package_that_cells_then_use(user, notebook, esbuild):
    result = notebook_install_deps(actor=user, notebook_id=notebook.pk, dependencies=["is-odd@3.0.1"])
    assert result.installed == {"is-odd": "3.0.1"}
    assert Notebook.objects.get(pk=notebook.pk).dependencies == {"is-odd": "3.0.1"}
    cell = code(user, notebook, "const isOdd = require('is-odd'); console.log(isOdd(3), isOdd(4));")
    assert cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk).stdout == "true false\n"


@pytest.mark.network
def test_install_deps_fails_clearly_for_a_package_that_does_not_exist(user, notebook):
    with pytest.raises(DomainError) as caught:
        notebook_install_deps(actor=user, notebook_id=notebook.pk,
                              dependencies=["engram-no-such-package-0f3c9e2a7b"])
    assert caught.value.code == "install_failed"
    assert "engram-no-such-package-0f3c9e2a7b" in caught.value.message


@pytest.mark.parametrize("spec", ["https://example.com/x.tgz", "git+ssh://git@github.com/a/b.git", "file:../x",
                                  "../local", "/abs/path", "github:user/repo", "Bad Name", "", "a b@1"])
def test_install_deps_rejects_anything_but_registry_packages(user, notebook, spec):
    with pytest.raises(InvalidInput) as caught:
        notebook_install_deps(actor=user, notebook_id=notebook.pk, dependencies=[spec])
    assert caught.value.field == "dependencies"


def test_install_deps_needs_a_list(user, notebook):
    with pytest.raises(InvalidInput) as caught:
        notebook_install_deps(actor=user, notebook_id=notebook.pk, dependencies="is-odd")
    assert caught.value.field == "dependencies"


# ---- bad input ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("notebook_id", ["abc123", "00000000-0000-0000-0000-000000000000", None, 42])
def test_unknown_or_malformed_notebook_ids_are_not_found(user, notebook_id):
    with pytest.raises(NotFound) as caught:
        notebook_get(actor=user, notebook_id=notebook_id)
    assert caught.value.code == "notebook_not_found"


@pytest.mark.parametrize("cell_id", ["cell_456", "00000000-0000-0000-0000-000000000000"])
def test_unknown_or_malformed_cell_ids_are_not_found(user, notebook, cell_id):
    for read in (cell_get, cell_run):
        with pytest.raises(NotFound) as caught:
            read(actor=user, notebook_id=notebook.pk, cell_id=cell_id)
        assert caught.value.code == "cell_not_found"


def test_a_cell_of_another_notebook_is_not_found(user, notebook):
    other = notebook_create(actor=user, title="Other")
    cell = code(user, other, "1")
    with pytest.raises(NotFound):
        cell_get(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)


@pytest.mark.parametrize(("filename", "words"), [
    (None, "need a filename"), ("", "need a filename"), ("../escape.js", "not allowed"), ("dir/x.js", "not allowed"),
    (".hidden.js", "not allowed"), ("a..js", "not allowed"), ("main.ts", "does not fit"), ("main.py", "does not fit"),
    ("package.json", "does not fit"),
])
def test_bad_filenames_are_refused(user, notebook, filename, words):
    with pytest.raises(InvalidInput) as caught:
        code(user, notebook, "1", filename=filename)
    assert caught.value.field == "filename"
    assert words in caught.value.message


def test_filenames_are_unique_in_a_notebook(user, notebook):
    code(user, notebook, "1", filename="same.js")
    with pytest.raises(InvalidInput) as caught:
        code(user, notebook, "2", filename="same.js")
    assert "already used" in caught.value.message


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"title": ""}, "title"), ({"title": "T", "language": "python"}, "language"),
    ({"title": "T", "template": "nope"}, "template"),
])
def test_bad_notebook_input(user, kwargs, field):
    with pytest.raises(InvalidInput) as caught:
        notebook_create(actor=user, **kwargs)
    assert caught.value.field == field
    if field == "template":
        assert "sequential-feynman" in caught.value.message


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"cell_type": "python", "content": "x"}, "cell_type"),
    ({"cell_type": "markdown", "content": "x", "filename": "a.js"}, "filename"),
    ({"cell_type": "markdown", "content": "x", "position": 5}, "position"),
    ({"cell_type": "markdown", "content": "x", "position": -1}, "position"),
    ({"cell_type": "markdown", "content": 12}, "content"),
    ({"cell_type": "markdown", "content": "a\x00b"}, "content"),
])
def test_bad_cell_input(user, notebook, kwargs, field):
    with pytest.raises(InvalidInput) as caught:
        cell_add(actor=user, notebook_id=notebook.pk, **kwargs)
    assert caught.value.field == field


def test_an_update_needs_something_to_change(user, notebook):
    cell = code(user, notebook, "1")
    with pytest.raises(InvalidInput):
        cell_update(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)


# ---- list, delete, restore ---------------------------------------------------------------------------------

def test_list_counts_cells_in_one_query(user, django_assert_num_queries):
    for title, cells in (("a", 0), ("b", 2), ("c", 3)):
        created = notebook_create(actor=user, title=title)
        for index in range(cells):
            cell_add(actor=user, notebook_id=created.pk, cell_type="markdown", content=str(index))
    with django_assert_num_queries(1):
        counts = {n.title: n.cell_count for n in notebook_list(actor=user)}
    assert counts == {"a": 0, "b": 2, "c": 3}


def test_delete_hides_and_restore_brings_back(user, notebook):
    notebook_delete(actor=user, notebook_id=notebook.pk)
    assert list(notebook_list(actor=user)) == []
    with pytest.raises(NotFound):
        notebook_get(actor=user, notebook_id=notebook.pk)
    notebook_restore(actor=user, notebook_id=notebook.pk)
    assert [n.pk for n in notebook_list(actor=user)] == [notebook.pk]
    with pytest.raises(NotFound):
        notebook_restore(actor=user, notebook_id=notebook.pk)


# ---- export and load ---------------------------------------------------------------------------------------

def test_export_and_load_round_trip_is_lossless(user, settings):
    original = notebook_create(actor=user, title="Round trip", language="typescript", template="sequential-feynman")
    cell_add(actor=user, notebook_id=original.pk, cell_type="code", filename="fences.ts",
             content="const s: string = '```';\nconsole.log(s)")
    cell_add(actor=user, notebook_id=original.pk, cell_type="markdown", content="Trailing note.")
    Notebook.objects.filter(pk=original.pk).update(dependencies={"is-odd": "3.0.1"})
    exported = notebook_export(actor=user, notebook_id=original.pk, path="round/trip.src.md")
    assert exported.path == settings.ENGRAM_NOTEBOOK_DIR / "exports" / str(user.pk) / "round" / "trip.src.md"
    assert exported.path.read_text() == exported.text
    loaded = notebook_load(actor=user, path="round/trip.src.md")
    assert loaded.pk != original.pk
    assert (loaded.title, loaded.language, loaded.template, loaded.dependencies) == (
        "Round trip", "typescript", "sequential-feynman", {"is-odd": "3.0.1"})

    def shape(nb):
        return [(c.position, c.cell_type, c.content, c.filename) for c in cell_list(actor=user, notebook_id=nb.pk)]

    assert shape(loaded) == shape(original)
    assert notebook_export(actor=user, notebook_id=loaded.pk).text == exported.text


def test_export_includes_outputs_that_load_does_not_turn_into_cells(user, notebook):
    cell = code(user, notebook, "console.log('printed once')")
    cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    text = notebook_export(actor=user, notebook_id=notebook.pk).text
    assert "```text output\nprinted once\n```" in text
    loaded = notebook_load(actor=user, text=text)
    assert [c.content for c in cell_list(actor=user, notebook_id=loaded.pk)] == ["console.log('printed once')"]


@pytest.mark.parametrize("path", ["/etc/passwd", "/tmp/x.src.md", "../x.src.md", "a/../../x.src.md", "..",
                                  "a\\b.src.md", ""])
def test_export_and_load_paths_stay_in_the_exports_folder(user, notebook, path):
    for attempt in (lambda: notebook_export(actor=user, notebook_id=notebook.pk, path=path),
                    lambda: notebook_load(actor=user, path=path)):
        with pytest.raises(InvalidInput) as caught:
            attempt()
        assert caught.value.field == "path"


def test_users_cannot_load_each_others_exports(user, other_user, notebook):
    notebook_export(actor=user, notebook_id=notebook.pk, path="mine.src.md")
    with pytest.raises(InvalidInput) as caught:
        notebook_load(actor=other_user, path="mine.src.md")
    assert "no 'mine.src.md'" in caught.value.message


def test_load_errors_name_the_line_and_the_field(user):
    with pytest.raises(InvalidInput) as caught:
        notebook_load(actor=user, text="---\ntitle: T\n---\n\n```js filename=../bad.js\n1\n```\n")
    assert caught.value.field == "text"
    assert caught.value.message.startswith("line 5: filename '../bad.js' is not allowed")
    with pytest.raises(InvalidInput) as caught:
        notebook_load(actor=user, text="---\ntitle: T\nlanguage: cobol\n---\n")
    assert "language" in caught.value.message
    assert not Notebook.objects.filter(owner=user).exists()


def test_load_needs_exactly_one_of_path_and_text(user):
    for kwargs in ({}, {"path": "a.src.md", "text": "x"}):
        with pytest.raises(InvalidInput):
            notebook_load(actor=user, **kwargs)


@pytest.mark.network
def test_install_deps_without_packages_installs_what_a_loaded_notebook_lists(user):
    loaded = notebook_load(actor=user, text='---\ntitle: Deps\ndependencies: {"is-odd": "3.0.1"}\n---\n'
                                            "```js filename=odd.js\nconsole.log(require('is-odd')(7))\n```\n")
    result = notebook_install_deps(actor=user, notebook_id=loaded.pk, dependencies=[])
    assert result.installed == {"is-odd": "3.0.1"}
    cell = cell_list(actor=user, notebook_id=loaded.pk)[0]
    assert cell_run(actor=user, notebook_id=loaded.pk, cell_id=cell.pk).stdout == "true\n"


# ---- isolation ---------------------------------------------------------------------------------------------

def test_bob_cannot_see_or_touch_alices_notebooks_and_cells(user, other_user, notebook):
    cell = code(user, notebook, "console.log('alice')")
    assert list(notebook_list(actor=other_user)) == []
    attempts = {
        "get": lambda: notebook_get(actor=other_user, notebook_id=notebook.pk),
        "list_cells": lambda: cell_list(actor=other_user, notebook_id=notebook.pk),
        "get_cell": lambda: cell_get(actor=other_user, notebook_id=notebook.pk, cell_id=cell.pk),
        "add_cell": lambda: cell_add(actor=other_user, notebook_id=notebook.pk, cell_type="markdown", content="x"),
        "update_cell": lambda: cell_update(actor=other_user, notebook_id=notebook.pk, cell_id=cell.pk, content="x"),
        "run_cell": lambda: cell_run(actor=other_user, notebook_id=notebook.pk, cell_id=cell.pk),
        "install_deps": lambda: notebook_install_deps(actor=other_user, notebook_id=notebook.pk,
                                                      dependencies=["is-odd"]),
        "export": lambda: notebook_export(actor=other_user, notebook_id=notebook.pk),
        "delete": lambda: notebook_delete(actor=other_user, notebook_id=notebook.pk),
        "restore": lambda: notebook_restore(actor=other_user, notebook_id=notebook.pk),
    }
    for name, attempt in attempts.items():
        with pytest.raises(NotFound) as caught:
            attempt()
        assert caught.value.code == "notebook_not_found", name
    stored = Cell.objects.get(pk=cell.pk)
    assert (stored.content, stored.status) == ("console.log('alice')", Cell.Status.IDLE)
    assert notebook_get(actor=user, notebook_id=notebook.pk).deleted_at is None


@pytest.mark.django_db(transaction=True)
def test_a_run_marks_the_cell_running_in_its_own_committed_write(user, notebook, settings):
    """The run happens outside any transaction: another connection sees "running" while node runs."""
    # The cell runs until the watcher has looked and says stop, however slowly node starts; the limit only bounds it.
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = 120
    cell = code(user, notebook, "const fs = require('fs'); fs.writeFileSync('started', 'x');"
                                "const pause = new Int32Array(new SharedArrayBuffer(4));"
                                "while (!fs.existsSync('stop')) Atomics.wait(pause, 0, 0, 20); process.exit(3);")
    started, stop = notebook_directory(notebook) / "started", notebook_directory(notebook) / "stop"
    seen = []
    finished = threading.Event()

    def watch():
        while not started.exists() and not finished.is_set():
            time.sleep(0.05)
        if started.exists():
            seen.append(Cell.objects.get(pk=cell.pk).status)
            stop.write_text("")
        connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        ran = cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    finally:
        finished.set()
        watcher.join()
    assert seen == [Cell.Status.RUNNING]
    assert ran.status == Cell.Status.FAILED
