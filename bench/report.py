"""Every row of the speed issue's table from one command (`make bench`): the scripts run one after the
other, each writing its figures to var/bench/results/, then one table with the machine's CPU and load.

    .venv/bin/python bench/report.py              # builds the 10k and 100k corpora the first time
    .venv/bin/python bench/report.py --million    # also the 1M corpus (its build takes about an hour)

Rows: import_memories of 10k LoCoMo-like memories (bench/ingest.py); one MCP store_memory and 50 writers
at once (bench/writers.py); REST and MCP retrieve and search at 100k and, with --million, at 1M
(bench/perf.py); embedding storage per memory (PostgreSQL's sizes of the vectors table and its HNSW
index); the web process after 10,000 searches and the whole stack (bench/footprint.py); LoCoMo dev
recall (bench/locomo_eval.py: the whole split through the service and MCP, and its tuning and held folds) and
the synthetic multi-session set's with its baselines (bench/multisession.py), printed as Markdown tables first.
    .venv/bin/python bench/report.py --only recall  # the recall tables alone (~30 min with both models; no corpus)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, load_average, machine, setup_django  # noqa: E402

RESULTS = REPO / "var" / "bench" / "results"
MPNET = "all-mpnet-base-v2"


def run(script: str, *args: str, output: str, model: str | None = None) -> dict:
    """Run a bench script writing its figures to `output`; with `model`, the script's Engram embeds with it."""
    path = RESULTS / output
    print(f"\n$ {f'ENGRAM_EMBEDDING_MODEL={model} ' if model else ''}{script} {' '.join(args)}", flush=True)
    environment = {**os.environ, **({"ENGRAM_EMBEDDING_MODEL": model} if model else {})}
    subprocess.run([sys.executable, str(REPO / "bench" / script), *args, "--json", str(path)], cwd=REPO, check=True,
                   env=environment)
    return json.loads(path.read_text())


