"""Bulk import throughput: `manage.py import_memories` over a JSONL file of LoCoMo-like memories.

    .venv/bin/python bench/ingest.py --size 10000          # the issue's figure: 10k memories
    .venv/bin/python bench/ingest.py --size 2000           # a shorter run
    .venv/bin/python bench/ingest.py --fresh               # into a new database, as on a fresh install

The file is written once under var/bench/ (memory i depends only on (seed, i), bench/corpus.py), then
imported into a fresh user of the `engram_bench_ingest` database through the command itself, as an
operator would. That database keeps the planner statistics of earlier runs; with --fresh it is made anew, so the
import starts, as on a fresh install, with tables that PostgreSQL believes empty. The figure is memories per second from the first line read to the last memory linked:
when links are made in the background, the time until the worker has linked every imported memory
counts too.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, bench_user, fresh_database, load_average, machine, setup_django, write_json  # noqa: E402
from bench.corpus import LOCOMO, locomo_pieces, memory_item  # noqa: E402

DATABASE = "engram_bench_ingest"
IMPORT_USER = "bench-import"


def jsonl_file(size: int, seed: int) -> Path:
    path = REPO / "var" / "bench" / f"import-{size}-{seed}.jsonl"
    if not path.exists():
        speakers, sentences = locomo_pieces(LOCOMO)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as out:
            for index in range(size):
                item = memory_item(index, seed=seed, speakers=speakers, sentences=sentences)
                out.write(json.dumps({"content": item["content"], "primarySector": item["primary_sector"],
                                      "sessionId": item["session_id"], "tags": item["tags"],
                                      "createdAt": item["created_at"].isoformat()}) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--batch-size", type=int, default=None, help="import_memories' --batch-size")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--fresh", action="store_true", help="import into a new database (dropped and migrated)")
    args = parser.parse_args()
    (fresh_database if args.fresh else setup_django)(DATABASE)
    from django.core.management import call_command

    from apps.memories.models import Memory, MemoryLink

    path = jsonl_file(args.size, args.seed)
    user = bench_user(IMPORT_USER)
    Memory.objects.filter(owner=user).delete()
    from apps.memories.embeddings import embed_texts

    embed_texts(["warm up"])  # the model's load is not the import's
    print(f"{machine()}\nimporting {args.size} memories from {path.name}", flush=True)
    options = {"user": IMPORT_USER, "stdout": io.StringIO()}
    if args.batch_size:
        options["batch_size"] = args.batch_size
    started = time.perf_counter()
    call_command("import_memories", str(path), **options)
    imported = time.perf_counter() - started
    memories = Memory.objects.filter(owner=user)
    count = memories.count()
    linked = memories.filter(outgoing_links__isnull=False).distinct().count()
    links = MemoryLink.objects.filter(source__owner=user).count()
    print(f"imported {count} memories in {imported:.1f} s: {count / imported:.1f} memories/s; "
          f"{linked} with links, {links} links; load {load_average()}")
    write_json(args.json, {"memories": count, "seconds": round(imported, 1), "rate": round(count / imported, 1),
                           "linked": linked, "links": links})


if __name__ == "__main__":
    main()
