"""entailment_query's selector (apps/cognition/selectors/entailment.py) on a hand-built IS-A hierarchy: the closure
along and against hierarchical links, confidence by hand, the depth and direction bounds, another user's nodes,
bad input naming its field, and query counts that do not grow with the graph."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cognition.selectors.entailment import METHOD, node_entailment
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import MemoryLink
from tests.cognition.causal_graphs import HIERARCHICAL, TAXONOMY, TAXONOMY_LINKS, draw
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return UserFactory()


def ids(nodes, *names) -> list[str]:
    return [str(nodes[name].pk) for name in names]


def test_closure_and_confidence_by_hand(alice):
    g = draw(alice, TAXONOMY, TAXONOMY_LINKS)
    cat = str(g["cat"].pk)
    found = node_entailment(actor=alice, node_id=cat)  # both ways, depth 3
    assert [entry.node_id for entry in found.ancestors] == ids(g, "mammal", "animal", "living")
    assert [round(entry.confidence, 4) for entry in found.ancestors] == [0.9, 0.72, 0.36]
    assert [entry.path.hops for entry in found.ancestors] == [1, 2, 3]
    assert [entry.node_id for entry in found.descendants] == ids(g, "kitten")  # the semantic dog link is no IS-A
    assert found.confidence == pytest.approx((0.9 + 0.72 + 0.36 + 0.7) / 4)
    assert found.method == METHOD and "mean" in METHOD and "No hyperbolic embedding" in METHOD
    assert {(arc.source, arc.target) for arc in found.edges} == {
        (str(g["cat"].pk), str(g["mammal"].pk)), (str(g["mammal"].pk), str(g["animal"].pk)),
        (str(g["animal"].pk), str(g["living"].pk)), (str(g["kitten"].pk), cat)}


def test_depth_and_direction_bound_the_closure(alice):
    g = draw(alice, TAXONOMY, TAXONOMY_LINKS)
    cat = str(g["cat"].pk)
    two = node_entailment(actor=alice, node_id=cat, max_depth=2)
    assert [entry.node_id for entry in two.ancestors] == ids(g, "mammal", "animal")
    assert two.confidence == pytest.approx((0.9 + 0.72 + 0.7) / 3)
    up = node_entailment(actor=alice, node_id=cat, direction="ancestors", max_depth=1)
    assert ([entry.node_id for entry in up.ancestors], up.descendants) == (ids(g, "mammal"), [])
    down = node_entailment(actor=alice, node_id=str(g["animal"].pk), direction="descendants", max_depth=10)
    assert [entry.node_id for entry in down.descendants] == ids(g, "mammal", "cat", "kitten")
    assert [round(entry.confidence, 4) for entry in down.descendants] == [0.8, 0.72, 0.504]
    alone = node_entailment(actor=alice, node_id=str(g["dog"].pk))
    assert (alone.ancestors, alone.descendants, alone.confidence) == ([], [], 0.0)


def test_the_best_path_counts_when_two_lead_to_an_ancestor(alice):
    g = draw(alice, TAXONOMY, TAXONOMY_LINKS + [("cat", "animal", HIERARCHICAL, 0.6)])
    found = node_entailment(actor=alice, node_id=str(g["cat"].pk), direction="ancestors")
    animal = next(entry for entry in found.ancestors if entry.node_id == str(g["animal"].pk))
    assert animal.confidence == pytest.approx(0.72) and animal.path.hops == 2  # 0.9 x 0.8 beats the direct 0.6


def test_another_users_nodes_are_neither_named_nor_reached(alice):
    bob = UserFactory()
    mine = draw(alice, TAXONOMY, TAXONOMY_LINKS)
    his = draw(bob, {"secret": "Bob's private category of felines."}, [])
    MemoryLink.objects.create(source=mine["cat"], target=his["secret"], link_type=HIERARCHICAL, weight=1.0)
    MemoryLink.objects.create(source=his["secret"], target=mine["mammal"], link_type=HIERARCHICAL, weight=1.0)
    found = node_entailment(actor=alice, node_id=str(mine["cat"].pk), max_depth=10)
    reached = {entry.node_id for entry in [*found.ancestors, *found.descendants]} | set(found.names)
    assert str(his["secret"].pk) not in reached
    with pytest.raises(NotFound) as raised:
        node_entailment(actor=bob, node_id=str(mine["cat"].pk))
    assert raised.value.extra["field"] == "node_id"


@pytest.mark.parametrize("arguments, field", [
    ({"node_id": "cat"}, "node_id"), ({"node_id": None}, "node_id"), ({"direction": "sideways"}, "direction"),
    ({"max_depth": 0}, "max_depth"), ({"max_depth": 11}, "max_depth"), ({"max_depth": "3"}, "max_depth"),
])
def test_bad_input_names_the_field(alice, arguments, field):
    g = draw(alice, TAXONOMY, TAXONOMY_LINKS)
    with pytest.raises(InvalidInput) as raised:
        node_entailment(actor=alice, **{"node_id": str(g["cat"].pk), **arguments})
    assert raised.value.field == field


def tree(user, kinds: int, members: int) -> dict:
    """A genus, ``kinds`` kinds of it and ``members`` members of each kind: 1 + kinds x (1 + members) nodes."""
    texts = {"genus": "The genus every kind below belongs to."}
    links = []
    for kind in range(kinds):
        texts[f"kind{kind}"] = f"Kind number {kind} of the genus."
        links.append((f"kind{kind}", "genus", HIERARCHICAL, 0.9))
        for member in range(members):
            texts[f"member{kind}_{member}"] = f"Member {member} of kind {kind}."
            links.append((f"member{kind}_{member}", f"kind{kind}", HIERARCHICAL, 0.8))
    return draw(user, texts, links)


def test_query_counts_do_not_grow_with_the_graph():
    small_owner, large_owner = UserFactory(), UserFactory()
    small, large = tree(small_owner, 2, 1), tree(large_owner, 7, 6)
    assert (len(small), len(large)) == (5, 50)

    def counted(owner, nodes) -> int:
        node_entailment(actor=owner, node_id=str(nodes["kind0"].pk), max_depth=10)
        with CaptureQueriesContext(connection) as queries:
            found = node_entailment(actor=owner, node_id=str(nodes["member0_0"].pk), direction="ancestors")
            node_entailment(actor=owner, node_id=str(nodes["genus"].pk), direction="descendants", max_depth=10)
        assert found.ancestors
        return len(queries)

    assert counted(large_owner, large) <= counted(small_owner, small)
