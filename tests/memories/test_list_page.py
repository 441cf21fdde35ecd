"""The memories list page: filters and order in the URL, counts beside the filters, clickable tags, bulk actions
with their summary and undo, and no way to act on another user's memories."""
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.cubes.models import Cube, CubeMembership
from apps.memories.models import Memory
from apps.memories.services import memory_store_many

pytestmark = pytest.mark.django_db
LIST = reverse("dashboard:memory-list")
BULK = reverse("dashboard:memory-bulk")


def stored(user, *contents, cube_id=None, **fields) -> list[Memory]:
    return [result.memory for result in memory_store_many(actor=user, cube_id=cube_id, items=[
        {"content": content, **fields} for content in contents])]


def listed(client, **query) -> list[str]:
    response = client.get(LIST, query)
    assert response.status_code == 200, response.content[:500]
    return [memory.content for memory in response.context["page"].object_list]


@pytest.fixture
def garden(user):
    """Memories that differ in every way the list filters and sorts by."""
    memories = {
        "tomatoes": stored(user, "The tomatoes went into the south bed in April.", tags=["garden", "spring"],
                           primary_sector="episodic", importance=0.9)[0],
        "compost": stored(user, "Turn the compost heap every two weeks.", tags=["garden"],
                          primary_sector="procedural", importance=0.2)[0],
        "boiler": stored(user, "The boiler is serviced every October.", tags=["house"], importance=0.5)[0],
    }
    now = timezone.now()
    for days, name in enumerate(["boiler", "compost", "tomatoes"]):  # tomatoes newest, boiler oldest
        Memory.objects.filter(pk=memories[name].pk).update(
            created_at=now - timedelta(days=10 * (2 - days)), strength=0.3 + 0.3 * days,
            last_accessed_at=None if name == "compost" else now - timedelta(hours=days))
    return memories


def test_filters_narrow_the_list(alice, user, garden):
    everything = listed(alice)
    assert len(everything) == 3
    assert listed(alice, q="compost heap") == ["Turn the compost heap every two weeks."]
    assert listed(alice, q="compost boiler") == []  # words side by side: all of them
    assert len(listed(alice, q="compost OR boiler")) == 2
    assert listed(alice, q="serviced") == ["The boiler is serviced every October."]  # stemmed: service
    assert listed(alice, sector="procedural") == ["Turn the compost heap every two weeks."]
    assert len(listed(alice, tag="garden")) == 2
    assert listed(alice, tag="garden, spring") == ["The tomatoes went into the south bed in April."]
    assert listed(alice, kind="decision") == []
    day = (timezone.now() - timedelta(days=10)).date()
    assert listed(alice, date_from=day.isoformat(), date_to=day.isoformat()) == ["Turn the compost heap every two weeks."]
    assert listed(alice, cube=garden["boiler"].cube_id, q="boiler") == ["The boiler is serviced every October."]


def test_text_with_no_word_matches_a_substring(alice, user):
    stored(user, "Learn C++ templates properly.", "Learn Rust.")
    assert listed(alice, q="C++") == ["Learn C++ templates properly."]


@pytest.mark.parametrize(("sort", "first"), [
    ("newest", "tomatoes"), ("oldest", "boiler"), ("importance", "tomatoes"), ("strength", "tomatoes"),
    ("accessed", "boiler"),
])
def test_sorts(alice, garden, sort, first):
    shown = listed(alice, sort=sort)
    assert shown[0] == garden[first].content
    if sort == "accessed":  # never accessed comes last
        assert shown[-1] == garden["compost"].content
    if sort == "importance":
        assert shown == [garden[name].content for name in ("tomatoes", "boiler", "compost")]


def test_counts_beside_the_filters_and_the_top_tags(alice, garden):
    response = alice.get(LIST, {"tag": "garden"})
    counts = response.context["counts"]
    assert counts.sectors == {"episodic": 1, "procedural": 1}  # the other filters (tag) applied
    assert counts.tags == [("garden", 3 - 1), ("house", 1), ("spring", 1)]  # the tag filter itself not applied
    html = response.content.decode()
    assert "Procedural (1)" in html and "Semantic (0)" in html
    assert 'href="?tag=house" title="Show the memories tagged #house">#house <span class="muted">1</span>' in html


