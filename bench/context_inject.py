"""inject_context's service latency (context_inject) on a small graph: p50/p95 per distillation mode and priority.

The graph is seeded once into its own database (`--size` memories of LoCoMo-like sentences, linked as stores link
them) and kept between runs. Each figure is the wall time of the whole service call: retrieval, expansion, the
text within its budget, the session record, conflicts and their inbox tasks.

    .venv/bin/python bench/context_inject.py --size 500 --runs 30
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_user, percentiles, setup_django  # noqa: E402

TOPICS = ("deploy", "billing", "search", "login", "cache", "backup", "email", "report", "export", "upload")
SENTENCES = (
    "The {topic} service was restarted after the incident on Friday.",
    "Because the {topic} queue grew, the on-call engineer added two workers.",
    "The {topic} dashboard shows latency per region. Alerts fire above five hundred milliseconds.",
    "To run the {topic} job by hand:\n```bash\n./scripts/{topic}.sh --dry-run\n```\nCheck the log afterwards.",
    "Nobody should change the {topic} settings without a review from the platform team.",
)
QUERIES = ("why was the deploy service restarted", "how do I run the billing job by hand",
           "what do the search dashboard alerts mean", "who reviews cache settings changes")


def seed(user, size: int) -> None:
    from apps.memories.models import Memory
    from apps.memories.services import memory_store_many

    have = Memory.objects.filter(owner=user).count()
    rng = random.Random(7)
    batch = []
    for index in range(have, size):
        batch.append({"content": rng.choice(SENTENCES).format(topic=rng.choice(TOPICS)) + f" (note {index})"})
        if len(batch) == 64 or index == size - 1:
            memory_store_many(actor=user, items=batch)
            batch = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--db", default="engram_bench_context")
    options = parser.parse_args()
    setup_django(options.db)
    from apps.cognition.services.context import context_inject

    user = bench_user("bench-context")
    seed(user, options.size)
    context_inject(actor=user, query=QUERIES[0])  # loads the model and the tokenizer
    print(f"inject_context service latency, {options.size} memories, {options.runs} calls each (ms)")
    for priority in ("normal", "critical"):
        for mode in ("auto", "raw", "narrative", "structured", "code_focused"):
            samples = []
            for run in range(options.runs):
                started = time.perf_counter()
                context_inject(actor=user, query=QUERIES[run % len(QUERIES)], priority=priority,
                               distillation_mode=mode)
                samples.append((time.perf_counter() - started) * 1000)
            figures = percentiles(samples)
            print(f"  {priority:8} {mode:12} p50 {figures['p50']:7.1f}  p95 {figures['p95']:7.1f}")


if __name__ == "__main__":
    main()
