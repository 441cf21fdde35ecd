"""Retrieve/search latency of an earlier retrieval package (or single-file module) against the current one,
interleaved.

    rm -rf /tmp/before && mkdir /tmp/before && git archive HEAD apps/memories/services/retrieval | tar -x -C /tmp/before
    .venv/bin/python bench/compare.py --db engram_bench_100k --before /tmp/before/apps/memories/services/retrieval

A commit from before retrieval was a package has the single file instead:
    git show <commit>:apps/memories/services/retrieval.py > /tmp/retrieval_before.py
    .venv/bin/python bench/compare.py --db engram_bench_100k --before /tmp/retrieval_before.py

The machine is shared, and its load moves latencies by 15-20% between runs a few minutes apart.
Running both modules in one process, query by query and in alternating order, puts the same load on
both. Same queries as bench/perf.py (LoCoMo questions and boolean queries made of their words),
limit 10, reinforcement on, service layer only.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_user, load_average, machine, percentiles, setup_django  # noqa: E402
from bench.corpus import CORPUS_USER  # noqa: E402
from bench.perf import boolean_queries, questions  # noqa: E402


def load_module(path: Path, name: str):
    """The retrieval module at `path` (a file, or a package's folder) under `name`, beside the current one."""
    if path.is_dir():  # the package imports its own modules relatively, so they load under `name` too
        spec = importlib.util.spec_from_file_location(name, path / "__init__.py",
                                                      submodule_search_locations=[str(path)])
    else:
        spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


def print_agreement(before: list, after: list) -> None:
    """How far the two modules' answers differ: the same top 10 (as a set), the mean overlap of the top 10,
    the same first result, and the ratio of their total counts (an estimate against an exact count)."""
    same, overlap, first, ratios = 0, 0.0, 0, []
    for old, new in zip(before, after):
        old_ids, new_ids = [i.memory.pk for i in old.items], [i.memory.pk for i in new.items]
        same += set(old_ids) == set(new_ids)
        overlap += len(set(old_ids) & set(new_ids)) / max(1, len(old_ids))
        first += old_ids[:1] == new_ids[:1]
        if old.total_count:
            ratios.append(new.total_count / old.total_count)
    n = len(before)
    ratios.sort()
    spread = f"{ratios[len(ratios) // 10]:.2f} / {ratios[len(ratios) // 2]:.2f} / {ratios[9 * len(ratios) // 10]:.2f}"
    print(f"{'':22} same top-10 {same / n:.1%}, top-10 overlap {overlap / n:.1%}, same first {first / n:.1%}, "
          f"total after/before p10/p50/p90 {spread}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="benchmark database holding a corpus (bench/corpus.py)")
    parser.add_argument("--before", type=Path, required=True,
                        help="an earlier apps/memories/services/retrieval/ folder, or retrieval.py from before it "
                             "was a package")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    setup_django(args.db)
    from apps.memories.services import retrieval as after

    modules = {"before": load_module(args.before, "retrieval_before"), "after": after}
    user = bench_user(CORPUS_USER)
    texts = questions(args.queries, args.seed)
    operations = {"retrieve": ("memory_retrieve", texts), "search (plain words)": ("memory_search", texts),
                  "search (boolean)": ("memory_search", boolean_queries(texts))}
    print(machine(), flush=True)
    for text in texts[:5]:  # the model's first calls are slow
        for module in modules.values():
            module.memory_retrieve(actor=user, text=text)
            module.memory_search(actor=user, text=text)
    print(f"\n{'':22} {'':7} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'mean':>8}")
    for operation, (function, inputs) in operations.items():
        samples = {name: [] for name in modules}
        answers = {name: [] for name in modules}
        for index, text in enumerate(inputs):
            for name in (list(modules) if index % 2 else list(reversed(modules))):
                started = time.perf_counter()
                result = getattr(modules[name], function)(actor=user, text=text, limit=10)
                samples[name].append(1000 * (time.perf_counter() - started))
                answers[name].append(result)
        for name, values in samples.items():
            figures = percentiles(values)
            columns = " ".join(f"{figures[key]:>8}" for key in ("p50", "p95", "mean"))
            print(f"{operation:22} {name:7} {figures['n']:>4} {columns}")
        print_agreement(*answers.values())
    print(f"load average now {load_average()}", flush=True)


if __name__ == "__main__":
    main()
