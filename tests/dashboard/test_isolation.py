"""Bob cannot see, change or even confirm the existence of Alice's memories and tokens: 404, nothing leaks."""
import pytest
from django.urls import reverse

from apps.accounts.models import ApiToken
from apps.memories.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_memory(user, store):
    return store(user, "Alice's secret: the safe combination is 12-34-56.", tags=["secret"])


def test_bob_gets_404_on_every_page_of_alices_memory(bob, alices_memory):
    pk = alices_memory.pk
    for name in ("memory-detail", "memory-edit", "memory-destroy"):
        response = bob.get(reverse(f"dashboard:{name}", args=[pk]))
        assert response.status_code == 404, name
        assert b"safe combination" not in response.content
    for name in ("memory-boost", "memory-delete", "memory-restore", "memory-destroy"):
        assert bob.post(reverse(f"dashboard:{name}", args=[pk])).status_code == 404, name
    assert bob.post(reverse("dashboard:memory-edit", args=[pk]), {"content": "pwned", "primary_sector": "semantic"}
                    ).status_code == 404
    alices_memory.refresh_from_db()
    assert alices_memory.content.startswith("Alice's secret") and alices_memory.deleted_at is None
    assert alices_memory.importance == 0.5


def test_a_deleted_memory_of_alice_is_404_for_bob_too(alice, bob, alices_memory):
    alice.post(reverse("dashboard:memory-delete", args=[alices_memory.pk]))
    assert bob.post(reverse("dashboard:memory-restore", args=[alices_memory.pk])).status_code == 404
    assert Memory.objects.get(pk=alices_memory.pk).deleted_at is not None


def test_bob_finds_nothing_of_alice(bob, alices_memory):
    result = bob.get(reverse("dashboard:search"), {"q": "safe combination"}).context["result"]
    assert result.items == [] and result.total_count == 0
    result = bob.get(reverse("dashboard:search"), {"tags": "secret"}).context["result"]
    assert result.items == []
    page = bob.get(reverse("dashboard:memory-list"))
    assert list(page.context["page"].object_list) == []
    assert bob.get(reverse("dashboard:memory-list"), {"cube": alices_memory.cube_id}).status_code == 404
    assert bob.get(reverse("dashboard:search"), {"q": "safe", "cube": alices_memory.cube_id}).context["form"].errors
    home = bob.get(reverse("dashboard:home"))
    assert home.context["counts"]["total"] == 0 and home.context["is_new"]
    assert b"safe combination" not in home.content


def test_bob_cannot_see_or_revoke_alices_tokens(bob, user, make_token):
    make_token(user, name="alice-laptop")
    token = ApiToken.objects.get(user=user)
    assert b"alice-laptop" not in bob.get(reverse("dashboard:tokens")).content
    assert bob.get(reverse("dashboard:token-revoke", args=[token.pk])).status_code == 404
    assert bob.post(reverse("dashboard:token-revoke", args=[token.pk])).status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_unknown_memory_id_is_a_404(alice):
    assert alice.get("/memories/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert alice.get("/memories/not-a-uuid/").status_code == 404
