"""The admin's memory list: owner, kind, state, strength, created and last access columns, filters by kind, sector,
state and cube, long cube names cut (whole in the title), and as many queries at a full page as at one row."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.cubes.models import Cube
from apps.memories.models import Memory
from apps.memories.services import memory_delete, memory_store_many

pytestmark = pytest.mark.django_db
MEMORY_CHANGELIST = reverse("admin:memories_memory_changelist")
LONG_NAME = "Quarterly planning notes for the northern region warehouse logistics team"


def stored(user, count, *, start=0, cube_id=None, **fields):
    return [result.memory for result in memory_store_many(actor=user, cube_id=cube_id, items=[
        {"content": f"Warehouse {n}: pallets counted and shelves labelled.", **fields} for n in range(start, start + count)])]


def shown(response) -> list[Memory]:
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def test_columns_filters_and_long_cube_names(admin_client_for_staff, staff_user, user):
    Cube.objects.create(id="planning", name=LONG_NAME, owner=user)
    [accessed] = stored(user, 1, cube_id="planning", primary_sector="procedural")
    Memory.objects.filter(pk=accessed.pk).update(last_accessed_at=timezone.now())
    [decision] = stored(staff_user, 1, start=1, kind=Memory.Kind.DECISION)
    [gone] = stored(staff_user, 1, start=2)
    memory_delete(actor=staff_user, memory_id=gone.pk)

    response = admin_client_for_staff.get(MEMORY_CHANGELIST)
    html = response.content.decode()
    for column in ("owner", "kind", "state", "strength", "created at", "last accessed at"):
        assert f">{column.capitalize()}</a>" in html or f">{column.capitalize()}</span>" in html, column
    assert f'<span title="{LONG_NAME}">Quarterly planning notes fo…</span>' in html  # the list column
    assert f'title="{LONG_NAME}">Quarterly planning notes fo…</a>' in html  # the filter sidebar
    assert LONG_NAME + "<" not in html  # never shown whole, outside a title

    assert shown(admin_client_for_staff.get(MEMORY_CHANGELIST, {"kind__exact": "decision"})) == [decision]
    assert shown(admin_client_for_staff.get(MEMORY_CHANGELIST, {"primary_sector__exact": "procedural"})) == [accessed]
    assert shown(admin_client_for_staff.get(MEMORY_CHANGELIST, {"state": "deleted"})) == [gone]
    assert shown(admin_client_for_staff.get(MEMORY_CHANGELIST, {"cube__id__exact": "planning"})) == [accessed]
    row = next(line for line in html.split("<tr") if str(gone.pk) in line)
    assert ">deleted<" in row and ">carol<" in row


def test_a_full_page_at_several_hundred_memories_runs_as_many_queries_as_one_row(admin_client_for_staff, user):
    Cube.objects.create(id="planning", name=LONG_NAME, owner=user)
    stored(user, 1)
    filters = {"state": "live", "kind__exact": "memory"}
    admin_client_for_staff.get(MEMORY_CHANGELIST, filters)
    with CaptureQueriesContext(connection) as at_one:
        assert len(shown(admin_client_for_staff.get(MEMORY_CHANGELIST, filters))) == 1
    stored(user, 150, start=1)
    stored(user, 150, start=151, cube_id="planning")
    with CaptureQueriesContext(connection) as at_three_hundred:
        response = admin_client_for_staff.get(MEMORY_CHANGELIST, filters)
    assert len(shown(response)) == 100 and response.context["cl"].result_count == 301
    assert len(at_three_hundred) == len(at_one), "\n".join(q["sql"][:200] for q in at_three_hundred.captured_queries)
    assert all("search_vector" not in query["sql"] for query in at_three_hundred.captured_queries)
