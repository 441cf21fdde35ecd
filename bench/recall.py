"""Evidence recall, as bench/locomo_eval.py and bench/multisession.py measure it: each question is asked through an
operation that returns turn labels best first; recall@k = share of the question's evidence turns in the top k,
averaged over questions; hit@k = at least one in the top k; also per category."""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

KS = (5, 10)


@dataclass(frozen=True)
class Asked:
    user: object
    text: str
    category: str
    evidence: frozenset[str]
    source: object = None  # what the script wants back with a miss (its question and conversation)


def evaluate(questions: Iterable[Asked], operation: Callable[[object, str, int], list[str]],
             misses: list | None = None) -> dict:
    """Every question through ``operation(user, text, limit) -> [label]``; ``misses`` collects (question, ranked)
    of each question with no evidence turn in the top 5."""
    totals = defaultdict(lambda: defaultdict(float))
    latencies = []
    for question in questions:
        started = time.perf_counter()
        ranked = operation(question.user, question.text, max(KS))
        latencies.append(time.perf_counter() - started)
        if misses is not None and not question.evidence & set(ranked[:5]):
            misses.append((question, ranked))
        for group in ("all", question.category):
            row = totals[group]
            row["n"] += 1
            for k in KS:
                found = len(question.evidence & set(ranked[:k]))
                row[f"recall@{k}"] += found / len(question.evidence)
                row[f"hit@{k}"] += 1.0 if found else 0.0
    report = {group: {"n": int(row["n"]), **{m: round(v / row["n"], 3) for m, v in row.items() if m != "n"}}
              for group, row in totals.items()}
    report["mean_ms"] = round(1000 * sum(latencies) / max(len(latencies), 1), 1)
    return report


def retrieve_ids(actor, text: str, limit: int) -> list[str]:
    """memory_retrieve's turn labels, without reinforcing what it returns (the data stays as it was)."""
    from apps.memories.services import memory_retrieve

    result = memory_retrieve(actor=actor, text=text, limit=limit, reinforce=False)
    return [item.memory.metadata["dia_id"] for item in result.items]


def search_ids(actor, text: str, limit: int) -> list[str]:
    from apps.memories.services import memory_search

    result = memory_search(actor=actor, text=text, limit=limit, reinforce=False)
    return [item.memory.metadata["dia_id"] for item in result.items]


def print_report(name: str, report: dict, categories: Iterable[str], service: dict | None = None) -> None:
    """One operation's table; beside another's (``service``), the difference of R@5 too."""
    print(f"\n{name} (mean {report['mean_ms']} ms a question)")
    print(f"{'':17} {'n':>4} {'R@5':>6} {'R@10':>6} {'hit@5':>6} {'hit@10':>6}" + (f" {'ΔR@5':>7}" if service else ""))
    for group in ["all", *categories]:
        row = report.get(group)
        if row:
            delta = f" {row['recall@5'] - service[group]['recall@5']:>+7.3f}" if service else ""
            print(f"{group:17} {row['n']:>4} {row['recall@5']:>6.3f} {row['recall@10']:>6.3f} "
                  f"{row['hit@5']:>6.3f} {row['hit@10']:>6.3f}{delta}")
