"""What every reasoning analysis takes and gives: the problem's context, the caller's memories used as
evidence, and the language model it may consult.

The analyses (think, frameworks, parallel, decompose, confidence, quality) are pure functions of these: the
services in apps/reasoning/services/analysis.py gather the evidence from the caller's memory graph and resolve
the model first, so an analysis never touches the database and runs the same in a thread or a test.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from apps.core.exceptions import InvalidInput

DETERMINISTIC = "deterministic"


@dataclass(frozen=True)
class ProblemContext:
    """The seed's context object: {background, constraints, goals}, all optional."""

    background: str = ""
    constraints: tuple[str, ...] = ()
    goals: tuple[str, ...] = ()

    @classmethod
    def parse(cls, value: Any, *, field_name: str = "context") -> ProblemContext:
        """The context as a caller sent it (None, a dict, or for the text-context tools a string)."""
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls(background=value.strip())
        if not isinstance(value, dict):
            raise InvalidInput(f"{field_name} must be an object with background, constraints and goals.",
                               field=field_name)
        unknown = set(value) - {"background", "constraints", "goals"}
        if unknown:
            raise InvalidInput(f"{field_name} has unknown keys: {', '.join(sorted(unknown))}; it takes background "
                               "(text), constraints and goals (lists of text).", field=f"{field_name}.{min(unknown)}")
        background = value.get("background") or ""
        if not isinstance(background, str):
            raise InvalidInput(f"{field_name}.background must be text.", field=f"{field_name}.background")
        return cls(background=background.strip(), constraints=_texts(value.get("constraints"), f"{field_name}.constraints"),
                   goals=_texts(value.get("goals"), f"{field_name}.goals"))

    @property
    def is_empty(self) -> bool:
        return not (self.background or self.constraints or self.goals)

    def as_text(self) -> str:
        lines = [f"Background: {self.background}"] if self.background else []
        lines += [f"Constraint: {item}" for item in self.constraints]
        lines += [f"Goal: {item}" for item in self.goals]
        return "\n".join(lines)


def _texts(value: Any, field_name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInput(f"{field_name} must be a list of text.", field=field_name)
    return tuple(item.strip() for item in value if item.strip())


@dataclass(frozen=True)
class EvidenceItem:
    """One of the caller's memories that bears on the problem: a plain memory, or a Mind decision, issue or sharp
    edge, or an earlier thought (``kind`` is Memory.kind)."""

    id: str
    kind: str
    content: str
    score: float
    metadata: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "content": self.content, "score": round(self.score, 4)}


class ModelBackend(Protocol):
    """A language model an analysis may consult: the configured OpenAI-compatible endpoint ("llm") or the MCP
    client's own model through sampling ("sampling"). ``key`` names the request within one tool call, so that
    several requests (think_parallel's four streams) can be told apart when the client answers them later."""

    method: str  # "llm" | "sampling"
    name: str  # the model's name, as the backend reports it

    def complete(self, *, system: str, prompt: str, max_tokens: int, key: str) -> str:
        ...
