"""Store, edit, boost, delete, restore and destroy through the pages; the services' errors land on the right field."""
import pytest
from django.conf import settings
from django.urls import reverse

from apps.cubes.models import Cube, CubeMembership
from apps.memories.models import Memory, MemoryVector

pytestmark = pytest.mark.django_db


def store_form(**fields):
    return {"content": "", "primary_sector": "semantic", "importance": "", "tags": "", "keywords": "",
            "category": "", "context": "", **fields}


def test_store_form_stores_through_the_service(alice, user):
    page = alice.get(reverse("dashboard:memory-create"))
    assert page.status_code == 200
    assert page.context["form"].fields["cube"].choices == [("", "Your personal cube")]

    response = alice.post(reverse("dashboard:memory-create"), store_form(
        content="Ship the release notes with every tag.", primary_sector="procedural", importance="0.9",
        tags="release, process", category="engineering", context="retro 2025-06",
    ))
    memory = Memory.objects.get(owner=user)
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:memory-detail", args=[memory.pk])
    assert memory.primary_sector == "procedural"
    assert memory.importance == 0.9
    assert memory.tags == ["release", "process"]
    assert memory.keywords, "keywords left empty are extracted by the service"
    assert memory.category == "engineering" and memory.context == "retro 2025-06"
    assert MemoryVector.objects.filter(memory=memory).count() == 1
    detail = alice.get(response["Location"])
    assert "Memory stored" in detail.content.decode()


def test_store_into_a_chosen_cube(alice, user, other_user):
    shared = Cube.objects.create(id="family", name="Family", owner=other_user)
    CubeMembership.objects.create(cube=shared, user=user, role="writer")
    alice.post(reverse("dashboard:memory-create"), store_form(content="Grandma's birthday is on 3 May."))
    assert Memory.objects.get(owner=user).cube.is_personal

    page = alice.get(reverse("dashboard:memory-create"))
    assert ("family", "Family") in page.context["form"].fields["cube"].choices
    alice.post(reverse("dashboard:memory-create"), store_form(content="The family car is due for MOT.", cube="family"))
    assert Memory.objects.get(content__startswith="The family car").cube_id == "family"


def test_store_into_a_read_only_cube_says_so_on_the_cube_field(alice, user, other_user):
    readable = Cube.objects.create(id="bobs-notes", name="Bob's notes", owner=other_user)
    CubeMembership.objects.create(cube=readable, user=user, role="reader")
    response = alice.post(reverse("dashboard:memory-create"), store_form(content="Trying to write.", cube="bobs-notes"))
    assert response.status_code == 200
    assert "not write to it" in response.context["form"].errors["cube"][0]
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"content": ""}, "content", "Content cannot be empty"),
        ({"content": "   \n  "}, "content", "Content cannot be empty"),
        ({"content": "bad\x00byte"}, "content", "NUL bytes"),
        ({"content": "x" * (settings.ENGRAM_MAX_CONTENT_CHARS + 1)}, "content", "the limit is"),
        ({"content": "ok", "importance": "lots"}, "importance", "Enter a number."),
        ({"content": "ok", "importance": "1.5"}, "importance", "Importance must be between 0 and 1, got 1.5"),
        ({"content": "ok", "primary_sector": "dreamy"}, "primary_sector", "Select a valid choice."),
        ({"content": "ok", "tags": "x" * 101}, "tags", "at most 100 characters"),
        ({"content": "ok", "category": "x" * 101}, "category", "at most 100 characters"),
        ({"content": "ok", "context": "x" * 2001}, "context", "at most 2000 characters"),
        ({"content": "ok", "cube": "someone-elses"}, "cube", "Select a valid choice."),
    ],
)
def test_store_errors_are_shown_on_their_field(alice, fields, field, message):
    response = alice.post(reverse("dashboard:memory-create"), store_form(**fields))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == [field], errors
    assert message in errors[field][0]
    html = response.content.decode()
    assert f'id="id_{field}_error"' in html
    assert not Memory.objects.exists()


def edit_form(memory, **changes):
    return {
        "content": memory.content, "primary_sector": memory.primary_sector, "importance": memory.importance,
        "salience": memory.salience, "strength": memory.strength, "tags": ", ".join(memory.tags),
        "keywords": ", ".join(memory.keywords), "category": memory.category, "context": memory.context, **changes,
    }


