"""The reasoning pages (/reasoning/) through Django's test client: each page renders for its owner with the
right content, the forms post through the services and redirect, bad input shows the services' errors next
to the field they name (never a 500), list pages keep a fixed number of queries, downloads download."""
import json
import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from apps.reasoning.mental_models import MODELS, TAGS
from apps.reasoning.models import CellRun, Notebook, Thought, ThoughtSession
from apps.reasoning.services.cell_runs import cell_run_execute
from apps.reasoning.services.notebooks import cell_add, notebook_create
from tests.reasoning.model_server import model_server, no_model  # noqa: F401 (fixtures)
from tests.reasoning.thought_support import branched_session, think

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_model")]

UNKNOWN = "00000000-0000-0000-0000-000000000000"


def url(name, *args):
    return reverse(f"reasoning:{name}", args=args)


@pytest.fixture
def chain(user):
    """alice's "Debugging memory leak" session: main line 1-2-4(revises 2)-5(final), branch
    "caching-approach" forking from 2."""
    steps = branched_session(user)
    return steps[0].session


@pytest.fixture
def notebook(user):
    """alice's JavaScript notebook with a markdown cell (holding HTML that must not run) and a code cell."""
    notebook = notebook_create(actor=user, title="Array tricks")
    cell_add(actor=user, notebook_id=notebook.pk, cell_type="markdown",
             content="# Sorting\nNumbers sort **as strings** by default. <script>alert(1)</script>")
    cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="sort.js",
             content="console.log([10, 9, 1].sort().join(','));")
    return notebook


def html_of(response) -> str:
    return response.content.decode()


# Login

def test_every_page_requires_login(client, chain, notebook):
    for address in (url("overview"), url("session-detail", chain.pk), url("session-export", chain.pk),
                    url("notebook-list"), url("notebook-detail", notebook.pk), url("notebook-export", notebook.pk),
                    url("model-list"), url("model-detail", "five-whys"), url("workbench")):
        response = client.get(address)
        assert response.status_code == 302 and response["Location"].startswith(reverse("dashboard:login")), address


def test_the_main_navigation_links_the_reasoning_pages(alice):
    html = html_of(alice.get(reverse("dashboard:home")))
    assert f'href="{url("overview")}"' in html and ">Reasoning<" in html


# The overview

def test_overview_lists_sessions_with_tags_counts_and_state(alice, user, chain):
    think(user, 1, "Should the importer stream rows?", client_key="other-client", session_title="Importer design",
          session_tags=["project:importer"], more=True)
    response = alice.get(url("overview"))
    assert response.status_code == 200
    html = html_of(response)
    assert "Debugging memory leak" in html and "Importer design" in html
    assert "project:myapp" in html and "task:debugging" in html
    rows = {session.title: session for session in response.context["sessions"]}
    assert rows["Debugging memory leak"].thought_count == 5 and rows["Importer design"].thought_count == 1
    assert rows["Debugging memory leak"].completed_at is not None and rows["Importer design"].completed_at is None
    assert "completed</span>" in html and "open</span>" in html
    assert f'href="{url("model-list")}"' in html and f'href="{url("workbench")}"' in html


def test_overview_searches_sessions_by_title_and_by_tag(alice, user, chain):
    think(user, 1, "Which queue?", client_key="other-client", session_title="Queue choice", session_tags=["infra"])
    by_title = alice.get(url("overview"), {"query": "memory leak"})
    assert [s.title for s in by_title.context["sessions"]] == ["Debugging memory leak"]
    by_tag = alice.get(url("overview"), {"tag": "infra"})
    assert [s.title for s in by_tag.context["sessions"]] == ["Queue choice"]
    assert "Sessions tagged" in html_of(by_tag)
    nothing = alice.get(url("overview"), {"query": "no such session"})
    assert list(nothing.context["sessions"]) == [] and "No session matches" in html_of(nothing)


def test_overview_lists_notebooks(alice, notebook):
    html = html_of(alice.get(url("overview")))
    assert "Array tricks" in html and url("notebook-detail", notebook.pk) in html and "2 cells" in html


def test_overview_queries_do_not_grow_with_sessions(alice, user, notebook, django_assert_num_queries):
    for index in range(4):
        think(user, 1, f"Thought about topic {index}", client_key=f"client-{index}", session_title=f"Topic {index}",
              session_tags=["bulk"])
        think(user, 2, "And a second one.", client_key=f"client-{index}")
    # Session, user, the sessions with their thought counts, the notebooks with their cell counts.
    with django_assert_num_queries(4):
        response = alice.get(url("overview"))
    assert len(response.context["sessions"]) == 4