def test_filters_are_kept_by_paging_and_by_tag_links(alice, user):
    stored(user, *[f"Lighthouse log {n}: the lamp at station {n} was checked." for n in range(55)], tags=["log"])
    response = alice.get(LIST, {"q": "lamp", "sort": "oldest"})
    page = response.context["page"]
    assert page.paginator.count == 55 and len(page.object_list) == 50
    next_link = parse_qs(urlsplit(response.content.decode().split('rel="next"')[0].rsplit('href="', 1)[1]
                                  .split('"')[0].replace("&amp;", "&")).query)
    assert next_link == {"q": ["lamp"], "sort": ["oldest"], "page": ["2"]}
    second = alice.get(LIST, {"q": "lamp", "sort": "oldest", "page": 2})
    assert len(second.context["page"].object_list) == 5
    assert 'href="/memories/?q=lamp&amp;sort=oldest&amp;tag=log"' in response.content.decode()  # a row's tag


def test_chips_remove_one_filter_each(alice, garden):
    html = alice.get(LIST, {"q": "compost", "tag": "garden", "sort": "oldest"}).content.decode()
    assert 'href="?tag=garden&amp;sort=oldest"' in html and "Text: compost" in html
    assert 'href="?q=compost&amp;sort=oldest"' in html and "Tags: #garden" in html


@pytest.mark.parametrize(("query", "field", "message"), [
    ({"sort": "sideways"}, "sort", "Select a valid choice"),
    ({"date_from": "yesterday"}, "date_from", "Enter a valid date"),
    ({"q": "nul\x00byte"}, "q", "NUL"),
    ({"q": "x" * 2001}, "q", "at most 2000"),
    ({"sector": "dreamy"}, "sector", "Select a valid choice"),
])
def test_bad_filters_are_named_never_a_500(alice, garden, query, field, message):
    response = alice.get(LIST, query)
    assert response.status_code == 200
    assert message in response.context["form"].errors[field][0]
    assert response.context["page"] is None and "Fix the filter" in response.content.decode()


def test_tags_on_the_memory_page_filter_the_list(alice, garden):
    html = alice.get(reverse("dashboard:memory-detail", args=[garden["tomatoes"].pk])).content.decode()
    assert f'href="{LIST}?tag=spring"' in html


def test_a_page_of_50_at_300_memories_runs_as_many_queries_as_a_page_of_1(alice, user):
    work = Cube.objects.create(id="work", name="Work", owner=user)
    stored(user, "The first lighthouse log entry.", tags=["log"])
    filters = {"q": "lighthouse", "tag": "log", "sort": "strength", "sector": "semantic"}
    alice.get(LIST, filters)
    with CaptureQueriesContext(connection) as at_one:
        assert len(alice.get(LIST, filters).context["page"].object_list) == 1
    memory_store_many(actor=user, items=[{"content": f"Lighthouse log {n}: station {n} checked.",
                                          "tags": ["log", f"station-{n % 7}"]} for n in range(150)])
    stored(user, *[f"Lighthouse log {n} at work." for n in range(150)], tags=["log"], cube_id=work.pk)
    with CaptureQueriesContext(connection) as at_three_hundred:
        response = alice.get(LIST, filters)
    assert len(response.context["page"].object_list) == 50 and response.context["page"].paginator.count == 301
    assert len(at_three_hundred) == len(at_one), "\n".join(q["sql"][:200] for q in at_three_hundred.captured_queries)


# --- Bulk actions --------------------------------------------------------------------------------------------

def post_bulk(client, action, memories, *, follow=True, **fields):
    return client.post(BULK, {"action": action, "memory_ids": [str(m.pk) for m in memories],
                              "next": f"{LIST}?tag=garden", **fields}, follow=follow)


def test_bulk_delete_shows_a_summary_and_undoes(alice, garden):
    response = post_bulk(alice, "delete", [garden["tomatoes"], garden["compost"]])
    assert response.redirect_chain == [(f"{LIST}?tag=garden", 302)]
    done = response.context["done"]
    assert done["summary"] == "Deleted 2 memories: hidden from search and retrieval until restored."
    assert Memory.objects.filter(deleted_at__isnull=False).count() == 2
    html = response.content.decode()
    assert 'name="undo" value="1"' in html and 'value="restore"' in html
    assert alice.get(LIST).context["done"] is None  # shown once

    undone = alice.post(BULK, {"undo": "1", **{k: v for k, v in done["undo"].items() if k != "label"}}, follow=True)
    assert undone.context["done"] == {"summary": "Undone: Restored 2 memories.", "undo": None}
    assert not Memory.objects.filter(deleted_at__isnull=False).exists()


