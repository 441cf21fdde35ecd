"""Isolation of the reasoning pages: another user's thought session, notebook or cell is the 404 page on every
page and every POST (the same answer as an unknown id, so nothing leaks), changes nothing, and never shows up
in bob's lists, searches, downloads or workbench evidence."""
import pytest
from django.urls import reverse

from apps.reasoning.models import Cell, CellRun, Thought
from tests.reasoning.test_pages import chain, html_of, notebook, url  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def test_another_users_session_is_the_404_page_on_every_page_and_post(bob, chain):
    count = Thought.objects.filter(session=chain).count()
    for address in (url("session-detail", chain.pk), url("session-export", chain.pk)):
        assert bob.get(address).status_code == 404, address
    for address in (url("session-detail", chain.pk), url("session-delete", chain.pk), url("session-restore", chain.pk)):
        response = bob.post(address, {"thought": "Mine now", "thought_number": "6", "total_thoughts": "6"})
        assert response.status_code == 404, address
    chain.refresh_from_db()
    assert chain.deleted_at is None and Thought.objects.filter(session=chain).count() == count


def test_a_deleted_session_of_another_user_cannot_be_restored(alice, bob, chain):
    alice.post(url("session-delete", chain.pk))
    assert bob.post(url("session-restore", chain.pk)).status_code == 404
    assert bob.get(url("session-detail", chain.pk)).status_code == 404
    chain.refresh_from_db()
    assert chain.deleted_at is not None


def test_another_users_sessions_never_show_in_the_overview_or_its_search(bob, chain):
    for params in ({}, {"query": "memory leak"}, {"tag": "task:debugging"}, {"deleted": "on"}):
        response = bob.get(url("overview"), params)
        assert list(response.context["sessions"]) == [], params
        assert "Debugging memory leak" not in html_of(response)


def test_another_users_notebook_and_cells_are_the_404_page_on_every_page_and_post(bob, notebook):
    code = notebook.cells.get(cell_type="code")
    prefix = f"cell-{code.pk}"
    for address in (url("notebook-detail", notebook.pk), url("notebook-export", notebook.pk)):
        assert bob.get(address).status_code == 404, address
    for address in (url("cell-add", notebook.pk), url("cell-edit", notebook.pk, code.pk), url("cell-run", notebook.pk, code.pk),
                    url("notebook-deps", notebook.pk), url("notebook-delete", notebook.pk),
                    url("notebook-restore", notebook.pk)):
        response = bob.post(address, {"cell_type": "code", "content": "process.exit(3)", f"{prefix}-content": "hacked",
                                      "dependencies": "left-pad"})
        assert response.status_code == 404, address
    code.refresh_from_db()
    notebook.refresh_from_db()
    assert code.content.startswith("console.log") and code.status == "idle" and notebook.deleted_at is None
    assert notebook.cells.count() == 2 and notebook.dependencies == {}


def test_bob_cannot_watch_read_or_cancel_alices_run(alice, bob, notebook):
    code = notebook.cells.get(cell_type="code")
    run_id = alice.post(url("cell-run", notebook.pk, code.pk), HTTP_ACCEPT="application/json").json()["run"]["id"]
    for address in (url("run-detail", run_id), url("run-status", run_id)):
        assert bob.get(address).status_code == 404, address
    assert bob.post(url("run-cancel", run_id)).status_code == 404
    assert bob.post(url("run-cancel", run_id), HTTP_ACCEPT="application/json").status_code == 404
    assert CellRun.objects.get(pk=run_id).status == "queued"
    assert f'data-active-run="{run_id}"' not in html_of(bob.get(url("notebook-list")))


def test_a_cell_of_another_users_notebook_is_404_through_bobs_own_notebook(bob, other_user, notebook):
    from apps.reasoning.services.notebooks import notebook_create

    own = notebook_create(actor=other_user, title="Bob's notebook")
    code = notebook.cells.get(cell_type="code")
    for address in (url("cell-run", own.pk, code.pk), url("cell-edit", own.pk, code.pk)):
        assert bob.post(address, {f"cell-{code.pk}-content": "hacked"}).status_code == 404, address
    assert Cell.objects.get(pk=code.pk).content.startswith("console.log")


def test_another_users_notebooks_never_show_in_bobs_lists(alice, bob, notebook):
    alice.post(url("notebook-delete", notebook.pk))
    for address, params in ((url("notebook-list"), {}), (url("notebook-list"), {"deleted": "1"}), (url("overview"), {})):
        response = bob.get(address, params)
        assert list(response.context["notebooks"]) == [] and "Array tricks" not in html_of(response)


def test_the_workbench_never_shows_another_users_memories(alice, bob, user, store):
    secret = store(user, "Alice's PostgreSQL orders table needs an index on customer_id to stay fast.")
    problem = {"think-problem": "How to make the PostgreSQL orders table queries fast?", "think-mode": "analytical"}
    mine = alice.post(url("workbench") + "?tool=think", problem)
    assert str(secret.pk) in {item["id"] for item in mine.context["result"]["memories"]}
    theirs = bob.post(url("workbench") + "?tool=think", problem)
    assert str(secret.pk) not in {item["id"] for item in theirs.context["result"]["memories"]}
    assert reverse("dashboard:memory-detail", args=[secret.pk]) not in html_of(theirs)