def test_new_session_form_starts_a_session_with_its_first_thought(alice, user):
    response = alice.post(url("overview"), {"title": "Pick a cache", "tags": "infra, Caching",
                                            "thought": "Redis or memcached?", "total_thoughts": "3"})
    session = ThoughtSession.objects.get(owner=user, title="Pick a cache")
    assert response.status_code == 302 and response["Location"] == url("session-detail", session.pk)
    assert session.tags == ["infra", "caching"] and session.completed_at is None
    thought = session.thoughts.get()
    assert (thought.thought, thought.thought_number, thought.total_thoughts) == ("Redis or memcached?", 1, 3)
    assert thought.node is not None and thought.node.kind == "thought"


def test_new_session_form_shows_field_errors(alice, user):
    response = alice.post(url("overview"), {"title": "Empty", "thought": "   ", "total_thoughts": "3"})
    assert response.status_code == 200
    assert "thought cannot be empty" in str(response.context["form"].errors["thought"])
    assert 'id="id_thought_error"' in html_of(response)
    zero = alice.post(url("overview"), {"title": "Zero", "thought": "Hello", "total_thoughts": "0"})
    assert "between 1 and" in str(zero.context["form"].errors["total_thoughts"])
    words = alice.post(url("overview"), {"title": "Words", "thought": "Hello", "total_thoughts": "three"})
    assert "whole number" in str(words.context["form"].errors["total_thoughts"])
    assert not ThoughtSession.objects.filter(owner=user).exists()


# A session

def test_session_page_draws_the_tree_with_branch_revision_hashes_and_parents(alice, chain):
    response = alice.get(url("session-detail", chain.pk))
    assert response.status_code == 200
    html = html_of(response)
    thoughts = {(t.branch_id, t.thought_number): t for t in Thought.objects.filter(session=chain)}
    one, two, branch, revision, final = (thoughts[("", 1)], thoughts[("", 2)], thoughts[("caching-approach", 3)],
                                         thoughts[("", 4)], thoughts[("", 5)])
    # The main line in order, the branch nested inside thought 2's item, before thought 4.
    positions = [html.index(f'id="thought-{t.pk}"') for t in (one, two, branch, revision, final)]
    assert positions == sorted(positions)
    two_item = html[positions[1]:positions[3]]
    assert 'class="thought-forks"' in two_item and "Branch <strong>caching-approach</strong>" in two_item
    assert "from #2" in two_item
    # The revision is marked and links to the thought it revises.
    revision_item = html[positions[3]:positions[4]]
    assert f'<li class="thought thought-revision" id="thought-{revision.pk}">' in html
    assert f'href="#thought-{two.pk}">revises #2</a>' in revision_item
    # Each thought: its text, short hash, parent.
    assert "The leak grows with every request" in html and two.content_hash[:12] in html
    assert f'parent <a href="#thought-{two.pk}">#2</a>' in html[positions[2]:positions[3]]
    assert "parent genesis" in html[positions[0]:positions[1]]
    assert "chain valid · 5 checked" in html and "final</span>" in html


def test_session_page_shows_where_a_tampered_chain_breaks(alice, chain):
    tampered = Thought.objects.get(session=chain, thought_number=2, branch_id="")
    Thought.objects.filter(pk=tampered.pk).update(thought="Rewritten after the fact.")
    html = html_of(alice.get(url("session-detail", chain.pk)))
    assert "chain broken at thought 2" in html and "chain valid" not in html
    assert f'<a href="#thought-{tampered.pk}">Thought 2</a>' in html


def test_add_thought_form_continues_the_chain(alice, chain):
    page = alice.get(url("session-detail", chain.pk))
    assert page.context["form"].initial["thought_number"] == 6
    response = alice.post(url("session-detail", chain.pk), {
        "thought": "On reflection, add a metric for the cache size.", "thought_number": "6", "total_thoughts": "6",
        "next_thought_needed": "on"})
    added = Thought.objects.get(session=chain, thought_number=6)
    assert response.status_code == 302 and response["Location"] == url("session-detail", chain.pk) + f"#thought-{added.pk}"
    assert added.parent_hash == Thought.objects.get(session=chain, thought_number=5).content_hash
    chain.refresh_from_db()
    assert chain.completed_at is None  # the new thought reopened the completed session


def test_add_thought_form_revises_and_branches(alice, chain):
    alice.post(url("session-detail", chain.pk), {"thought": "Thought 1 was too vague.", "thought_number": "6",
                                                 "total_thoughts": "7", "next_thought_needed": "on",
                                                 "revises_thought": "1"})
    revision = Thought.objects.get(session=chain, thought_number=6)
    assert revision.is_revision and revision.revises_thought == 1
    alice.post(url("session-detail", chain.pk), {"thought": "Or shard the cache.", "thought_number": "7",
                                                 "total_thoughts": "7", "next_thought_needed": "on",
                                                 "branch_from_thought": "5", "branch_id": "sharding"})
    branch = Thought.objects.get(session=chain, branch_id="sharding")
    assert branch.branch_from_thought == 5
    html = html_of(alice.get(url("session-detail", chain.pk)))
    assert "Branch <strong>sharding</strong>" in html and "revises #1</a>" in html


