"""Memory footprint of the running stack: the web process after N searches, the Celery worker, PostgreSQL.

    .venv/bin/python bench/footprint.py --db engram_bench_100k              # 10,000 searches
    .venv/bin/python bench/footprint.py --db engram_bench_100k --searches 2000

Starts the web server (uvicorn, benchmark settings) and a Celery worker (`-B --concurrency=1`, as
`manage.py serve` does) on the corpus database, sends `--searches` REST searches and retrieves (LoCoMo
questions, four clients at once), then reads each process's memory from /proc: RSS, and PSS (the
proportional share: pages shared between processes, such as PostgreSQL's shared buffers, count once in
the sum). The whole stack is web + worker (with its pool process) + every PostgreSQL process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, bench_user, load_average, machine, setup_django, write_json  # noqa: E402
from bench.corpus import CORPUS_USER  # noqa: E402
from bench.perf import questions, rest_server  # noqa: E402


def memory_of(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process, in bytes."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            name, _, rest = line.partition(":")
            if name in ("Rss", "Pss"):
                fields[name] = int(rest.split()[0]) * 1024
    return fields["Rss"], fields["Pss"]


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        path = task / "children"
        if path.exists():
            found += [int(child) for child in path.read_text().split()]
    return found + [grandchild for child in found for grandchild in children(child)]


def postgres_pids() -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"postgres.*{os.environ.get('ENGRAM_VAR_DIR', str(REPO / 'var'))}"],
                         capture_output=True, text=True).stdout.split()
    postmasters = [int(pid) for pid in out]
    return sorted({pid for master in postmasters for pid in [master, *children(master)]})


def server_pid(port: int) -> int:
    out = subprocess.run(["pgrep", "-f", f"uvicorn config.asgi:application --host 127.0.0.1 --port {port}"],
                         capture_output=True, text=True).stdout.split()
    return int(out[0])


def mb(value: int) -> str:
    return f"{value / 2**20:7.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a corpus database (bench/corpus.py)")
    parser.add_argument("--searches", type=int, default=10000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    setup_django(args.db)
    from apps.accounts.services import token_create

    user = bench_user(CORPUS_USER)
    token = token_create(actor=user, name="footprint", scopes=["read", "write"]).raw
    texts = questions(1000, 3)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.bench", "ENGRAM_BENCH_DB": args.db}
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "-B", "--loglevel=WARNING",
                               "--concurrency=1", "--schedule", str(REPO / "var" / "bench" / "footprint-beat")],
                              cwd=REPO, env=env, start_new_session=True)
    print(f"{machine()}\n{args.db}: {args.searches} REST searches and retrieves, {args.clients} clients", flush=True)
    try:
        with rest_server(args.db, token) as client:
            port = int(str(client.base_url).rsplit(":", 1)[1].strip("/"))
            web = server_pid(port)
            print(f"web after start:           RSS {mb(memory_of(web)[0])}", flush=True)

            def call(index: int) -> None:
                path = "/api/v1/memories/search/" if index % 2 else "/api/v1/memories/retrieve/"
                client.post(path, json={"text": texts[index % len(texts)], "limit": 10}).raise_for_status()

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.clients) as pool:
                for done, _ in enumerate(pool.map(call, range(args.searches)), start=1):
                    if done % 1000 == 0:
                        print(f"  {done} calls, web RSS {mb(memory_of(web)[0])}", flush=True)
            elapsed = time.perf_counter() - started
            web_rss, web_pss = memory_of(web)
            workers = [worker.pid, *children(worker.pid)]
            worker_rss = sum(memory_of(pid)[0] for pid in workers)
            worker_pss = sum(memory_of(pid)[1] for pid in workers)
            postgres = postgres_pids()
            pg_pss = sum(memory_of(pid)[1] for pid in postgres)
            print(f"\n{args.searches} calls in {elapsed:.0f} s")
            print(f"web process:               RSS {mb(web_rss)}   PSS {mb(web_pss)}")
            print(f"Celery worker ({len(workers)} processes): RSS {mb(worker_rss)}   PSS {mb(worker_pss)}")
            print(f"PostgreSQL ({len(postgres)} processes):  PSS {mb(pg_pss)}")
            print(f"whole stack (PSS):                   {mb(web_pss + worker_pss + pg_pss)}")
            print(load_average())
            write_json(args.json, {"web_rss": web_rss, "web_pss": web_pss, "worker_pss": worker_pss,
                                   "postgres_pss": pg_pss, "stack_pss": web_pss + worker_pss + pg_pss})
    finally:
        worker.terminate()
        worker.wait(timeout=60)


if __name__ == "__main__":
    main()
