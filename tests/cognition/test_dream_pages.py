"""The dream runs page over the services: start (the form's ranges, trigger_dream's refusal of a second dream),
interrupt, undo after preview, and Alice's runs out of Bob's sight and reach."""
import pytest
from django.urls import reverse

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream import dream_execute, dream_trigger
from tests.cognition.curation_support import everything, link, nodes
from tests.cognition.dream_support import item, session
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)

pytestmark = pytest.mark.django_db

PAGE = "/cognition/dreams/"


def test_start_queues_a_dream_and_bad_input_is_shown_on_its_field(user, client_for):
    client = client_for(user)
    assert "Start a dream" in client.get(PAGE).content.decode()
    bad = client.post(reverse("dashboard:cognition-dream-trigger"), {"phase": "nap", "duration_minutes": "11",
                                                                   "synthetic_query_count": "100"})
    assert bad.status_code == 400
    form = bad.context["form"]
    assert "phase" in form.errors and form.errors["duration_minutes"] == ["Use a whole number from 1 to 10."]
    started = client.post(reverse("dashboard:cognition-dream-trigger"), {
        "phase": "nrem", "duration_minutes": "2", "synthetic_query_count": "10", "abort_on_query": "on"})
    run = ConsolidationRun.objects.get(owner=user)
    assert started.status_code == 302 and started.url.endswith(f"#dream-{run.pk}")
    assert (run.status, run.phase, run.budget["minutes"], run.abort_on_query) == ("queued", "nrem", 2, True)
    again = client.post(reverse("dashboard:cognition-dream-trigger"), {
        "phase": "nrem", "duration_minutes": "2", "synthetic_query_count": "10"})
    assert again.status_code == 400 and "under way" in str(again.context["form"].errors)
    page = client.get(PAGE).content.decode()
    assert f'id="dream-{run.pk}"' in page and "Interrupt" in page


def test_interrupt_then_undo_after_preview(user, client_for):
    client = client_for(user)
    a, b = nodes(user, "Alpha service owns billing.", "Beta service sends invoices.")
    link(user, a, b, 0.5)
    item(session(user), (a, 0.9), (b, 0.6))
    before = everything()
    queued = dream_trigger(actor=user, phase="nrem")
    client.post(reverse("dashboard:cognition-dream-interrupt", args=[queued.pk]))
    assert ConsolidationRun.objects.get(pk=queued.pk).status == "interrupted"
    done = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    assert done.pk == queued.pk and done.status == "completed" and everything() != before
    refused = client.post(reverse("dashboard:cognition-dream-interrupt", args=[done.pk]), follow=True)
    assert "only a queued or running dream" in refused.content.decode()
    preview = client.post(reverse("dashboard:cognition-dream-undo-preview", args=[done.pk]))
    html = preview.content.decode()
    assert "Undoing this dream would" in html and "put 1 link back as it was" in html
    undone = client.post(reverse("dashboard:cognition-dream-undo", args=[done.pk]), follow=True)
    assert "Undone: the dream is reversed" in undone.content.decode()
    assert everything() == before and ConsolidationRun.objects.get(pk=done.pk).status == "rolled_back"


def test_bob_sees_none_of_alices_dreams_and_cannot_touch_them(user, other_user, client_for):
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    bob = client_for(other_user)
    assert str(run.pk) not in bob.get(PAGE).content.decode()
    for name in ("cognition-dream-interrupt", "cognition-dream-undo-preview", "cognition-dream-undo"):
        assert bob.post(reverse(f"dashboard:{name}", args=[run.pk])).status_code == 404
    assert ConsolidationRun.objects.get(pk=run.pk).status == "completed"