def test_add_thought_form_shows_the_services_errors_next_to_their_fields(alice, chain):
    count = Thought.objects.filter(session=chain).count()
    missing = alice.post(url("session-detail", chain.pk), {"thought": "Revising nothing", "thought_number": "6",
                                                           "total_thoughts": "6", "revises_thought": "42"})
    assert missing.status_code == 200
    assert "Thought 42 does not exist" in str(missing.context["form"].errors["revises_thought"])
    assert "Revise or branch" in html_of(missing) and "<details class=\"thought-options\" open>" in html_of(missing)
    fork = alice.post(url("session-detail", chain.pk), {"thought": "Fork of nothing", "thought_number": "6",
                                                        "total_thoughts": "6", "branch_from_thought": "9",
                                                        "branch_id": "ghost"})
    assert "Thought 9 does not exist" in str(fork.context["form"].errors["branch_from_thought"])
    unnamed = alice.post(url("session-detail", chain.pk), {"thought": "A branch without a name", "thought_number": "6",
                                                           "total_thoughts": "6", "branch_from_thought": "2"})
    assert "Branch id is missing" in str(unnamed.context["form"].errors["branch_id"])
    zero = alice.post(url("session-detail", chain.pk), {"thought": "Zero", "thought_number": "0", "total_thoughts": "6"})
    assert "Thought number must be" in str(zero.context["form"].errors["thought_number"])
    blank = alice.post(url("session-detail", chain.pk), {"thought": "No number", "total_thoughts": "6"})
    assert "Enter a number." in str(blank.context["form"].errors["thought_number"])
    bad_branch = alice.post(url("session-detail", chain.pk), {"thought": "x", "thought_number": "6",
                                                              "total_thoughts": "6", "branch_from_thought": "2",
                                                              "branch_id": "no spaces allowed"})
    assert "branchId must be" in str(bad_branch.context["form"].errors["branch_id"]) or \
        "Branch id must be" in str(bad_branch.context["form"].errors["branch_id"])
    assert Thought.objects.filter(session=chain).count() == count


def test_thought_text_is_escaped(alice, user):
    added = think(user, 1, "<script>alert('x')</script> & <b>bold</b>", client_key="xss",
                  session_title="<img src=x onerror=alert(1)>")
    html = html_of(alice.get(url("session-detail", added.session.pk)))
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;b&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_export_downloads_the_seeds_session_export_format(alice, chain):
    response = alice.get(url("session-export", chain.pk))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert re.match(r'attachment; filename="thoughtbox-debugging-memory-leak-\d{8}T\d{6}\.json"',
                    response["Content-Disposition"])
    export = json.loads(response.content)
    assert export["version"] and export["exportedAt"]
    assert export["session"]["id"] == str(chain.pk) and export["session"]["title"] == "Debugging memory leak"
    assert [node["thought"]["number"] for node in export["thoughts"]] == [1, 2, 3, 4, 5]
    assert export["thoughts"][2]["thought"]["branchId"] == "caching-approach" and export["thoughts"][2]["branchOrigin"]
    assert export["integrity"]["valid"] is True


def test_delete_hides_the_session_and_restore_brings_it_back(alice, chain):
    response = alice.post(url("session-delete", chain.pk))
    assert response.status_code == 302 and response["Location"] == url("overview")
    chain.refresh_from_db()
    assert chain.deleted_at is not None
    assert list(alice.get(url("overview")).context["sessions"]) == []
    listed = html_of(alice.get(url("overview"), {"deleted": "on"}))
    assert "deleted</span>" in listed and url("session-restore", chain.pk) in listed
    page = html_of(alice.get(url("session-detail", chain.pk)))
    assert "deleted</span>" in page and 'id="add-thought"' not in page and url("session-export", chain.pk) not in page
    response = alice.post(url("session-restore", chain.pk))
    assert response.status_code == 302
    chain.refresh_from_db()
    assert chain.deleted_at is None
    again = alice.post(url("session-restore", chain.pk), follow=True)
    assert "not deleted" in html_of(again)


def test_unknown_and_malformed_session_ids_are_the_404_page(alice):
    for address in (url("session-detail", UNKNOWN), url("session-export", UNKNOWN)):
        assert alice.get(address).status_code == 404
    for address in (url("session-delete", UNKNOWN), url("session-restore", UNKNOWN), url("session-detail", UNKNOWN)):
        assert alice.post(address, {"thought": "x"}).status_code == 404
    assert alice.get("/reasoning/sessions/not-a-uuid/").status_code == 404


