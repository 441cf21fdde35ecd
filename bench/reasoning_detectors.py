"""Precision, recall and F1 of the deterministic bias and emotion detectors on their labelled sets.

    .venv/bin/python bench/reasoning_detectors.py                 # dev and held-out tables, both detectors
    .venv/bin/python bench/reasoning_detectors.py --part all --errors --detector bias

The sets are tests/data/bias_labelled.jsonl and emotion_labelled.jsonl (tests/data/README.md says how they were
written), in three parts: dev (tuned on), held_out (every fourth of the first round, same sitting as dev) and
blind (written after the detectors were frozen: the figure to quote); apps/reasoning/analysis/evaluation.py says
more. Bias is multi-label, scored
per type; emotion is scored on the primary emotion per class and on valence polarity. No database, no model:
the detectors are pure Python. `--errors` lists the misread examples of the chosen part, for development --
read the dev part's, never tune on the held-out part's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apps.reasoning.analysis.bias import detect_biases  # noqa: E402
from apps.reasoning.analysis.emotion import detect_emotion  # noqa: E402
from apps.reasoning.analysis.evaluation import EVALUATORS, PARTS, evaluate, format_table, load  # noqa: E402

DETECTORS = {"bias": detect_biases, "emotion": detect_emotion}


def time_per_text(detector: str, repeat: int = 20) -> float:
    """Mean microseconds per text over the whole labelled set, after one warm pass that loads the lexicons."""
    texts = [example["text"] for example in load(EVALUATORS[detector][0])]
    detect = DETECTORS[detector]
    for text in texts:
        detect(text)
    started = time.perf_counter()
    for _ in range(repeat):
        for text in texts:
            detect(text)
    return (time.perf_counter() - started) / (repeat * len(texts)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detector", choices=sorted(EVALUATORS), action="append",
                        help="bias or emotion (default: both)")
    parser.add_argument("--part", choices=PARTS, action="append",
                        help="dev, held_out, blind or all (default: the three parts, then all)")
    parser.add_argument("--errors", action="store_true", help="also list the examples the detector misread")
    args = parser.parse_args()
    print("$ .venv/bin/python bench/reasoning_detectors.py " + " ".join(sys.argv[1:]))
    for detector in args.detector or sorted(EVALUATORS):
        for part_name in args.part or PARTS:
            report = evaluate(detector, part_name)
            print()
            print(format_table(report))
            if args.errors:
                print()
                print("\n".join(f"  {line}" for line in report.errors) or "  (no errors)")
        print(f"\n{detector}: {time_per_text(detector):.0f} us per text (mean over the set, warm)")


if __name__ == "__main__":
    main()
