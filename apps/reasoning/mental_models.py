"""Thoughtbox's fifteen mental models: structured reasoning frameworks an agent applies step by step.

The models are static data (content_files/mental_models.toml, written to be applied from the text alone);
this module loads them once into frozen ``MentalModel`` objects and answers the seed's four operations:
get_model, list_models, list_tags and get_capability_graph. No database: every user sees the same catalogue.
"""
from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apps.core.exceptions import InvalidInput, NotFound

CONTENT_FILE = Path(__file__).resolve().parent / "content_files" / "mental_models.toml"

# Knowledge-graph vocabulary of capability_graph(). Tag entities are prefixed so that a tag can never
# collide with a model of the same name.
MODEL_ENTITY_TYPE = "mental_model"
TAG_ENTITY_TYPE = "mental_model_tag"
TAG_ENTITY_PREFIX = "tag:"
HAS_TAG = "HAS_TAG"
RELATED_TO = "RELATED_TO"


@dataclass(frozen=True)
class MentalModel:
    """One model. Sequences are tuples: the catalogue is shared by every request and must not be mutated."""

    name: str
    title: str
    summary: str
    description: str
    when_to_use: tuple[str, ...]
    steps: tuple[str, ...]
    example: str
    pitfalls: tuple[str, ...]
    tags: tuple[str, ...]
    related: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The model as JSON, with Thoughtbox's camelCase keys."""
        return {
            "name": self.name, "title": self.title, "summary": self.summary, "description": self.description,
            "whenToUse": list(self.when_to_use), "steps": list(self.steps), "example": self.example,
            "pitfalls": list(self.pitfalls), "tags": list(self.tags), "related": list(self.related),
        }

    def as_markdown(self) -> str:
        """The model as the prompt Thoughtbox serves: enough to apply it now, one thought per step."""
        lines = [
            f"# {self.title} (`{self.name}`)", "", f"> {self.summary}", "", self.description, "",
            f"**Tags:** {', '.join(f'`{tag}`' for tag in self.tags)}", "",
            "## When to use", "", *(f"- {situation}" for situation in self.when_to_use), "",
            "## Steps", "", *(f"{number}. {step}" for number, step in enumerate(self.steps, start=1)), "",
            "## Worked example", "", self.example, "",
            "## Pitfalls", "", *(f"- {pitfall}" for pitfall in self.pitfalls), "",
            "## Related models", "",
            *(f"- `{name}`: {MODELS[name].title} -- {MODELS[name].summary}" for name in self.related), "",
            "## Apply it with thoughtbox", "",
            f"Work through the steps as a thought chain: one thought per step (totalThoughts: {len(self.steps)}), "
            "each naming the step it carries out and the concrete facts of your problem. Revise a thought "
            "(isRevision, revisesThought) when a later step shows an earlier one was wrong, and branch "
            "(branchFromThought, branchId) to compare alternatives.",
        ]
        return "\n".join(lines).strip() + "\n"


def _load() -> tuple[dict[str, MentalModel], dict[str, str]]:
    data = tomllib.loads(CONTENT_FILE.read_text(encoding="utf-8"))
    models = {
        name: MentalModel(
            name=name, title=fields["title"], summary=fields["summary"], description=fields["description"].strip(),
            when_to_use=tuple(fields["when_to_use"]), steps=tuple(fields["steps"]), example=fields["example"].strip(),
            pitfalls=tuple(fields["pitfalls"]), tags=tuple(fields["tags"]), related=tuple(fields["related"]),
        )
        for name, fields in data["models"].items()
    }
    return models, dict(data["tags"])


MODELS, TAGS = _load()


def _normalise(value: str) -> str:
    """Lets "Five Whys", "five_whys" and " five-whys " all name the model five-whys."""
    return re.sub(r"[\s_]+", "-", value.strip().lower())


def model_get(name: str) -> MentalModel:
    model = MODELS.get(_normalise(name)) if isinstance(name, str) else None
    if model is None:
        suggestions = difflib.get_close_matches(_normalise(str(name)), list(MODELS), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        raise NotFound(
            f'No mental model named "{name}".{hint} Use the list_models operation (optionally with a tag) to see '
            f"the {len(MODELS)} available models.",
            code="model_not_found", extra={"model": name, "suggestions": suggestions},
        )
    return model


def models_list(tag: str | None = None) -> list[MentalModel]:
    """Every model in the seed's order, or those carrying ``tag``. An empty tag means no filter."""
    if not tag:
        return list(MODELS.values())
    wanted = _normalise(tag)
    if wanted not in TAGS:
        raise InvalidInput(
            f'Unknown tag "{tag}". Use one of: {", ".join(TAGS)} (list_tags describes each).', field="tag",
        )
    return [model for model in MODELS.values() if wanted in model.tags]


def tags_list() -> list[dict[str, Any]]:
    """Every tag in the seed's order, with its description and how many models carry it."""
    counts = {tag: 0 for tag in TAGS}
    for model in MODELS.values():
        for tag in model.tags:
            counts[tag] += 1
    return [{"name": tag, "description": description, "modelCount": counts[tag]} for tag, description in TAGS.items()]


def capability_graph() -> dict[str, Any]:
    """The catalogue as a knowledge graph, in the entities/relations shape of MCP knowledge-graph memory servers
    ({name, entityType, observations} and {from, to, relationType}), so it loads without translation."""
    entities = [
        {
            "name": model.name, "entityType": MODEL_ENTITY_TYPE,
            "observations": [model.title, model.summary, *(f"Use when: {use}" for use in model.when_to_use)],
        }
        for model in MODELS.values()
    ] + [
        {"name": f"{TAG_ENTITY_PREFIX}{tag}", "entityType": TAG_ENTITY_TYPE, "observations": [description]}
        for tag, description in TAGS.items()
    ]
    relations = [
        {"from": model.name, "to": f"{TAG_ENTITY_PREFIX}{tag}", "relationType": HAS_TAG}
        for model in MODELS.values() for tag in model.tags
    ] + [
        {"from": model.name, "to": other, "relationType": RELATED_TO}
        for model in MODELS.values() for other in model.related
    ]
    return {
        "entities": entities, "relations": relations,
        "counts": {"models": len(MODELS), "tags": len(TAGS), "entities": len(entities), "relations": len(relations)},
    }


def catalog_markdown() -> str:
    """The thoughtbox://mental-models/catalog resource: every model's one-liner, grouped by tag."""
    lines = [
        "# Mental models catalog", "",
        f"{len(MODELS)} structured reasoning frameworks. Fetch one with the mental_models tool "
        '(`{"operation": "get_model", "args": {"model": "<name>"}}`) or the resource '
        "`thoughtbox://mental-models/<name>`.", "",
        "## Models", "",
        *(f"- `{model.name}` -- **{model.title}**: {model.summary} (tags: {', '.join(model.tags)})"
          for model in MODELS.values()),
        "", "## By tag", "",
    ]
    for tag, description in TAGS.items():
        names = ", ".join(f"`{model.name}`" for model in MODELS.values() if tag in model.tags)
        lines.append(f"- **{tag}** ({description}): {names}")
    return "\n".join(lines) + "\n"