# Notebooks

def test_notebook_list_shows_notebooks_and_creates_one_from_a_template(alice, user, notebook):
    response = alice.get(url("notebook-list"))
    assert response.status_code == 200
    html = html_of(response)
    assert "Array tricks" in html and "JavaScript" in html
    assert {n.title: n.cell_count for n in response.context["notebooks"]} == {"Array tricks": 2}
    template = next(iter(response.context["templates"]))
    created = alice.post(url("notebook-list"), {"title": "From a template", "language": "javascript",
                                                "template": template})
    made = Notebook.objects.get(owner=user, title="From a template")
    assert created.status_code == 302 and created["Location"] == url("notebook-detail", made.pk)
    assert made.template == template and made.cells.exists()


def test_notebook_list_queries_do_not_grow_with_notebooks(alice, user, django_assert_num_queries):
    for index in range(4):
        made = notebook_create(actor=user, title=f"Notebook {index}")
        cell_add(actor=user, notebook_id=made.pk, cell_type="markdown", content="Hello")
    # Session, user, the notebooks with their cell counts.
    with django_assert_num_queries(3):
        response = alice.get(url("notebook-list"))
    assert len(response.context["notebooks"]) == 4


def test_new_notebook_form_shows_field_errors(alice, user):
    response = alice.post(url("notebook-list"), {"title": "   ", "language": "javascript"})
    assert response.status_code == 200 and response.context["form"].errors["title"]
    cobol = alice.post(url("notebook-list"), {"title": "Old code", "language": "cobol"})
    assert "cobol" in str(cobol.context["form"].errors["language"])
    assert not Notebook.objects.filter(owner=user).exists()


def test_notebook_page_shows_cells_in_order_with_markdown_rendered_safely(alice, notebook):
    response = alice.get(url("notebook-detail", notebook.pk))
    assert response.status_code == 200
    html = html_of(response)
    assert "<h1>Sorting</h1>" in html and "<strong>as strings</strong>" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.index("Sorting</h1>") < html.index("sort.js")
    assert "console.log([10, 9, 1].sort().join(&#x27;,&#x27;));" in html
    assert "Not run" in html


def run_in_worker(run_id) -> None:
    """What the worker does with the page's queued run (the task reasoning.cell_run calls this service)."""
    cell_run_execute(run_id=run_id)


def test_run_queues_the_cell_and_its_page_refreshes_until_it_shows_the_output(alice, notebook):
    code = notebook.cells.get(cell_type="code")
    response = alice.post(url("cell-run", notebook.pk, code.pk))
    run = CellRun.objects.get(cell=code)
    assert response.status_code == 302 and response["Location"] == url("run-detail", run.pk)
    assert run.status == "queued"
    waiting = alice.get(url("run-detail", run.pk))
    assert waiting["Refresh"] == "2" and "Queued: waiting for a worker" in html_of(waiting)
    assert 'class="run-spinner"' in html_of(waiting) and "message-success" not in html_of(waiting)
    notebook_page = html_of(alice.get(url("notebook-detail", notebook.pk)))
    assert f'data-active-run="{run.pk}"' in notebook_page and url("run-cancel", run.pk) in notebook_page

    run_in_worker(run.pk)
    done = alice.get(url("run-detail", run.pk))
    assert "Refresh" not in done
    assert '<p class="message message-success" role="status">sort.js: completed, exit code 0.</p>' in html_of(done)
    assert '<pre class="output-stdout">1,10,9' in html_of(done)
    code.refresh_from_db()
    assert code.status == "completed" and code.stdout.strip() == "1,10,9"
    html = html_of(alice.get(url("notebook-detail", notebook.pk)))
    assert '<pre class="output-stdout">1,10,9' in html and "exit code 0" in html and f"{code.duration_ms} ms" in html
    assert "data-active-run" not in html


def test_a_cell_that_throws_is_shown_as_a_failure_with_its_error_output(alice, user, notebook):
    failing = cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="boom.js",
                       content="throw new Error('kaboom');")
    alice.post(url("cell-run", notebook.pk, failing.pk))
    run = CellRun.objects.get(cell=failing)
    run_in_worker(run.pk)
    page = html_of(alice.get(url("run-detail", run.pk)))
    assert '<p class="message message-error" role="alert">boom.js: the code failed (exit code 1).</p>' in page
    assert "message-success" not in page and "kaboom" in page
    html = html_of(alice.get(url("notebook-detail", notebook.pk)))
    item = html[html.index(f'id="cell-{failing.pk}"'):]
    assert "Failed" in item and "kaboom" in item and '<pre class="output-stderr">' in item


