"""The search page: hybrid search through memory_search, its filters, pagination and safe highlighting."""
import pytest
from django.urls import reverse

from apps.memories.models import Memory
from apps.memories.services.retrieval.scoring import WITH_QUERY

pytestmark = pytest.mark.django_db


def search(client, **params):
    return client.get(reverse("dashboard:search"), params)


def test_empty_search_page_shows_the_form_and_the_syntax_hint(alice):
    response = search(alice)
    assert response.status_code == 200
    assert response.context["result"] is None
    html = response.content.decode()
    assert "AND" in html and "NOT" in html and "exact phrases" in html


def test_search_finds_highlights_and_reinforces(alice, user, store):
    wanted = store(user, "The quarterly invoice for Acme is due on the fifth.")
    store(user, "Tomatoes need full sun and regular watering.")
    response = search(alice, q="invoice")
    result = response.context["result"]
    assert result.items[0].memory.pk == wanted.pk
    html = response.content.decode()
    assert "<b>invoice</b>" in html
    assert 'class="tag term">invoice<' in html
    assert f'title="Composite score: {WITH_QUERY}"' in html
    assert Memory.objects.get(pk=wanted.pk).access_count == 1


def test_highlight_escapes_html_in_content(alice, user, store):
    store(user, 'Beware: <script>alert("owned")</script> was pasted into the wiki.')
    html = search(alice, q="wiki").content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;" in html or "&lt;script&gt;alert(" in html
    assert "<b>wiki</b>" in html


def test_boolean_query_and_filters(alice, user, store):
    store(user, "Deploy the API to the staging server on Monday.", primary_sector="procedural", tags=["ops"])
    store(user, "Deploy the website on Friday.", primary_sector="procedural", tags=["web"])
    store(user, "I felt relieved after the staging deploy.", primary_sector="emotional", tags=["ops"])

    full_text = search(alice, q='deploy NOT friday').context["result"]
    assert full_text.search_type == "full-text"
    assert {item.memory.content for item in full_text.items} == {
        "Deploy the API to the staging server on Monday.", "I felt relieved after the staging deploy.",
    }
    by_sector = search(alice, q="deploy", sector="emotional").context["result"]
    assert [item.memory.primary_sector for item in by_sector.items] == ["emotional"]
    by_tags = search(alice, q="deploy", tags="web").context["result"]
    assert [item.memory.tags for item in by_tags.items] == [["web"]]
    phrase = search(alice, q='"staging server"').context["result"]
    assert [item.memory.content for item in phrase.items] == ["Deploy the API to the staging server on Monday."]


def test_filters_without_text_and_pagination(alice, user, store):
    for i in range(12):
        store(user, f"Reading log entry {i}: finished another chapter.", category="reading")
    first = search(alice, category="reading", limit="10")
    assert first.context["result"].total_count == 12
    assert len(first.context["result"].items) == 10
    assert first.context["next_url"] and first.context["previous_url"] is None
    second = alice.get(reverse("dashboard:search") + first.context["next_url"])
    assert len(second.context["result"].items) == 2
    assert second.context["previous_url"] and second.context["next_url"] is None
    seen = {i.memory.pk for i in first.context["result"].items} | {i.memory.pk for i in second.context["result"].items}
    assert len(seen) == 12


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"q": "x", "min_strength": "abc"}, "min_strength", "Enter a number."),
        ({"q": "x", "min_strength": "2"}, "min_strength", "Min strength must be between 0 and 1"),
        ({"q": "x", "min_salience": "-0.5"}, "min_salience", "Min salience must be between 0 and 1"),
        ({"q": "x", "date_from": "2025-13-40"}, "date_from", "Enter a valid date."),
        ({"q": "x", "date_from": "2025-06-02", "date_to": "2025-06-01"}, "date_to", "From is after To"),
        ({"q": "x", "limit": "1000"}, "limit", "Select a valid choice."),
        ({"q": "x", "sector": "dreamy"}, "sector", "Select a valid choice."),
        ({"q": "NOT everything"}, "q", "nothing to search for"),
        ({"q": "x" * 2001}, "q", "Search has at most 2000 characters"),
    ],
)
def test_bad_filters_show_an_error_on_their_field(alice, params, field, message):
    response = search(alice, **params)
    assert response.status_code == 200
    form = response.context["form"]
    assert any(message in error for error in form.errors[field]), form.errors
    assert response.context["result"] is None
    assert message.split(" ")[0] in response.content.decode()


def test_negative_offset_is_reported_not_a_500(alice):
    response = search(alice, q="anything", offset="-5")
    assert response.status_code == 200
    assert "Use a whole number from 0 to 10000." in response.content.decode()


def test_an_offset_past_the_bound_is_reported_not_a_500(alice):
    response = search(alice, q="anything", offset=str(2**63 - 1))
    assert response.status_code == 200 and response.context["result"] is None
    assert "Use a whole number from 0 to 10000." in response.content.decode()


def test_date_filter_includes_the_whole_last_day(alice, user, store):
    memory = store(user, "Dentist appointment booked.")
    day = memory.created_at.date().isoformat()
    result = search(alice, q="dentist", date_from=day, date_to=day).context["result"]
    assert [item.memory.pk for item in result.items] == [memory.pk]
    result = search(alice, q="dentist", date_to="2000-01-01").context["result"]
    assert result.items == []
