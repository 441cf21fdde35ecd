"""The command palette's suggestions (/palette/, the session's own JSON): every page of the navigation, the
memories memory_search finds and the projects whose name holds the words, only ever the user's own; bad
input is a 400 naming the field; the shortcuts page."""
import re

import pytest
from django.urls import reverse

from apps.memories.models import Memory
from apps.projects.services.projects import project_create
from tests.query_counts import flat, store_batch

pytestmark = pytest.mark.django_db

URL = reverse("dashboard:palette")


@pytest.fixture
def alices(user, store):
    memory = store(user, "Alice's secret: the safe combination is 12-34-56, behind the lighthouse painting.")
    project = project_create(actor=user, name="Lighthouse restoration")
    return memory, project


def suggest(client, q=None):
    response = client.get(URL, {"q": q} if q is not None else {})
    assert response.status_code == 200, response.content
    return response.json()


def test_the_words_find_the_users_memory_and_project(alice, alices):
    memory, project = alices
    body = suggest(alice, "lighthouse")
    assert body["memories"][0] == {"id": str(memory.pk), "title": memory.content,
                                   "url": reverse("dashboard:memory-detail", args=[memory.pk])}
    assert body["projects"] == [{"id": str(project.pk), "title": "Lighthouse restoration",
                                 "url": reverse("projects:project-detail", args=[project.pk])}]
    assert suggest(alice, "RESTORATION")["projects"][0]["title"] == "Lighthouse restoration"
    Memory.objects.filter(pk=memory.pk).update(access_count=0)
    suggest(alice, "safe combination")
    assert Memory.objects.get(pk=memory.pk).access_count == 0, "a suggestion is not an access: nothing was opened"


def test_bob_never_sees_alices_memories_or_projects(bob, other_user, alices, store):
    mine = store(other_user, "Bob's lighthouse photo album from the coast trip.")
    body = suggest(bob, "lighthouse safe combination restoration")
    assert [item["id"] for item in body["memories"]] == [str(mine.pk)]
    assert body["projects"] == []
    assert "safe combination" not in str(body) and "restoration" not in str(body)


def test_signed_out_gets_a_401_and_nothing_else(client, alices):
    response = client.get(URL, {"q": "lighthouse"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert b"lighthouse" not in response.content.lower().replace(b"log in again", b"")


@pytest.mark.parametrize("q", ["x" * 5000, "tomatoes\x00"])
def test_bad_words_are_a_400_naming_the_field(alice, q):
    response = alice.get(URL, {"q": q})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and error["details"] == {"field": "q"}
    assert error["message"].startswith("Search ")


def test_no_words_give_the_pages_only(alice, alices):
    body = suggest(alice)
    assert body["memories"] == [] and body["projects"] == []
    assert suggest(alice, "   ")["memories"] == []


def test_the_pages_are_every_link_of_the_navigation_and_the_section_tabs(alice, client_for, staff_user):
    pages = {page["url"] for page in suggest(alice)["pages"]}
    for url, nav in ((reverse("dashboard:cognition-pulse"), "Cognition sections"),
                     (reverse("reasoning:overview"), "Reasoning sections")):
        html = alice.get(url).content.decode()
        for label in ("Main", nav):
            block = re.search(rf'<nav [^>]*aria-label="{label}".*?</nav>', html, re.S).group(0)
            links = set(re.findall(r'<a [^>]*href="([^"]+)"', block))
            assert links and links <= pages, f"{label} links missing from the palette: {links - pages}"
    assert reverse("admin:index") not in pages
    staff = {page["url"] for page in suggest(client_for(staff_user))["pages"]}
    assert reverse("admin:index") in staff


def test_suggestions_run_no_more_queries_with_more_matches(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        store_batch(user, start, count)
        for n in range(start, start + count):
            project_create(actor=user, name=f"Lighthouse station {n}")

    store_batch(user, 0, 1)
    project_create(actor=user, name="Lighthouse station 0")
    flat(lambda: suggest(alice, "lighthouse"), grow, lambda body: min(len(body["memories"]), len(body["projects"])),
         django_assert_max_num_queries, shown_at_fifty=4)


def test_the_shortcuts_page_lists_the_keys_and_the_footer_links_it(alice):
    page = alice.get(reverse("dashboard:shortcuts")).content.decode()
    assert "<h1>Keyboard shortcuts</h1>" in page
    for key in ("<kbd>Ctrl</kbd> <kbd>K</kbd>", "<kbd>/</kbd>", "<kbd>?</kbd>", "<kbd>Esc</kbd>"):
        assert key in page
    home = alice.get(reverse("dashboard:home")).content.decode()
    assert f'href="{reverse("dashboard:shortcuts")}" data-shortcuts-open' in home
