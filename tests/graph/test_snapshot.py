"""GET /api/v1/graph/snapshot/ and its selector: contract, filters, caps, query count, isolation."""
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.graph.models import GraphEvent
from apps.graph.selectors import NODE_KEYWORDS, EDGE_COLUMNS, edge_payload, graph_snapshot, node_payload
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_delete

URL = "/api/v1/graph/snapshot/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_graph(user, store, django_capture_on_commit_callbacks):
    """Three linked memories of alice's, oldest first (their events stored, as after a commit)."""
    with django_capture_on_commit_callbacks(execute=True):
        return [
            store(user, "The payment service talks to Stripe over HTTPS", tags=["payments"]),
            store(user, "The payment service retries Stripe calls three times", tags=["payments"]),
            store(user, "Stripe webhooks reach the payment service through a queue", tags=["payments"],
                  primary_sector="procedural"),
        ]


def test_the_snapshot_has_nodes_edges_counts_and_the_last_event(api, user, alice_graph):
    response = api.get(URL)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"nodes", "edges", "total_nodes", "shown_nodes", "last_event_id"}
    assert [node["id"] for node in body["nodes"]] == [str(memory.pk) for memory in reversed(alice_graph)]
    newest = alice_graph[-1]
    assert body["nodes"][0] == {
        "id": str(newest.pk), "content": newest.content, "kind": "memory", "sector": "procedural",
        "importance": newest.importance, "strength": newest.strength, "salience": newest.salience,
        "created_at": newest.created_at.isoformat(), "cube": newest.cube_id, "tags": ["payments"],
        "keywords": newest.keywords[:NODE_KEYWORDS],
    }
    assert len(newest.keywords) > NODE_KEYWORDS, "the cut of keywords is seen"
    assert body["edges"] and all(set(edge) == {"source", "target", "type", "weight"} for edge in body["edges"])
    ids = {str(memory.pk) for memory in alice_graph}
    assert all(edge["source"] in ids and edge["target"] in ids for edge in body["edges"])
    assert (body["total_nodes"], body["shown_nodes"]) == (3, 3)
    assert body["last_event_id"] == GraphEvent.objects.latest("id").id


def test_the_sql_writes_the_same_nodes_and_edges_as_the_live_events(user, alice_graph):
    # SNAPSHOT_SQL builds the JSON in PostgreSQL; events.py builds it with node_payload/edge_payload: one shape.
    # One creation time falls on a whole second, where isoformat() writes no fraction.
    whole_second = alice_graph[0].created_at.replace(microsecond=0)
    Memory.objects.filter(pk=alice_graph[0].pk).update(created_at=whole_second)
    snapshot = graph_snapshot(actor=user)
    assert snapshot.nodes == [node_payload(Memory.objects.get(pk=memory.pk)) for memory in reversed(alice_graph)]
    links = MemoryLink.objects.filter(source__in=alice_graph).order_by("id").values(*EDGE_COLUMNS)
    assert snapshot.edges == [edge_payload(**row) for row in links]


def test_content_is_a_preview(api, user, store):
    store(user, "word " * 400)
    [node] = api.get(URL).json()["nodes"]
    assert len(node["content"]) == 200


def test_the_cap_shows_n_of_m_with_only_the_edges_among_the_shown(api, alice_graph):
    body = api.get(URL, {"limit": 2}).json()
    assert (body["total_nodes"], body["shown_nodes"], len(body["nodes"])) == (3, 2, 2)
    shown = {node["id"] for node in body["nodes"]}
    assert str(alice_graph[0].pk) not in shown
    assert all(edge["source"] in shown and edge["target"] in shown for edge in body["edges"])


