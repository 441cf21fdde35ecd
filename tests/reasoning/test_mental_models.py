"""Thoughtbox's fifteen mental models: the seed's names and tags, content an agent can apply, lookup and
filtering with clear errors, the capability graph and the markdown prompt. Static data: no database."""
import re

import pytest

from apps.core.exceptions import InvalidInput, NotFound
from apps.reasoning.mental_models import (
    HAS_TAG, MODELS, RELATED_TO, TAGS, MentalModel, capability_graph, catalog_markdown, model_get, models_list,
)

# The seed's lists (seeds/001_fb29208e2c2583e8.txt, mental_models), in its order.
SEED_MODELS = [
    "first-principles", "rubber-duck", "socratic-questioning", "devils-advocate", "six-thinking-hats",
    "ooda-loop", "fermi-estimation", "premortem-analysis", "five-whys", "eisenhower-matrix", "swot-analysis",
    "backcasting", "red-team-blue-team", "stakeholder-analysis", "decision-matrix",
]
SEED_TAGS = {
    "debugging": "Troubleshooting and root cause analysis",
    "planning": "Strategy and project planning",
    "decision-making": "Choices and trade-offs",
    "risk-analysis": "Identifying and mitigating risks",
    "estimation": "Approximations and forecasting",
    "prioritization": "Ordering tasks and goals",
    "communication": "Explaining and persuading",
    "architecture": "System design decisions",
    "validation": "Testing and verification",
}
ALL = list(MODELS.values())


def test_the_fifteen_seed_models_in_the_seed_order():
    assert list(MODELS) == SEED_MODELS
    assert all(model.name == name for name, model in MODELS.items())


def test_the_nine_seed_tags_with_their_descriptions():
    assert TAGS == SEED_TAGS


@pytest.mark.parametrize("model", ALL, ids=lambda model: model.name)
def test_every_model_has_content_an_agent_can_apply(model: MentalModel):
    assert model.title and model.summary and "\n" not in model.summary
    assert len(model.description) >= 300
    assert 3 <= len(model.when_to_use) <= 5
    assert 4 <= len(model.steps) <= 8
    assert all(len(step) >= 30 for step in model.steps)
    assert 2 <= len(model.pitfalls) <= 4
    # A worked example with concrete numbers, carried through numbered steps.
    assert len(model.example) >= 700
    assert re.search(r"\d", model.example)
    assert len(re.findall(r"^\d+\. ", model.example, flags=re.MULTILINE)) >= 4
    assert model.tags and set(model.tags) <= set(TAGS)
    assert model.related and set(model.related) <= set(MODELS) and model.name not in model.related


def test_every_tag_is_used_and_assigned_where_it_belongs():
    assert {tag for model in ALL for tag in model.tags} == set(TAGS)
    assert "debugging" in MODELS["five-whys"].tags and "debugging" in MODELS["rubber-duck"].tags
    assert MODELS["fermi-estimation"].tags[0] == "estimation"
    assert "risk-analysis" in MODELS["premortem-analysis"].tags
    assert "prioritization" in MODELS["eisenhower-matrix"].tags


def test_no_two_models_share_a_description_summary_or_example():
    for field in ("description", "summary", "example", "title"):
        assert len({getattr(model, field) for model in ALL}) == len(ALL), field


def test_descriptions_name_their_origins():
    origins = {"ooda-loop": "John Boyd", "six-thinking-hats": "de Bono", "premortem-analysis": "Gary Klein",
               "eisenhower-matrix": "Eisenhower", "fermi-estimation": "Fermi", "five-whys": "Toyota",
               "rubber-duck": "Pragmatic Programmer", "backcasting": "Robinson"}
    for name, origin in origins.items():
        assert origin in MODELS[name].description, name


def test_the_catalogue_cannot_be_changed_by_a_caller():
    model = model_get("five-whys")
    with pytest.raises(AttributeError):
        model.steps.append("Blame someone.")
    with pytest.raises(AttributeError):
        model.title = "Six Whys"


def test_model_get_finds_a_model_by_its_name_and_forgiving_spellings():
    assert model_get("five-whys") is MODELS["five-whys"]
    assert model_get(" Five Whys ") is MODELS["five-whys"]
    assert model_get("red_team_blue_team") is MODELS["red-team-blue-team"]