def storage_per_memory(database: str) -> float:
    """Bytes per memory of the vectors table and its indexes, read in that database."""
    out = subprocess.run([sys.executable, "-c", (
        "import sys; sys.path.insert(0, '.'); from bench.common import setup_django; "
        f"setup_django({database!r}); from django.db import connection; c = connection.cursor(); "
        "c.execute(\"SELECT pg_total_relation_size('memories_memoryvector')::float8 / "
        "greatest(1, (SELECT count(*) FROM memories_memoryvector))\"); print(c.fetchone()[0])")],
        cwd=REPO, check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


def p95(figures: dict, name: str) -> str:
    row = figures[name]
    return f"{row['p50']:.1f} / {row['p95']:.1f} ms"


def recall_table(title: str, reports: dict[str, dict], categories) -> None:
    """A Markdown table: R@5 / R@10 / hit@5 of each row's report, then R@5 per category."""
    categories = list(categories)
    print(f"\n{title}\n\n| | R@5 | R@10 | hit@5 | " + " | ".join(categories) + " |")
    print("| --- " * (4 + len(categories)) + "|")
    for name, report in reports.items():
        every = report["all"]
        print(f"| {name} | {every['recall@5']:.3f} | {every['recall@10']:.3f} | {every['hit@5']:.3f} | "
              + " | ".join(f"{report[group]['recall@5']:.3f}" if group in report else "" for group in categories)
              + " |")


def recall() -> list[tuple[str, str]]:
    """Issue 22's tables (LoCoMo dev by fold, through the service and MCP; the multi-session set with its
    baselines), printed as they go into docs/benchmarks.md, and their rows of the summary."""
    from bench.locomo_eval import CATEGORIES as LOCOMO_CATEGORIES, DATABASE as LOCOMO_DATABASE
    from bench.multisession import DATABASE as MULTISESSION_DATABASE
    from bench.multisession_data import CATEGORIES as MULTISESSION_CATEGORIES

    locomo = {fold: run("locomo_eval.py", "--fold", fold, *(["--mcp"] if fold == "all" else ["--only", "retrieve"]),
                        output=f"locomo-{fold}.json") for fold in ("all", "tune", "held")}
    multisession = run("multisession.py", "--mcp", "--baselines", output="multisession.json")
    # The same with all-mpnet-base-v2 (off by default), each in a database of its own: 768-d vectors.
    mpnet = {fold: run("locomo_eval.py", "--db", f"{LOCOMO_DATABASE}_mpnet", "--fold", fold, "--only", "retrieve",
                       *(["--mcp"] if fold == "all" else []), output=f"locomo-{fold}-mpnet.json", model=MPNET)
             for fold in ("all", "tune", "held")}
    multisession_mpnet = run("multisession.py", "--db", f"{MULTISESSION_DATABASE}_mpnet", "--only", "retrieve", "--mcp",
                             output="multisession-mpnet.json", model=MPNET)
    recall_table("LoCoMo dev (bench/locomo_eval.py: tune = conv-26, conv-41, conv-43; held = conv-30, conv-42)", {
        "memory_retrieve": locomo["all"]["retrieve"], "memory_search": locomo["all"]["search"],
        "MCP retrieve_memories": locomo["all"]["mcp_retrieve"],
        "memory_retrieve, tune fold": locomo["tune"]["retrieve"],
        "memory_retrieve, held fold": locomo["held"]["retrieve"],
        f"memory_retrieve, {MPNET}": mpnet["all"]["retrieve"],
        f"MCP retrieve_memories, {MPNET}": mpnet["all"]["mcp_retrieve"],
        f"memory_retrieve, {MPNET}, tune fold": mpnet["tune"]["retrieve"],
        f"memory_retrieve, {MPNET}, held fold": mpnet["held"]["retrieve"]}, LOCOMO_CATEGORIES.values())
    recall_table(f"Multi-session, seed {multisession['seed']} (bench/multisession.py)", {
        **{name: report for name, report in multisession.items() if isinstance(report, dict) and "all" in report},
        f"memory_retrieve, {MPNET}": multisession_mpnet["retrieve"],
        f"MCP retrieve_memories, {MPNET}": multisession_mpnet["mcp_retrieve"]}, MULTISESSION_CATEGORIES)
    service, mcp = locomo["all"]["retrieve"]["all"], locomo["all"]["mcp_retrieve"]["all"]
    return [("LoCoMo dev R@5 / R@10, retrieve (MCP)", f"{service['recall@5']:.3f} / {service['recall@10']:.3f} "
                                                       f"({mcp['recall@5']:.3f} / {mcp['recall@10']:.3f})"),
            ("LoCoMo R@5, tune / held fold", f"{locomo['tune']['retrieve']['all']['recall@5']:.3f} / "
                                             f"{locomo['held']['retrieve']['all']['recall@5']:.3f}"),
            ("multi-session R@5, retrieve / MCP", f"{multisession['retrieve']['all']['recall@5']:.3f} / "
                                                  f"{multisession['mcp_retrieve']['all']['recall@5']:.3f}"),
            (f"{MPNET}: LoCoMo R@5 / R@10, all / held", " / ".join(
                f"{mpnet[fold]['retrieve']['all'][measure]:.3f}" for fold in ("all", "held")
                for measure in ("recall@5", "recall@10"))),
            (f"{MPNET}: multi-session R@5", f"{multisession_mpnet['retrieve']['all']['recall@5']:.3f}")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--million", action="store_true", help="also build and measure the 1M corpus")
    parser.add_argument("--only", choices=["speed", "recall"], help="only the speed rows, or only the recall tables")
    args = parser.parse_args()
    setup_django("engram_bench")
    rows = recall() if args.only != "speed" else []
    if args.only != "recall":
        rows = speed(args) + rows
    print(f"\n{machine()}")
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:{width}}  {value}")
    print(f"load average now {load_average()}")


def speed(args) -> list[tuple[str, str]]:
    for size, database, source in ((10_000, "engram_bench_10k", None), (100_000, "engram_bench_100k", "engram_bench_10k"),
                                   *([(1_000_000, "engram_bench_1m", "engram_bench_100k")] if args.million else [])):
        build = ["--db", database, "--size", str(size), *(["--from-db", source] if source else [])]
        subprocess.run([sys.executable, str(REPO / "bench" / "corpus.py"), *build], cwd=REPO, check=True)
    ingest = run("ingest.py", "--size", "10000", output="ingest.json")
    writers = run("writers.py", output="writers.json")["after"]
    at_100k = run("perf.py", "--db", "engram_bench_100k", "--no-store", output="perf-100k.json")
    at_1m = run("perf.py", "--db", "engram_bench_1m", "--no-store", output="perf-1m.json") if args.million else None
    footprint = run("footprint.py", "--db", "engram_bench_100k", output="footprint.json")
    return [
        ("import_memories, 10k memories", f"{ingest['rate']:.0f} memories/s ({ingest['linked']} linked)"),
        ("one MCP store_memory, p50 / p95", f"{writers['single']['p50']:.0f} / {writers['single']['p95']:.0f} ms"),
        ("50 concurrent MCP writers", " / ".join(f"{rate:.0f}" for rate in writers["rates"]) + " memories/s"),
        ("REST retrieve at 100k, p50 / p95", p95(at_100k, "REST retrieve")),
        ("REST search at 100k, p50 / p95", p95(at_100k, "REST search (plain words, hybrid)")),
        ("MCP retrieve at 100k, p50 / p95", p95(at_100k, "MCP retrieve_memories")),
        ("MCP search at 100k, p50 / p95", p95(at_100k, "MCP search_memories (plain words)")),
        *([("REST search at 1M, p50 / p95", p95(at_1m, "REST search (plain words, hybrid)")),
           ("MCP search at 1M, p50 / p95", p95(at_1m, "MCP search_memories (plain words)"))] if at_1m else []),
        ("embedding storage per memory (100k)", f"{storage_per_memory('engram_bench_100k'):.0f} B"),
        ("web RSS after 10k searches", f"{footprint['web_rss'] / 2**20:.0f} MB"),
        ("whole stack, PSS", f"{footprint['stack_pss'] / 2**20:.0f} MB"),
    ]


if __name__ == "__main__":
    main()
