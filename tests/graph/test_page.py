"""The graph page (/graph/): login, the navigation link, the page's configuration, and isolation: alice's
page never names bob's cubes, and a foreign ?cube= is refused with a message, like an unknown one."""
import json

import pytest
from django.urls import reverse

from apps.cubes.models import Cube
from apps.cubes.services import cube_ensure_personal

pytestmark = pytest.mark.django_db
URL = "/graph/"


def page_config(response) -> dict:
    html = response.content.decode()
    start = html.index('<script id="graph-config" type="application/json">') + len(
        '<script id="graph-config" type="application/json">')
    return json.loads(html[start:html.index("</script>", start)])


def test_the_graph_page_needs_a_login(client):
    response = client.get(URL)
    assert response.status_code == 302 and response["Location"] == f"{reverse('dashboard:login')}?next={URL}"


def test_the_navigation_links_to_the_graph(alice):
    response = alice.get(reverse("dashboard:home"))
    assert f'<a href="{URL}">Graph</a>' in response.content.decode()
    assert '<a href="/graph/" aria-current="page">Graph</a>' in alice.get(URL).content.decode()


def test_the_page_loads_the_bundle_and_configures_every_readable_cube(alice, user, other_user):
    mine = cube_ensure_personal(actor=user)
    bobs = cube_ensure_personal(actor=other_user)
    response = alice.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<script src="/static/graph/graph.js" defer></script>' in html
    assert "csrfmiddlewaretoken" in html
    assert "https://" not in html.split("<body>", 1)[1].split("<footer")[0], "no CDN: the page works offline"
    config = page_config(response)
    assert config["cube"] == ""
    assert config["cubes"] == [{"id": mine.pk, "name": mine.name}]
    assert bobs.pk not in html and bobs.name not in html
    assert config["urls"]["snapshot"] == "/api/v1/graph/snapshot/"
    assert config["urls"]["boost"] == "/api/v1/graph/memories/MEMORY_ID/boost/"
    assert config["urls"]["edit"] == "/memories/MEMORY_ID/edit/"
    assert config["urls"]["socket"] == "/ws/graph/"
    assert {sector["value"] for sector in config["sectors"]} == {
        "episodic", "semantic", "procedural", "emotional", "reflective"}
    assert config["filters"]["limit"] == "5000"


def test_a_cube_and_filters_come_from_the_query_string(alice, user):
    mine = cube_ensure_personal(actor=user)
    response = alice.get(URL, {"cube": mine.pk, "sector": "episodic", "tag": "garden", "min_strength": "0.4",
                               "limit": "500"})
    config = page_config(response)
    assert config["cube"] == mine.pk
    assert config["filters"] == {"kind": "", "sector": "episodic", "tag": "garden", "date_from": "", "date_to": "",
                                 "min_strength": "0.4", "limit": "500"}
    html = response.content.decode()
    assert f'<option value="{mine.pk}" selected>' in html
    assert '<option value="episodic" selected>' in html
    assert 'name="tag" type="text" list="graph-tags" value="garden"' in html


@pytest.mark.parametrize("cube_id", ["bob-cube", "no-such-cube"])
def test_someone_elses_or_an_unknown_cube_is_refused_with_a_message(alice, other_user, cube_id):
    Cube.objects.create(id="bob-cube", name="Bob's secret plans", owner=other_user)
    response = alice.get(URL, {"cube": cube_id})
    assert response.status_code == 404
    html = response.content.decode()
    assert f"Cube &#x27;{cube_id}&#x27; not found: there is no cube of that id that you may read." in html
    assert "Bob&#x27;s secret plans" not in html and "graph-config" not in html


def test_bob_can_open_a_cube_shared_with_him(bob, user, other_user):
    from apps.cubes.models import CubeMembership

    cube = cube_ensure_personal(actor=user)
    CubeMembership.objects.create(cube=cube, user=other_user, role="reader")
    response = bob.get(URL, {"cube": cube.pk})
    assert response.status_code == 200 and page_config(response)["cube"] == cube.pk


def test_the_page_takes_a_bounded_number_of_queries(alice, user, other_user, django_assert_max_num_queries):
    for index in range(5):
        Cube.objects.create(id=f"alice-extra-{index}", name=f"Extra {index}", owner=user)
    with django_assert_max_num_queries(6):
        assert alice.get(URL).status_code == 200