def test_an_unknown_model_is_model_not_found_with_the_closest_names_and_how_to_list():
    with pytest.raises(NotFound) as raised:
        model_get("five-why")
    error = raised.value
    assert error.code == "model_not_found"
    assert error.extra["model"] == "five-why"
    assert error.extra["suggestions"][0] == "five-whys"
    assert "five-whys" in error.message and "list_models" in error.message

    with pytest.raises(NotFound) as raised:
        model_get("quantum-entanglement")
    assert raised.value.extra["suggestions"] == [] and "list_models" in raised.value.message


def test_models_list_without_a_tag_is_every_model():
    assert models_list() == ALL
    assert models_list(tag="") == ALL


def test_models_list_filters_by_tag():
    debugging = [model.name for model in models_list(tag="debugging")]
    assert debugging == ["rubber-duck", "ooda-loop", "five-whys"]
    assert [model.name for model in models_list(tag="estimation")] == ["fermi-estimation"]
    assert [model.name for model in models_list(tag=" Risk-Analysis ")] == [
        model.name for model in ALL if "risk-analysis" in model.tags]
    for tag in TAGS:
        assert all(tag in model.tags for model in models_list(tag=tag))


def test_an_unknown_tag_is_invalid_input_listing_the_tags():
    with pytest.raises(InvalidInput) as raised:
        models_list(tag="cooking")
    assert raised.value.field == "tag"
    assert all(tag in raised.value.message for tag in TAGS)


def test_the_capability_graph_is_consistent_and_complete():
    graph = capability_graph()
    names = [entity["name"] for entity in graph["entities"]]
    assert len(names) == len(set(names)) == len(MODELS) + len(TAGS)
    assert all(entity["entityType"] and entity["observations"] for entity in graph["entities"])
    # Every relation joins two entities of the graph.
    for relation in graph["relations"]:
        assert relation["from"] in names and relation["to"] in names, relation
    has_tag = {(r["from"], r["to"]) for r in graph["relations"] if r["relationType"] == HAS_TAG}
    related = {(r["from"], r["to"]) for r in graph["relations"] if r["relationType"] == RELATED_TO}
    assert has_tag == {(model.name, f"tag:{tag}") for model in ALL for tag in model.tags}
    assert related == {(model.name, other) for model in ALL for other in model.related}
    assert graph["counts"] == {"models": 15, "tags": 9, "entities": 24,
                               "relations": len(has_tag) + len(related)}
    tag_entity = next(entity for entity in graph["entities"] if entity["name"] == "tag:debugging")
    assert tag_entity["observations"] == [TAGS["debugging"]]


def test_as_dict_has_every_field_in_camel_case():
    data = model_get("decision-matrix").as_dict()
    assert set(data) == {"name", "title", "summary", "description", "whenToUse", "steps", "example", "pitfalls",
                         "tags", "related"}
    assert data["steps"] == list(MODELS["decision-matrix"].steps)
    assert isinstance(data["tags"], list)


def test_as_markdown_is_a_prompt_with_every_part_of_the_model():
    model = model_get("premortem-analysis")
    markdown = model.as_markdown()
    assert markdown.startswith("# Premortem Analysis (`premortem-analysis`)")
    sections = ["## When to use", "## Steps", "## Worked example", "## Pitfalls", "## Related models"]
    positions = [markdown.index(section) for section in sections]
    assert positions == sorted(positions)
    assert model.description in markdown and model.example in markdown
    for number, step in enumerate(model.steps, start=1):
        assert f"{number}. {step}" in markdown
    assert all(f"- {pitfall}" in markdown for pitfall in model.pitfalls)
    for other in model.related:
        assert f"`{other}`: {MODELS[other].title}" in markdown
    assert f"totalThoughts: {len(model.steps)}" in markdown


def test_the_catalog_lists_every_model_and_groups_them_by_tag():
    catalog = catalog_markdown()
    for model in ALL:
        assert f"`{model.name}` -- **{model.title}**: {model.summary}" in catalog
    by_tag = catalog.split("## By tag", 1)[1]
    debugging_line = next(line for line in by_tag.splitlines() if line.startswith("- **debugging**"))
    assert "`five-whys`" in debugging_line and "`swot-analysis`" not in debugging_line