def test_bulk_move_offers_only_writable_cubes_and_undoes(alice, user, other_user, garden):
    Cube.objects.create(id="work", name="Work", owner=user)
    readable = Cube.objects.create(id="bobs-notes", name="Bob's notes", owner=other_user)
    CubeMembership.objects.create(cube=readable, user=user, role=CubeMembership.Role.READER)
    page = alice.get(LIST)
    offered = [value for value, _ in page.context["bulk_form"].fields["cube"].widget.choices]
    assert "work" in offered and "bobs-notes" not in offered
    assert "bobs-notes" in [value for value, _ in page.context["form"].fields["cube"].choices]  # but filterable

    home = garden["boiler"].cube_id
    response = post_bulk(alice, "move", [garden["boiler"], garden["compost"]], cube="work")
    assert response.context["done"]["summary"] == "Moved 2 memories to Work."
    assert set(Memory.objects.filter(cube_id="work").values_list("content", flat=True)) == {
        garden["boiler"].content, garden["compost"].content}
    undo = response.context["done"]["undo"]
    undone = alice.post(BULK, {"undo": "1", "action": "move", "memory_ids": undo["memory_ids"],
                               "origins": undo["origins"]}, follow=True)
    assert undone.context["done"]["summary"] == "Undone: moved 2 memories back to their cube."
    assert not Memory.objects.filter(cube_id="work").exists() and Memory.objects.filter(cube_id=home).count() == 3

    refused = post_bulk(alice, "move", [garden["boiler"]], cube="bobs-notes")
    assert "not write to it" in [str(m) for m in refused.context["messages"]][0]
    assert Memory.objects.get(pk=garden["boiler"].pk).cube_id == home


def test_bulk_tag_and_untag(alice, garden):
    response = post_bulk(alice, "tag", [garden["boiler"], garden["compost"]], tag=" chores ")
    assert response.context["done"]["summary"] == "Tagged 2 memories #chores."
    assert Memory.objects.get(pk=garden["compost"].pk).tags == ["garden", "chores"]
    response = post_bulk(alice, "untag", [garden["boiler"], garden["tomatoes"]], tag="chores")
    assert response.context["done"]["summary"] == "Removed #chores from 1 memory."
    assert response.context["done"]["undo"] == {"action": "tag", "memory_ids": [str(garden["boiler"].pk)],
                                                "tag": "chores", "label": "Undo"}


@pytest.mark.parametrize(("fields", "message"), [
    ({"action": "delete"}, "Select at least one memory."),
    ({"action": "explode", "memory_ids": ["x"]}, "Action: Select a valid choice. explode is not one of the available "
                                                  "choices."),
    ({"action": "move", "memory_ids": ["x"]}, "Cube: Choose the cube to move the memories to."),
    ({"action": "tag", "memory_ids": ["x"]}, "Tag: Type the tag to add or remove."),
    ({"action": "delete", "memory_ids": ["seven"]}, "Memories[0] is not a memory id (a UUID): 'seven'."),
])
def test_bad_bulk_input_is_said_never_a_500(alice, garden, fields, message):
    response = alice.post(BULK, fields, follow=True)
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == [message]
    assert not Memory.objects.filter(deleted_at__isnull=False).exists()


def test_bob_cannot_act_on_alices_memories_by_posting_their_ids(bob, other_user, garden):
    [bobs] = stored(other_user, "Bob's own note.")
    for action, extra in (("delete", {}), ("tag", {"tag": "mine"}), ("move", {"cube": bobs.cube_id})):
        response = post_bulk(bob, action, [bobs, garden["tomatoes"]], **extra)
        assert response.status_code == 200
        [message] = [str(m) for m in response.context["messages"]]
        assert f"Memory {garden['tomatoes'].pk} not found" in message
    for memory in Memory.objects.all():
        assert memory.deleted_at is None and "mine" not in memory.tags
    assert Memory.objects.get(pk=garden["tomatoes"].pk).cube_id == garden["tomatoes"].cube_id
    assert bob.post(BULK, {"action": "delete", "memory_ids": [str(garden["tomatoes"].pk)],
                           "next": "https://evil.example/"})["Location"] == LIST  # never sent off-site


def test_deleted_list_offers_restore(alice, garden):
    post_bulk(alice, "delete", [garden["boiler"]])
    page = alice.get(LIST, {"deleted": "1"})
    assert [m.pk for m in page.context["page"].object_list] == [garden["boiler"].pk]
    html = page.content.decode()
    assert '<option value="restore">Restore</option>' in html and 'value="move"' not in html
    response = post_bulk(alice, "restore", [garden["boiler"]])
    assert response.context["done"]["summary"] == "Restored 1 memory."