def test_filters(api, user, alice_graph):
    assert [n["sector"] for n in api.get(URL, {"sector": "procedural"}).json()["nodes"]] == ["procedural"]
    Memory.objects.filter(pk=alice_graph[0].pk).update(strength=0.2, created_at=timezone.now() - timedelta(days=10))
    assert api.get(URL, {"min_strength": 0.5}).json()["total_nodes"] == 2
    old_day = (timezone.now() - timedelta(days=10)).date().isoformat()
    assert api.get(URL, {"date_to": old_day + "T23:59:59Z"}).json()["total_nodes"] == 1
    assert api.get(URL, {"date_from": timezone.now().date().isoformat()}).json()["total_nodes"] == 2
    assert api.get(URL, {"kind": "memory", "cube": alice_graph[0].cube_id}).json()["total_nodes"] == 3
    Memory.objects.filter(pk=alice_graph[2].pk).update(tags=["payments", "queues"])
    tagged = api.get(URL, {"tag": "queues"}).json()
    assert [node["id"] for node in tagged["nodes"]] == [str(alice_graph[2].pk)] and tagged["total_nodes"] == 1
    assert tagged["nodes"][0]["tags"] == ["payments", "queues"]
    assert api.get(URL, {"tag": "payments"}).json()["total_nodes"] == 3
    assert api.get(URL, {"tag": "Payments"}).json()["total_nodes"] == 0
    memory_delete(actor=user, memory_id=alice_graph[1].pk)
    body = api.get(URL).json()
    assert str(alice_graph[1].pk) not in {n["id"] for n in body["nodes"]}
    # Unfiltered, the total comes from the lexeme counts; filtered, from a count of the rows: they agree.
    assert body["total_nodes"] == api.get(URL, {"min_strength": 0}).json()["total_nodes"] == 2
    assert api.get(URL, {"cube": alice_graph[0].cube_id}).json()["total_nodes"] == 2


def test_nodes_and_edges_take_one_statement(user, alice_graph, django_assert_num_queries):
    # The last event id; then the nodes, their total and the edges among them, as JSON, in one statement.
    with django_assert_num_queries(2):
        snapshot = graph_snapshot(actor=user, limit=10000)
    assert snapshot.shown_nodes == 3 and snapshot.edges
    # One more to check that a named cube is readable.
    with django_assert_num_queries(3):
        graph_snapshot(actor=user, cube_id=alice_graph[0].cube_id, sector="semantic", min_strength=0.1)
    with django_assert_num_queries(2):
        assert graph_snapshot(actor=user, tag="payments").shown_nodes == 3


def test_another_user_sees_nothing_of_alices_graph(api_client_for, other_user, alice_graph):
    bob = api_client_for(other_user)
    body = bob.get(URL).json()
    assert (body["nodes"], body["edges"], body["total_nodes"]) == ([], [], 0)
    assert bob.get(URL, {"tag": "payments"}).json()["total_nodes"] == 0
    foreign = bob.get(URL, {"cube": alice_graph[0].cube_id})
    unknown = bob.get(URL, {"cube": "no-such-cube"})
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json()["error"]["message"].replace(alice_graph[0].cube_id, "X") == \
        unknown.json()["error"]["message"].replace("no-such-cube", "X")


def test_a_read_token_is_enough_and_anonymous_is_refused(client, api_client_for, user, alice_graph):
    assert api_client_for(user, scopes=("read",)).get(URL).status_code == 200
    assert client.get(URL).status_code in (401, 403)


@pytest.mark.parametrize(("query", "field"), [
    ({"limit": 0}, "limit"),
    ({"limit": 10001}, "limit"),
    ({"limit": "many"}, "limit"),
    ({"sector": "spatial"}, "sector"),
    ({"kind": "hunch"}, "kind"),
    ({"tag": "t" * 101}, "tag"),
    ({"tag": "a\x00b"}, "tag"),
    ({"min_strength": 1.5}, "min_strength"),
    ({"date_from": "yesterday"}, "date_from"),
    ({"date_from": "2026-02-01", "date_to": "2026-01-01"}, "date_to"),
    ({"cube": "a/b"}, "cube"),
    ({"cubes": "x"}, "cubes"),
])
def test_bad_queries_get_a_400_naming_the_field(api, query, field):
    response = api.get(URL, query)
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]