def test_an_endless_loop_times_out_and_is_shown_as_a_failure_not_a_success(alice, user, notebook, settings):
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = 1
    endless = cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="loop.js",
                       content="while (true) {}")
    alice.post(url("cell-run", notebook.pk, endless.pk))
    run = CellRun.objects.get(cell=endless)
    run_in_worker(run.pk)
    run.refresh_from_db()
    assert (run.status, run.exit_code) == ("failed", 124)
    page = html_of(alice.get(url("run-detail", run.pk)))
    assert ('<p class="message message-error" role="alert">loop.js: timed out after 1 s (the notebook time limit); '
            'the process was killed (exit code 124).</p>') in page
    assert "message-success" not in page


def test_the_page_script_gets_the_run_at_once_and_a_second_run_of_a_running_cell_is_refused(alice, notebook):
    code = notebook.cells.get(cell_type="code")
    posted = alice.post(url("cell-run", notebook.pk, code.pk), HTTP_ACCEPT="application/json")
    assert posted.status_code == 202
    body = posted.json()
    run_id = body["run"]["id"]
    assert body["run"]["status"] == "queued" and body["run"]["finished"] is False and body["run"]["filename"] == "sort.js"
    assert body["links"] == {"page": url("run-detail", run_id), "status": url("run-status", run_id),
                             "cancel": url("run-cancel", run_id), "socket": "/ws/runs/"}
    again = alice.post(url("cell-run", notebook.pk, code.pk), HTTP_ACCEPT="application/json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "cell_running"
    assert again.json()["error"]["details"]["run_id"] == run_id
    # Without the script, the second click lands on the run already going.
    plain = alice.post(url("cell-run", notebook.pk, code.pk))
    assert plain.status_code == 302 and plain["Location"] == url("run-detail", run_id)

    cancelled = alice.post(url("run-cancel", run_id), HTTP_ACCEPT="application/json")
    assert cancelled.status_code == 200 and cancelled.json()["run"]["status"] == "cancelled"
    run_in_worker(run_id)  # the task, delivered after the cancel, finds nothing to do
    status = alice.get(url("run-status", run_id)).json()["run"]
    assert (status["status"], status["message"], status["stdout"]) == ("cancelled", "cancelled before it started", "")
    assert alice.post(url("cell-run", notebook.pk, code.pk), HTTP_ACCEPT="application/json").status_code == 202


def test_the_run_page_of_a_cancelled_run_is_an_error_and_cancel_without_script_redirects(alice, notebook):
    code = notebook.cells.get(cell_type="code")
    alice.post(url("cell-run", notebook.pk, code.pk))
    run = CellRun.objects.get(cell=code)
    response = alice.post(url("run-cancel", run.pk))
    assert response.status_code == 302 and response["Location"] == url("run-detail", run.pk)
    page = html_of(alice.get(url("run-detail", run.pk)))
    assert "message-error" in page and "cancelled before it started" in page and "Refresh" not in page


def test_the_run_endpoints_say_what_is_wrong_as_json(alice, notebook, settings):
    prose = notebook.cells.get(cell_type="markdown")
    response = alice.post(url("cell-run", notebook.pk, prose.pk), HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and response.json()["error"]["details"]["field"] == "cell_id"
    settings.ENGRAM_NOTEBOOK_EXECUTION = False
    code = notebook.cells.get(cell_type="code")
    response = alice.post(url("cell-run", notebook.pk, code.pk), HTTP_ACCEPT="application/json")
    assert response.status_code == 403 and response.json()["error"]["code"] == "execution_disabled"
    assert alice.get(url("run-status", UNKNOWN)).status_code == 404
    assert alice.get(url("run-detail", UNKNOWN)).status_code == 404
    assert alice.post(url("run-cancel", UNKNOWN)).status_code == 404


def test_running_a_cell_when_execution_is_disabled_says_so(alice, notebook, settings):
    settings.ENGRAM_NOTEBOOK_EXECUTION = False
    code = notebook.cells.get(cell_type="code")
    response = alice.post(url("cell-run", notebook.pk, code.pk), follow=True)
    html = html_of(response)
    assert response.status_code == 200 and "message-error" in html and "ENGRAM_NOTEBOOK_EXECUTION" in html
    code.refresh_from_db()
    assert code.status == "idle"


def test_add_and_edit_cells(alice, notebook):
    response = alice.post(url("cell-add", notebook.pk), {"cell_type": "code", "filename": "sum.js",
                                                         "content": "console.log(1 + 2);"})
    added = notebook.cells.get(filename="sum.js")
    assert response.status_code == 302 and response["Location"].endswith(f"#cell-{added.pk}")
    assert added.position == max(c.position for c in notebook.cells.all())
    prefix = f"cell-{added.pk}"
    edited = alice.post(url("cell-edit", notebook.pk, added.pk), {f"{prefix}-content": "console.log(40 + 2);",
                                                                  f"{prefix}-filename": "answer.js"})
    assert edited.status_code == 302
    added.refresh_from_db()
    assert (added.content, added.filename) == ("console.log(40 + 2);", "answer.js")


def test_cell_forms_show_field_errors(alice, notebook):
    count = notebook.cells.count()
    bad_type = alice.post(url("cell-add", notebook.pk), {"cell_type": "sql", "content": "select 1"})
    assert bad_type.status_code == 200 and bad_type.context["add_form"].errors["cell_type"]
    bad_position = alice.post(url("cell-add", notebook.pk), {"cell_type": "code", "content": "1", "filename": "a.js",
                                                             "position": "-4"})
    assert bad_position.status_code == 200 and bad_position.context["add_form"].errors
    assert notebook.cells.count() == count


def test_install_dependencies_shows_the_services_complaints(alice, notebook, settings):
    url_spec = alice.post(url("notebook-deps", notebook.pk), {"dependencies": "https://evil.example/x.tgz"})
    assert url_spec.status_code == 200
    assert "not an npm package from the registry" in str(url_spec.context["deps_form"].errors["dependencies"])
    empty = alice.post(url("notebook-deps", notebook.pk), {"dependencies": ""})
    assert "Name the packages to install" in str(empty.context["deps_form"].errors["dependencies"])
    settings.ENGRAM_NOTEBOOK_EXECUTION = False
    disabled = alice.post(url("notebook-deps", notebook.pk), {"dependencies": "lodash"})
    assert disabled.status_code == 200 and "ENGRAM_NOTEBOOK_EXECUTION" in html_of(disabled)
    assert 'role="alert"' in html_of(disabled)
    notebook.refresh_from_db()
    assert notebook.dependencies == {}


def test_export_downloads_the_notebook_as_src_md_and_load_brings_it_back(alice, user, notebook):
    response = alice.get(url("notebook-export", notebook.pk))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"] == 'attachment; filename="array-tricks.src.md"'
    text = response.content.decode()
    assert "sort.js" in text and "console.log([10, 9, 1].sort().join(','));" in text

    from django.core.files.uploadedfile import SimpleUploadedFile
    upload = SimpleUploadedFile("array-tricks.src.md", text.encode(), content_type="text/markdown")
    loaded = alice.post(url("notebook-load"), {"file": upload})
    copy = Notebook.objects.filter(owner=user).exclude(pk=notebook.pk).get()
    assert loaded.status_code == 302 and loaded["Location"] == url("notebook-detail", copy.pk)
    assert [c.filename for c in copy.cells.order_by("position") if c.cell_type == "code"] == ["sort.js"]


def test_loading_a_file_that_is_not_a_notebook_shows_the_error(alice, user):
    from django.core.files.uploadedfile import SimpleUploadedFile
    binary = alice.post(url("notebook-load"), {"file": SimpleUploadedFile("x.src.md", b"\xff\xfe\x00garbage")})
    assert binary.status_code == 200 and "not UTF-8" in str(binary.context["load_form"].errors["file"])
    missing = alice.post(url("notebook-load"), {})
    assert missing.status_code == 200 and missing.context["load_form"].errors["file"]
    assert not Notebook.objects.filter(owner=user).exists()


def test_delete_and_restore_a_notebook(alice, notebook):
    response = alice.post(url("notebook-delete", notebook.pk), follow=True)
    assert response.redirect_chain == [(url("notebook-list"), 302)]
    notebook.refresh_from_db()
    assert notebook.deleted_at is not None
    assert list(response.context["notebooks"]) == [] and "Notebook “Array tricks” moved to the" in html_of(response)
    assert f'action="{url("notebook-restore", notebook.pk)}"' in html_of(response)  # the message's Undo
    page = html_of(alice.get(url("notebook-detail", notebook.pk)))  # read only, to restore it
    assert "This notebook was deleted on" in page and url("cell-add", notebook.pk) not in page
    restored = alice.post(url("notebook-restore", notebook.pk))
    assert restored.status_code == 302
    notebook.refresh_from_db()
    assert notebook.deleted_at is None


def test_deleted_notebooks_are_listed_on_request_with_a_restore_button(alice, notebook):
    alice.post(url("notebook-delete", notebook.pk))
    assert list(alice.get(url("notebook-list")).context["notebooks"]) == []
    response = alice.get(url("notebook-list"), {"deleted": "include"})
    assert [row.pk for row in response.context["notebooks"]] == [notebook.pk]
    page = html_of(response)
    assert "Hide deleted" in page and f'action="{url("notebook-restore", notebook.pk)}"' in page
    alice.post(url("notebook-restore", notebook.pk))
    assert [row.pk for row in alice.get(url("notebook-list")).context["notebooks"]] == [notebook.pk]


def test_unknown_notebook_and_cell_ids_are_the_404_page(alice, notebook):
    code = notebook.cells.get(cell_type="code")
    for address in (url("notebook-detail", UNKNOWN), url("notebook-export", UNKNOWN)):
        assert alice.get(address).status_code == 404
    for address in (url("cell-add", UNKNOWN), url("cell-run", UNKNOWN, code.pk), url("cell-run", notebook.pk, UNKNOWN),
                    url("cell-edit", notebook.pk, UNKNOWN), url("notebook-deps", UNKNOWN),
                    url("notebook-delete", UNKNOWN), url("notebook-restore", UNKNOWN)):
        assert alice.post(address, {"content": "x", "cell_type": "code", "dependencies": "lodash",
                                    f"cell-{UNKNOWN}-content": "x"}).status_code == 404, address


# Mental models

def test_model_list_shows_every_model_and_filters_by_tag(alice):
    response = alice.get(url("model-list"))
    assert response.status_code == 200
    html = html_of(response)
    assert len(response.context["models"]) == len(MODELS) == 15
    for model in MODELS.values():
        assert url("model-detail", model.name) in html
    for tag in TAGS:
        assert f'href="?tag={tag}"' in html
    tag = "debugging"
    filtered = alice.get(url("model-list"), {"tag": tag})
    assert {m.name for m in filtered.context["models"]} == {m.name for m in MODELS.values() if tag in m.tags}
    assert TAGS[tag] in html_of(filtered) and 'aria-current="true">debugging<' in html_of(filtered)


def test_an_unknown_tag_says_so_and_lists_every_model(alice):
    response = alice.get(url("model-list"), {"tag": "astrology"}, follow=True)
    assert response.status_code == 200 and len(response.context["models"]) == 15
    assert "message-error" in html_of(response) and "astrology" in html_of(response)


def test_model_page_shows_what_when_steps_example_pitfalls_and_related(alice):
    model = MODELS["five-whys"]
    response = alice.get(url("model-detail", model.name))
    assert response.status_code == 200
    html = html_of(response)
    assert escape(model.title) in html and escape(model.summary) in html
    for part in (*model.steps, *model.pitfalls, *model.when_to_use):
        assert escape(part) in html
    for other in model.related:
        assert url("model-detail", other) in html
    assert alice.get(url("model-detail", "no-such-model")).status_code == 404


# The workbench

WORKBENCH_RUNS = {
    "think": ({"problem": "How to optimize database query performance?", "mode": "analytical",
               "background": "PostgreSQL database with 1M records", "constraints": "No schema changes"},
              ["Conclusion:", "confidence"]),
    "analyze-systematically": ({"problem": "Why is the system experiencing intermittent failures?",
                                "preferred_framework": "root-cause-analysis"}, ["Root Cause Analysis", "Steps"]),
    "think-parallel": ({"problem": "How should we approach the product roadmap for Q1?", "timeout_ms": "5000"},
                       ["Conclusion:", "Insights"]),
    "decompose": ({"problem": "Build a scalable web application", "max_depth": "2"},
                  ["Hierarchy", "Execution order", "class=\"subproblems"]),
    "assess-confidence": ({"reasoning": "Based on benchmark results, the optimization will improve throughput by 40%",
                           "evidence": "Benchmark results showing 40% improvement\nLoad test data",
                           "context": "Production deployment decision"}, ["overall", "evidenceQuality"]),
    "detect-bias": ({"reasoning": "We have already invested two years and a million dollars in this platform, so "
                                  "we cannot abandon it now. All the data I looked at confirms I was right."},
                    ["Correction:", "bias-type"]),
    "detect-emotion": ({"text": "I am so happy and grateful, this is wonderful news!", "include_discrete": "on"},
                       ["valence", "arousal", "dominance", "Primary:"]),
    "analyze-reasoning": ({"reasoning": "Sales rose after the ad campaign, so the campaign caused the rise. "
                                        "Therefore we should double the ad budget.",
                           "include_confidence": "on", "include_bias": "on", "include_emotion": "on"},
                          ["coherence", "Biases", "Circumplex"]),
}


@pytest.mark.parametrize("tool", list(WORKBENCH_RUNS))
def test_every_workbench_tool_runs_and_shows_its_result(alice, tool):
    page = alice.get(url("workbench"), {"tool": tool})
    assert page.status_code == 200 and page.context["tool"].slug == tool and page.context["result"] is None
    fields, expected = WORKBENCH_RUNS[tool]
    response = alice.post(url("workbench") + f"?tool={tool}", {f"{tool}-{name}": value for name, value in fields.items()})
    assert response.status_code == 200 and not response.context["form"].errors
    result = response.context["result"]
    assert result["method"] == "deterministic"
    html = html_of(response)
    assert 'id="result"' in html and "method: deterministic" in html
    for text in expected:
        assert text in html, (tool, text)


def test_workbench_results_depend_on_the_input(alice):
    def primary(text):
        response = alice.post(url("workbench") + "?tool=detect-emotion",
                              {"detect-emotion-text": text, "detect-emotion-include_discrete": "on"})
        return response.context["result"]["discrete"]["primary"], response.context["result"]["circumplex"]["valence"]

    happy, sad = primary("I am so happy and delighted, what a joyful day!"), primary(
        "I feel miserable and heartbroken, everything is lost and hopeless.")
    assert happy[0] != sad[0] and happy[1] > sad[1]


def test_workbench_shows_the_bias_found_with_its_evidence_and_correction(alice):
    response = alice.post(url("workbench") + "?tool=detect-bias", {"detect-bias-reasoning": WORKBENCH_RUNS[
        "detect-bias"][0]["reasoning"]})
    biases = response.context["result"]["biases"]
    assert "sunk_cost" in {bias["type"] for bias in biases}
    html = html_of(response)
    for bias in biases:
        assert bias["correction"].replace("'", "&#x27;")[:30] in html


def test_workbench_decomposition_is_a_nested_list_with_the_execution_order(alice):
    response = alice.post(url("workbench") + "?tool=decompose", {"decompose-problem": "Build a scalable web application",
                                                                 "decompose-max_depth": "3"})
    result, presentation = response.context["result"], response.context["presentation"]
    assert len(presentation["execution_steps"]) == len(result["executionOrder"])
    children = [node for root in presentation["subproblem_tree"] for node in root["children"]]
    assert children and all(node["parent"] for node in children)
    html = html_of(response)
    first = result["subProblems"][0]
    assert f'id="sub-{first["id"]}"' in html and f'href="#sub-{first["id"]}"' in html


def test_workbench_links_the_memories_used_as_evidence(alice, user, store):
    memory = store(user, "Our PostgreSQL queries got slow after the orders table passed a million rows; an index "
                         "on customer_id fixed it.")
    response = alice.post(url("workbench") + "?tool=think", {"think-problem": "How to optimize PostgreSQL query "
                                                                             "performance on the orders table?",
                                                             "think-mode": "analytical"})
    assert str(memory.pk) in {item["id"] for item in response.context["result"]["memories"]}
    assert reverse("dashboard:memory-detail", args=[memory.pk]) in html_of(response)


def test_workbench_shows_field_errors_and_unknown_tools_are_404(alice):
    empty = alice.post(url("workbench") + "?tool=think", {"think-problem": "  ", "think-mode": "analytical"})
    assert empty.status_code == 200 and empty.context["result"] is None
    assert empty.context["form"].errors["problem"]
    mode = alice.post(url("workbench") + "?tool=think", {"think-problem": "Why?", "think-mode": "dreamy"})
    assert mode.context["form"].errors["mode"]
    timeout = alice.post(url("workbench") + "?tool=think-parallel", {"think-parallel-problem": "Why?",
                                                                     "think-parallel-timeout_ms": "5"})
    assert timeout.context["form"].errors["timeout_ms"] and timeout.context["result"] is None
    depth = alice.post(url("workbench") + "?tool=decompose", {"decompose-problem": "Why?", "decompose-max_depth": "9"})
    assert depth.context["form"].errors["max_depth"]
    assert alice.get(url("workbench"), {"tool": "astrology"}).status_code == 404


def test_workbench_with_a_configured_model_says_the_model_ran(alice, model_server):  # noqa: F811
    response = alice.post(url("workbench") + "?tool=detect-bias", {"detect-bias-reasoning": "I only read the studies "
                                                                                          "that agreed with me."})
    assert response.status_code == 200 and model_server.requests
    assert response.context["result"]["method"] == "llm"
    html = html_of(response)
    assert "method: llm" in html and "Seek out data that could refute the hypothesis" in html


def test_workbench_shows_an_unreachable_model_as_an_error_not_a_500(alice, model_server):  # noqa: F811
    model_server.status = 503
    response = alice.post(url("workbench") + "?tool=detect-bias", {"detect-bias-reasoning": "It must be right."})
    assert response.status_code == 200 and response.context["result"] is None
    assert model_server.base_url in " ".join(response.context["form"].non_field_errors())
    assert 'role="alert"' in html_of(response)
