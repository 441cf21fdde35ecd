"""Admin of reasoning: sessions and notebooks render with their inlines, forms are read-only, the soft delete /
restore actions call the services for each row's owner, and "verify" reports a tampered chain."""
import pytest
from django.urls import reverse

from apps.reasoning.models import Notebook, Thought, ThoughtSession
from apps.reasoning.services.notebooks import cell_add, notebook_create
from apps.reasoning.services.thoughts import thought_add
from tests.admin.support import changelist, run_action

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture
def alices_session(user):
    for number, text in enumerate(["Why do builds take 20 minutes?", "The cache key includes the timestamp"], 1):
        added = thought_add(actor=user, client_key="admin-test", thought=text, thought_number=number,
                            total_thoughts=2, next_thought_needed=number < 2, session_title="Slow builds")
    return added.session


@pytest.fixture
def alices_notebook(user):
    notebook = notebook_create(actor=user, title="Build timings")
    cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="main.js", content="console.log(20 * 60)")
    return notebook


def test_changelists_and_read_only_change_forms(staff, alices_session, alices_notebook):
    for model, obj, text in ((ThoughtSession, alices_session, "The cache key includes the timestamp"),
                             (Notebook, alices_notebook, "console.log(20 * 60)")):
        listing = staff.get(changelist(model), {"q": obj.title.split()[0]})
        assert listing.status_code == 200 and obj.title in listing.content.decode()
        form = staff.get(reverse(f"admin:reasoning_{model._meta.model_name}_change", args=[obj.pk]))
        assert form.status_code == 200 and text in form.content.decode()
        assert 'name="title"' not in form.content.decode()  # read-only: shown, not editable


def test_soft_delete_and_restore_go_through_the_services(staff, alices_session, alices_notebook):
    assert run_action(staff, ThoughtSession, "soft_delete", [alices_session]) == ["Soft-deleted 1 thought session."]
    alices_session.refresh_from_db()
    assert alices_session.deleted_at is not None
    assert all(t.node.deleted_at is not None for t in Thought.objects.filter(session=alices_session)
               .select_related("node"))
    assert run_action(staff, ThoughtSession, "restore", [alices_session]) == ["Restored 1 thought session."]
    alices_session.refresh_from_db()
    assert alices_session.deleted_at is None

    assert run_action(staff, Notebook, "soft_delete", [alices_notebook]) == ["Soft-deleted 1 notebook."]
    assert Notebook.objects.get(pk=alices_notebook.pk).deleted_at is not None
    assert run_action(staff, Notebook, "restore", [alices_notebook]) == ["Restored 1 notebook."]


def test_verify_reports_an_intact_and_a_broken_chain(staff, alices_session):
    assert run_action(staff, ThoughtSession, "verify_chain", [alices_session]) == [
        "Slow builds: chain intact (2 thoughts)."]
    Thought.objects.filter(session=alices_session, thought_number=1).update(thought="Builds are fast")
    [message] = run_action(staff, ThoughtSession, "verify_chain", [alices_session])
    assert message.startswith("Slow builds: chain BROKEN - thought 1:")
