"""A memory's local graph (graph_neighbourhood and GET /api/v1/graph/memories/<id>/neighbourhood/): depth, both
link directions, the node cap and what it keeps, isolation, bad input, and a query count that does not grow with the
graph."""
import pytest

from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.services import cube_ensure_personal, cube_register, cube_share
from apps.graph.selectors import graph_neighbourhood
from apps.memories.models import MemoryLink
from apps.memories.services import memory_delete, memory_store_many

pytestmark = pytest.mark.django_db


def url(memory_id) -> str:
    return f"/api/v1/graph/memories/{memory_id}/neighbourhood/"


def memories(user, count: int, *, cube_id: str | None = None) -> list[str]:
    """``count`` memories of the user's with no links (one model call), as id strings in order."""
    results = memory_store_many(actor=user, cube_id=cube_id, link=False, items=[
        {"content": f"Field note {n}: the heron at pond {n} stood still for an hour", "primary_sector": "episodic"}
        for n in range(count)
    ])
    return [str(result.memory.pk) for result in results]


def link(source: str, target: str, weight: float, link_type: str = "semantic") -> None:
    MemoryLink.objects.create(source_id=source, target_id=target, weight=weight, link_type=link_type)


def ids(found) -> list[str]:
    return [node["id"] for node in found.nodes]


@pytest.fixture
def chain(user):
    """a -> b <- c -> d: a chain whose middle link points backwards, so each way is walked."""
    a, b, c, d = memories(user, 4)
    link(a, b, 0.9)
    link(c, b, 0.6, "causal")
    link(c, d, 0.7, "temporal")
    return a, b, c, d


def test_each_depth_reaches_one_link_further_either_way(user, chain):
    a, b, c, d = chain
    for depth, reached in ((1, [a, b]), (2, [a, b, c]), (3, [a, b, c, d])):
        found = graph_neighbourhood(actor=user, memory_id=a, depth=depth)
        assert ids(found) == reached
        assert [node["depth"] for node in found.nodes] == list(range(depth + 1))
        assert (found.centre_id, found.depth, found.capped) == (a, depth, False)
    around_b = graph_neighbourhood(actor=user, memory_id=b)
    assert ids(around_b) == [b, a, c]  # the strongest first: a -> b weighs 0.9, c -> b 0.6
    assert around_b.edges == [{"source": a, "target": b, "type": "semantic", "weight": 0.9},
                              {"source": c, "target": b, "type": "causal", "weight": 0.6}]


def test_the_links_among_the_outermost_memories_are_shown_too(user):
    centre, left, right = memories(user, 3)
    link(centre, left, 0.8)
    link(centre, right, 0.7)
    link(left, right, 0.5)
    found = graph_neighbourhood(actor=user, memory_id=centre, depth=1)
    assert {(edge["source"], edge["target"]) for edge in found.edges} == {(centre, left), (centre, right),
                                                                          (left, right)}


def test_the_cap_keeps_the_nearest_then_the_strongest_and_says_so(user):
    centre, weak, strong, far, *spokes = memories(user, 8)
    link(centre, weak, 0.2)
    link(centre, strong, 0.95)
    link(strong, far, 0.9)  # a path of 0.855: stronger than the weak neighbour's, but two links away
    for spoke, weight in zip(spokes, (0.3, 0.4, 0.5, 0.6)):
        link(spoke, centre, weight)
    capped = graph_neighbourhood(actor=user, memory_id=centre, depth=2, limit=3)
    assert ids(capped) == [centre, strong, spokes[3]] and capped.capped
    assert capped.edges == [{"source": centre, "target": strong, "type": "semantic", "weight": 0.95},
                            {"source": spokes[3], "target": centre, "type": "semantic", "weight": 0.6}]
    depth_one_full = graph_neighbourhood(actor=user, memory_id=centre, depth=2, limit=7)
    assert ids(depth_one_full) == [centre, strong, *reversed(spokes), weak] and depth_one_full.capped
    whole = graph_neighbourhood(actor=user, memory_id=centre, depth=2, limit=8)
    assert ids(whole)[-1] == far and not whole.capped
    assert graph_neighbourhood(actor=user, memory_id=centre, depth=1, limit=1).capped


def test_only_live_memories_the_actor_may_read_are_reached(user, other_user, chain):
    a, b, c, d = chain
    [bobs] = memories(other_user, 1)
    link(b, bobs, 0.99)  # a link into a cube alice cannot read: never walked
    memory_delete(actor=user, memory_id=c)
    found = graph_neighbourhood(actor=user, memory_id=a, depth=3)
    assert ids(found) == [a, b] and not found.capped
    with pytest.raises(NotFound) as refused:
        graph_neighbourhood(actor=other_user, memory_id=a)
    assert refused.value.extra["field"] == "memory_id"
    around_bobs = graph_neighbourhood(actor=other_user, memory_id=bobs, depth=3)
    assert ids(around_bobs) == [bobs]  # alice's b links to it, but bob cannot read b


