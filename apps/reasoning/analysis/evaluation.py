"""Precision, recall and F1 of the lexicon detectors on the labelled sets in tests/data.

One implementation for bench/reasoning_detectors.py (which prints the table for docs/benchmarks.md) and
tests/reasoning/test_detector_floors.py (which holds the floors), so the two can never measure differently.

The sets were written in four rounds (tests/data/README.md), and are scored in three parts:
- dev: the first round less its held-out examples, plus the second and third (``"part": "round2"`` and
  ``"round3"``), each scored once on arrival and then developed on.
- held_out: every fourth example of the first round (index 3, 7, 11, ... among the unmarked examples). Written in
  the same sitting as dev, so it shares dev's phrasing: an optimistic figure.
- blind: the fourth round (``"part": "blind"``), written after the detectors were frozen and never tuned on:
  the figure to quote.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from apps.reasoning.analysis.bias import BIAS_TYPES, detect_biases
from apps.reasoning.analysis.emotion import EMOTIONS, detect_emotion

DATA_DIR = Path(__file__).resolve().parents[3] / "tests" / "data"
BIAS_SET = DATA_DIR / "bias_labelled.jsonl"
EMOTION_SET = DATA_DIR / "emotion_labelled.jsonl"
NONE = "(none)"  # the row for "no bias" / "no emotion": is silence detected as silence?
POLARITIES = ("positive", "negative", "neutral")
PARTS = ("dev", "held_out", "blind", "all")


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def part(examples: list[dict], name: str) -> list[dict]:
    if name not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}")
    if name == "all":
        return examples
    if name == "blind":
        return [example for example in examples if example.get("part") == "blind"]
    first = [example for example in examples if "part" not in example]
    if name == "held_out":
        return first[3::4]
    return [example for index, example in enumerate(first) if index % 4 != 3] + [
        example for example in examples if example.get("part") in {"round2", "round3"}]


@dataclass(frozen=True)
class ClassMetrics:
    label: str
    support: int  # gold examples of the class
    predicted: int
    correct: int

    @property
    def precision(self) -> float:
        # No prediction at all: nothing was wrong, but nothing was found either (sklearn's zero_division=0).
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.support if self.support else 0.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


@dataclass(frozen=True)
class Report:
    detector: str
    part: str
    examples: int
    classes: tuple[ClassMetrics, ...]  # the detector's classes, then NONE
    extra: dict[str, float]  # e.g. valence polarity accuracy
    errors: tuple[str, ...]  # one line per misread example, for developing on the dev part

    def by_label(self) -> dict[str, ClassMetrics]:
        return {item.label: item for item in self.classes}

    def macro(self) -> tuple[float, float, float]:
        """Macro precision, recall and F1 over the detector's own classes (NONE is reported, not averaged)."""
        rows = [item for item in self.classes if item.label != NONE]
        return (sum(item.precision for item in rows) / len(rows), sum(item.recall for item in rows) / len(rows),
                sum(item.f1 for item in rows) / len(rows))


def _count(label: str, gold: Iterable[set[str]], predicted: Iterable[set[str]]) -> ClassMetrics:
    pairs = list(zip(gold, predicted, strict=True))
    return ClassMetrics(label, support=sum(label in g for g, _ in pairs), predicted=sum(label in p for _, p in pairs),
                        correct=sum(label in g and label in p for g, p in pairs))


def _label_sets(labels: Iterable[set[str]]) -> list[set[str]]:
    return [set(item) or {NONE} for item in labels]


def evaluate_bias(examples: list[dict], *, name: str = "all") -> Report:
    gold = _label_sets(set(example["biases"]) for example in examples)
    predicted = _label_sets({finding.type for finding in detect_biases(example["text"],
                                                                        context=example.get("context", ""))}
                            for example in examples)
    errors = tuple(f"gold {sorted(g)} got {sorted(p)}: {example['text']}"
                   for example, g, p in zip(examples, gold, predicted, strict=True) if g != p)
    exact = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(examples)
    return Report("bias", name, len(examples), tuple(_count(label, gold, predicted) for label in [*BIAS_TYPES, NONE]),
                  {"exact match": exact}, errors)


def evaluate_emotion(examples: list[dict], *, name: str = "all") -> Report:
    readings = [detect_emotion(example["text"]) for example in examples]
    gold = [{example["primary"] or NONE} for example in examples]
    predicted = [{reading.primary or NONE} for reading in readings]
    classes = [_count(label, gold, predicted) for label in [*EMOTIONS, NONE]]
    polarity_gold = [{example["valence"]} for example in examples]
    polarity = [{reading.polarity} for reading in readings]
    extra = {"primary accuracy": sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(examples),
             "valence polarity accuracy": sum(g == p for g, p in zip(polarity_gold, polarity, strict=True))
             / len(examples)}
    for label in POLARITIES:
        metrics = _count(label, polarity_gold, polarity)
        extra[f"valence {label} P"], extra[f"valence {label} R"] = metrics.precision, metrics.recall
    errors = tuple(f"gold {example['primary']}/{example['valence']} got {reading.primary}/{reading.polarity} "
                   f"(v={reading.valence:.2f}): {example['text']}"
                   for example, reading in zip(examples, readings, strict=True)
                   if (example["primary"], example["valence"]) != (reading.primary, reading.polarity))
    return Report("emotion", name, len(examples), tuple(classes), extra, errors)


EVALUATORS: dict[str, tuple[Path, Callable[..., Report]]] = {
    "bias": (BIAS_SET, evaluate_bias), "emotion": (EMOTION_SET, evaluate_emotion),
}


def evaluate(detector: str, part_name: str) -> Report:
    path, evaluator = EVALUATORS[detector]
    return evaluator(part(load(path), part_name), name=part_name)


def format_table(report: Report) -> str:
    """The report as a markdown table, ready for docs/benchmarks.md."""
    lines = [f"**{report.detector}, {report.part} ({report.examples} examples)**", "",
             "| class | support | predicted | precision | recall | F1 |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for item in report.classes:
        lines.append(f"| {item.label} | {item.support} | {item.predicted} | {item.precision:.2f} | "
                     f"{item.recall:.2f} | {item.f1:.2f} |")
    precision, recall, f1 = report.macro()
    lines.append(f"| macro ({len(report.classes) - 1} classes) | | | {precision:.2f} | {recall:.2f} | {f1:.2f} |")
    lines += ["", ", ".join(f"{key} {value:.2f}" for key, value in report.extra.items())]
    return "\n".join(lines)
