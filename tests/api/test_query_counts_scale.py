"""REST retrieve and search, and every dashboard list page, run as many queries at 50 items as at 1 (no N+1).

Each test measures a page at 1 item, adds 49, and allows the 50-item page no more queries than the 1-item
one. A request runs before each measurement, so once-only writes (a token's last_used_at, a session) are
out of the way.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.chat.models import ChatMessage, ChatSession
from apps.cubes.models import Cube, CubeMembership
from apps.projects.services.entities import issue_add
from apps.projects.services.projects import project_create
from apps.reasoning.services.notebooks import notebook_create
from apps.reasoning.services.thoughts import thought_add
from tests.query_counts import flat, store_batch

pytestmark = pytest.mark.django_db

RETRIEVE_URL = "/api/v1/memories/retrieve/"
SEARCH_URL = "/api/v1/memories/search/"


def test_rest_retrieve(api, user, django_assert_max_num_queries):
    store_batch(user, 0, 1)
    flat(lambda: api.post(RETRIEVE_URL, {"text": "lighthouse lamp station", "limit": 50}, format="json"),
         lambda start, count: store_batch(user, start, count),
         lambda response: len(response.json()["results"]), django_assert_max_num_queries)


def test_rest_search(api, user, django_assert_max_num_queries):
    store_batch(user, 0, 1)
    flat(lambda: api.post(SEARCH_URL, {"text": "lighthouse AND lamp", "limit": 50}, format="json"),
         lambda start, count: store_batch(user, start, count),
         lambda response: len(response.json()["results"]), django_assert_max_num_queries)


def test_rest_search_by_tag(api, user, django_assert_max_num_queries):
    store_batch(user, 0, 1)
    flat(lambda: api.post(SEARCH_URL, {"tags": ["lighthouse"], "limit": 50}, format="json"),
         lambda start, count: store_batch(user, start, count),
         lambda response: len(response.json()["results"]), django_assert_max_num_queries)


# --- Dashboard list pages ---------------------------------------------------------------------------

def shown(marker: str):
    """How many times ``marker`` (a per-item link prefix) appears in a page."""
    return lambda response: response.content.decode().count(marker)


def test_memory_list_page(alice, user, django_assert_max_num_queries):
    store_batch(user, 0, 1)
    flat(lambda: alice.get("/memories/"), lambda start, count: store_batch(user, start, count),
         _uuid_links("/memories/"), django_assert_max_num_queries)


def test_home_page(alice, user, django_assert_max_num_queries):
    store_batch(user, 0, 1)
    # The home page shows the 10 most recent memories and the counts.
    flat(lambda: alice.get("/"), lambda start, count: store_batch(user, start, count),
         _uuid_links("/memories/"), django_assert_max_num_queries, shown_at_fifty=10)


def test_project_page_with_its_issues(alice, user, django_assert_max_num_queries):
    project = project_create(actor=user, name="Harbour")

    def grow(start, count):
        for n in range(start, start + count):
            issue_add(actor=user, project_id=project.pk, title=f"Buoy {n} drifts", description=f"Buoy {n} moved")

    grow(0, 1)
    flat(lambda: alice.get(f"/projects/{project.pk}/"), grow, _uuid_links("/projects/issues/"),
         django_assert_max_num_queries)


def test_search_page(alice, user, django_assert_max_num_queries):
    store_batch(user, 0, 1)
    flat(lambda: alice.get("/search/?q=lighthouse&limit=50"), lambda start, count: store_batch(user, start, count),
         _uuid_links("/memories/"), django_assert_max_num_queries)


def test_cube_list_page(alice, user, other_user, django_assert_max_num_queries):
    def grow(start, count):
        for n in range(start, start + count):
            cube = Cube.objects.create(id=f"shared-{n}", name=f"Shared cube {n}", owner=other_user)
            CubeMembership.objects.create(cube=cube, user=user, role=CubeMembership.Role.READER)

    grow(0, 1)
    flat(lambda: alice.get("/cubes/"), grow, shown('href="/cubes/shared-'), django_assert_max_num_queries)


def test_project_list_page(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        for n in range(start, start + count):
            project_create(actor=user, name=f"Project {n}", stack=["python"], current_goal=f"Ship release {n}")

    grow(0, 1)
    flat(lambda: alice.get("/projects/"), grow, _uuid_links("/projects/"), django_assert_max_num_queries)


def test_reasoning_overview_page(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        for n in range(start, start + count):
            thought_add(actor=user, client_key=f"query-count-{n}", thought=f"Step one of problem {n}",
                        thought_number=1, total_thoughts=2, next_thought_needed=True, session_title=f"Problem {n}",
                        session_tags=["counting"])

    grow(0, 1)
    flat(lambda: alice.get("/reasoning/"), grow, _uuid_links("/reasoning/sessions/"), django_assert_max_num_queries)


def test_notebook_list_page(alice, user, django_assert_max_num_queries):
    def grow(start, count):
        for n in range(start, start + count):
            notebook_create(actor=user, title=f"Notebook {n}")

    grow(0, 1)
    flat(lambda: alice.get("/reasoning/notebooks/"), grow, _uuid_links("/reasoning/notebooks/"),
         django_assert_max_num_queries)


def test_chat_page(alice, user, django_assert_max_num_queries):
    now = timezone.now()
    first = ChatSession.objects.create(owner=user, title="Session 0", last_activity=now)

    def grow(start, count):
        # One more session in the sidebar and one more question and answer in the open conversation.
        for n in range(start, start + count):
            ChatSession.objects.create(owner=user, title=f"Session {n}", last_activity=now - timedelta(minutes=n))
            ChatMessage.objects.create(session=first, role="user", content=f"Question {n}")
            ChatMessage.objects.create(session=first, role="assistant", content=f"Answer {n}", method="extractive")

    ChatMessage.objects.create(session=first, role="user", content="Question 0")
    ChatMessage.objects.create(session=first, role="assistant", content="Answer 0", method="extractive")
    flat(lambda: alice.get(f"/chat/{first.pk}/"), grow, _chat_rows, django_assert_max_num_queries)


def _chat_rows(response) -> int:
    assert response.status_code == 200
    page = response.content.decode()
    # Sessions in the sidebar are capped; the questions shown grow with the conversation.
    return page.count(">Question ") if "Question" in page else 0


def test_token_list_page(alice, user, make_token, django_assert_max_num_queries):
    def grow(start, count):
        for n in range(start, start + count):
            make_token(user, name=f"token-{n}")

    grow(0, 1)
    flat(lambda: alice.get("/tokens/"), grow, shown('data-label="Prefix"'), django_assert_max_num_queries)


def _uuid_links(prefix: str):
    def count(response) -> int:
        assert response.status_code == 200
        page = response.content.decode()
        return len({part[:36] for part in page.split(f'href="{prefix}')[1:]
                    if len(part) > 36 and part[:36].count("-") == 4 and part[36] == "/"})

    return count