def test_a_shared_cube_shows_its_memories_and_no_others(user, other_user):
    cube = cube_register(actor=user, cube_id="pond-survey", name="Pond survey").pk
    shared, shared_neighbour = memories(user, 2, cube_id=cube)
    [private] = memories(user, 1, cube_id=cube_ensure_personal(actor=user).pk)
    link(shared, shared_neighbour, 0.8)
    link(private, shared, 0.9)
    cube_share(actor=user, cube_id=cube, user=other_user.username)
    assert ids(graph_neighbourhood(actor=user, memory_id=shared)) == [shared, private, shared_neighbour]
    assert ids(graph_neighbourhood(actor=other_user, memory_id=shared)) == [shared, shared_neighbour]
    with pytest.raises(NotFound):
        graph_neighbourhood(actor=other_user, memory_id=private)


@pytest.mark.parametrize(("arguments", "field"), [
    ({"depth": 0}, "depth"), ({"depth": 4}, "depth"), ({"depth": "2"}, "depth"), ({"depth": True}, "depth"),
    ({"depth": 1.5}, "depth"), ({"limit": 0}, "limit"), ({"limit": 501}, "limit"),
])
def test_bad_arguments_name_the_field(user, chain, arguments, field):
    with pytest.raises(InvalidInput) as refused:
        graph_neighbourhood(actor=user, memory_id=chain[0], **arguments)
    assert refused.value.extra["field"] == field


def test_the_query_count_does_not_grow_with_the_graph(user, chain, django_assert_num_queries):
    a, b, c, d = chain
    # The memory, the readable cubes, three hops, the nodes, the links among them.
    with django_assert_num_queries(7):
        small = graph_neighbourhood(actor=user, memory_id=a, depth=3)
    assert len(small.nodes) == 4
    crowd = memories(user, 60)
    MemoryLink.objects.bulk_create([MemoryLink(source_id=hub, target_id=other, weight=0.5)
                                    for hub in (b, c, d) for other in crowd[:40]]
                                   + [MemoryLink(source_id=other, target_id=crowd[-1 - n], weight=0.4)
                                      for n, other in enumerate(crowd[:20])])
    with django_assert_num_queries(7):
        large = graph_neighbourhood(actor=user, memory_id=a, depth=3)
    assert len(large.nodes) == 4 + 60 and len(large.edges) > 120


# --- REST ---------------------------------------------------------------------------------------------------------

def test_rest_answers_with_the_nodes_edges_and_cap(api, chain):
    a, b, c, d = chain
    response = api.get(url(a), {"depth": 2})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"centre", "depth", "limit", "nodes", "edges", "capped"}
    assert (body["centre"], body["depth"], body["limit"], body["capped"]) == (a, 2, 150, False)
    assert [(node["id"], node["depth"]) for node in body["nodes"]] == [(a, 0), (b, 1), (c, 2)]
    assert set(body["nodes"][0]) == {"id", "content", "kind", "sector", "importance", "strength", "salience",
                                     "created_at", "cube", "tags", "keywords", "depth"}
    assert body["edges"] == [{"source": a, "target": b, "type": "semantic", "weight": 0.9},
                             {"source": c, "target": b, "type": "causal", "weight": 0.6}]
    assert [node["id"] for node in api.get(url(a)).json()["nodes"]] == [a, b]  # depth 1 by default
    assert api.get(url(a), {"depth": 3, "limit": 2}).json()["capped"] is True


def test_the_page_session_is_enough(alice, chain):
    response = alice.get(url(chain[0]), {"depth": 3})
    assert response.status_code == 200 and len(response.json()["nodes"]) == 4


@pytest.mark.parametrize(("query", "field"), [
    ({"depth": 0}, "depth"), ({"depth": 4}, "depth"), ({"depth": "two"}, "depth"), ({"depth": 2.5}, "depth"),
    ({"limit": 0}, "limit"), ({"limit": 10_000}, "limit"), ({"deep": 2}, "deep"),
])
def test_rest_bad_queries_get_a_400_naming_the_field(api, chain, query, field):
    response = api.get(url(chain[0]), query)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and field in error["details"]
    if field == "depth":
        assert "from 1 to 3" in str(error["details"]["depth"])


def test_rest_another_users_memory_is_not_found(api_client_for, other_user, api, chain):
    bob = api_client_for(other_user, scopes=("read",))
    foreign = bob.get(url(chain[0]))
    unknown = bob.get(url("0d4f3c52-8f3e-4a0b-9a55-3c1f2bb0d3a9"))
    garbage = bob.get(url("not-an-id"))
    assert foreign.status_code == unknown.status_code == garbage.status_code == 404
    assert foreign.json() == unknown.json()


def test_rest_anonymous_is_refused(client, chain):
    assert client.get(url(chain[0])).status_code in (401, 403)


# --- The memory page --------------------------------------------------------------------------------------------

def test_the_memory_page_loads_its_local_graph_or_says_why_there_is_none(alice, bob, user, chain):
    a, *_ = chain
    page = alice.get(f"/memories/{a}/")
    config = page.context["local_graph"]
    assert config["urls"] == {"neighbourhood": url(a), "page": "/memories/MEMORY_ID/"}
    assert (config["memory"], config["depth"]) == (a, 1)
    assert b'id="local-graph-config"' in page.content and b"graph/local.js" in page.content
    [lonely] = memories(user, 1)
    empty = alice.get(f"/memories/{lonely}/")
    assert b"No links yet." in empty.content and b"graph/local.js" not in empty.content
    assert bob.get(f"/memories/{a}/").status_code == 404