def test_edit_changes_only_what_changed(alice, user, store):
    memory = store(user, "The office wifi is called Larch.\nIts password is on the fridge.", tags=["office"])
    vector_before = MemoryVector.objects.get(memory=memory).embedding
    form = edit_form(memory, content=memory.content.replace("\n", "\r\n"), importance="0.8", tags="office, wifi")
    response = alice.post(reverse("dashboard:memory-edit", args=[memory.pk]), form)
    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.importance == 0.8 and memory.tags == ["office", "wifi"]
    assert MemoryVector.objects.get(memory=memory).embedding == vector_before

    response = alice.post(reverse("dashboard:memory-edit", args=[memory.pk]),
                          edit_form(memory, content="The office wifi is now called Birch.", keywords=""))
    memory.refresh_from_db()
    assert memory.content == "The office wifi is now called Birch."
    assert MemoryVector.objects.get(memory=memory).embedding != vector_before
    assert "rebuilt" in alice.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"content": ""}, "content", "Content cannot be empty"),
        ({"content": "nul\x00"}, "content", "NUL bytes"),
        ({"strength": "1.2"}, "strength", "Strength must be between 0 and 1"),
        ({"salience": "x"}, "salience", "Enter a number."),
        ({"importance": "-1"}, "importance", "must be between 0 and 1"),
    ],
)
def test_edit_errors_are_shown_on_their_field(alice, user, store, changes, field, message):
    memory = store(user, "Unchanged memory content.")
    response = alice.post(reverse("dashboard:memory-edit", args=[memory.pk]), edit_form(memory, **changes))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == [field] and message in errors[field][0]
    memory.refresh_from_db()
    assert memory.content == "Unchanged memory content." and memory.strength == 1.0


def test_boost_soft_delete_restore_and_destroy(alice, user, store):
    memory = store(user, "Renew the passport before March.", importance=0.5)
    detail = reverse("dashboard:memory-detail", args=[memory.pk])

    assert alice.post(reverse("dashboard:memory-boost", args=[memory.pk]))["Location"] == detail
    memory.refresh_from_db()
    assert memory.importance == 0.6

    alice.post(reverse("dashboard:memory-delete", args=[memory.pk]))
    memory.refresh_from_db()
    assert memory.deleted_at is not None and memory.strength == 0.0

    alice.post(reverse("dashboard:memory-restore", args=[memory.pk]))
    memory.refresh_from_db()
    assert memory.deleted_at is None and memory.strength == 1.0

    again = alice.post(reverse("dashboard:memory-restore", args=[memory.pk]), follow=True)
    assert "nothing to restore" in again.content.decode()

    confirm = alice.get(reverse("dashboard:memory-destroy", args=[memory.pk]))
    assert "cannot be undone" in confirm.content.decode()
    assert Memory.objects.filter(pk=memory.pk).exists()
    response = alice.post(reverse("dashboard:memory-destroy", args=[memory.pk]))
    assert response["Location"] == reverse("dashboard:memory-list")
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryVector.objects.filter(memory_id=memory.pk).exists()
    assert alice.get(detail).status_code == 404


def test_actions_need_post(alice, user, store):
    memory = store(user, "GET must not change anything.")
    for action in ("memory-boost", "memory-delete", "memory-restore"):
        assert alice.get(reverse(f"dashboard:{action}", args=[memory.pk])).status_code == 405
    memory.refresh_from_db()
    assert memory.importance == 0.5 and memory.deleted_at is None


def test_a_reader_of_a_shared_cube_sees_the_memory_but_cannot_change_it(alice, user, other_user, store):
    cube = Cube.objects.create(id="bob-shared", name="Bob shared", owner=other_user)
    CubeMembership.objects.create(cube=cube, user=user, role="reader")
    memory = store(other_user, "Bob's shared note.", cube_id="bob-shared")
    assert alice.get(reverse("dashboard:memory-detail", args=[memory.pk])).status_code == 200
    response = alice.post(reverse("dashboard:memory-delete", args=[memory.pk]), follow=True)
    assert "may read this memory but not change it" in response.content.decode()
    response = alice.post(reverse("dashboard:memory-edit", args=[memory.pk]), edit_form(memory, content="Mine now."))
    assert "may read this memory but not change it" in response.content.decode()
    memory.refresh_from_db()
    assert memory.deleted_at is None and memory.content == "Bob's shared note."
