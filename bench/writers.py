"""Writes through MCP on a real server: one store_memory at a time (p50/p95), then 50 writers at once.

    .venv/bin/python bench/writers.py                          # this checkout
    .venv/bin/python bench/writers.py --before fc052b4         # and an earlier commit, phase by phase

Each server is a real uvicorn process with the benchmark settings and a database of its own
(`engram_bench_writers`, and `..._before` for the earlier commit, migrated by that commit's code), called
over streamable HTTP with ThoughtMCP's store_memory as an MCP client sends it (one stateless JSON-RPC
POST). Texts are LoCoMo-like memories (bench/corpus.py). The concurrent phase has `--writers` clients each
storing `--each` memories as fast as the answers come back; afterwards the database must hold every one
of them exactly once (nothing lost, nothing duplicated). With --before, the phases alternate between the
two servers so that the machine's load falls on both alike.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, load_average, machine, percentiles, setup_django, write_json  # noqa: E402
from bench.corpus import LOCOMO, locomo_pieces, memory_item  # noqa: E402
from bench.perf import rest_server  # noqa: E402

DATABASE = "engram_bench_writers"
WRITER = "bench-writer"


def store_call(client, user_id: str):
    def call(content: str, session: str) -> None:
        answer = client.post("/mcp/thoughtmcp/", headers={"Accept": "application/json, text/event-stream"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "store_memory", "arguments": {
                "content": content, "userId": user_id, "sessionId": session, "primarySector": "episodic"}},
        })
        answer.raise_for_status()
        result = answer.json().get("result") or {}
        if result.get("isError") or not json.loads(result["content"][0]["text"]).get("success"):
            raise SystemExit(f"store_memory failed: {answer.text[:300]}")
    return call


def token_for(repo: Path, database: str) -> tuple[str, str]:
    """Migrate `database` with `repo`'s code and make the writer's token there: (token, user id)."""
    script = ("import sys; sys.path.insert(0, '.'); from bench.common import setup_django, bench_user; "
              f"setup_django({database!r}); from apps.memories.models import Memory; "
              f"from apps.accounts.services import token_create; u = bench_user({WRITER!r}); "
              "Memory.objects.filter(owner=u).delete(); "
              "print(token_create(actor=u, name='writers', scopes=['read', 'write']).raw, u.pk)")
    env = {**os.environ, "ENGRAM_VAR_DIR": os.environ.get("ENGRAM_VAR_DIR", str(REPO / "var"))}  # one server for both
    out = subprocess.run([sys.executable, "-c", script], cwd=repo, env=env, check=True, capture_output=True, text=True)
    token, user_id = out.stdout.split()[-2:]
    return token, user_id


def count_stored(database: str, contents: list[str]) -> tuple[int, int]:
    """(rows holding these contents, distinct contents among them) in `database`."""
    from django.db import connections

    from apps.core.embedded_postgres import django_database
    from config.settings.base import VAR_DIR
    import psycopg

    params = django_database(VAR_DIR)
    with psycopg.connect(dbname=database, user=params["USER"], host=params["HOST"]) as conn:
        rows = conn.execute("SELECT count(*), count(DISTINCT content) FROM memories_memory WHERE content = ANY(%s)",
                            [contents]).fetchone()
    connections.close_all()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", help="an earlier commit to measure beside this checkout")
    parser.add_argument("--single", type=int, default=200, help="stores one at a time")
    parser.add_argument("--writers", type=int, default=50)
    parser.add_argument("--each", type=int, default=10, help="stores per concurrent writer")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    setup_django(DATABASE)
    speakers, sentences = locomo_pieces(LOCOMO)
    print(f"{machine()}\nMCP store_memory: {args.single} one at a time, then {args.writers} writers x {args.each}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="engram-before-") as folder, ExitStack() as stack:
        repos = {"after": REPO}
        if args.before:
            repos = {"before": Path(folder) / "before", **repos}
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(repos["before"]),
                            args.before], check=True)
            stack.callback(subprocess.run, ["git", "-C", str(REPO), "worktree", "remove", "--force",
                                            str(repos["before"])], check=False)
        servers, databases = {}, {}
        for name, repo in repos.items():
            databases[name] = DATABASE if name == "after" else f"{DATABASE}_before"
            token, user_id = token_for(repo, databases[name])
            client = stack.enter_context(rest_server(databases[name], token, repo=repo, timeout=300))
            servers[name] = (store_call(client, user_id), client)
        figures: dict = {name: {"single": [], "rates": []} for name in servers}
        counter = 0

        def next_content() -> str:
            nonlocal counter
            counter += 1
            return memory_item(counter, seed=args.seed, speakers=speakers, sentences=sentences)["content"] + f" (#{counter})"

        for name, (call, _) in servers.items():
            for _ in range(5):
                call(next_content(), "warm-up")  # model load, first queries
        names = list(servers)
        for index in range(args.single):  # one at a time, alternating servers
            for name in (names if index % 2 == 0 else names[::-1]):
                call = servers[name][0]
                started = time.perf_counter()
                call(next_content(), "single")
                figures[name]["single"].append(1000 * (time.perf_counter() - started))
        for name in (names if len(names) == 1 else [*names, *names[::-1]]):  # concurrent: before, after, after, before
            call = servers[name][0]
            contents = [[next_content() for _ in range(args.each)] for _ in range(args.writers)]

            def writer(own: list[str], session: int) -> None:
                for content in own:
                    call(content, f"writer-{session}")

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.writers) as pool:
                list(pool.map(writer, contents, range(args.writers)))
            elapsed = time.perf_counter() - started
            flat = [content for own in contents for content in own]
            rows, distinct = count_stored(databases[name], flat)
            if rows != len(flat) or distinct != len(flat):
                raise SystemExit(f"{name}: {len(flat)} stores answered, {rows} rows, {distinct} distinct")
            figures[name]["rates"].append(len(flat) / elapsed)
    print(f"\n{'':34} " + " ".join(f"{name:>16}" for name in servers))
    print(f"{'one store_memory, p50 / p95 ms':34} " + " ".join(
        f"{percentiles(f['single'])['p50']:>7.1f} / {percentiles(f['single'])['p95']:<6.1f}" for f in figures.values()))
    print(f"{f'{args.writers} writers, memories/s':34} " + " ".join(
        f"{' / '.join(f'{rate:.1f}' for rate in f['rates']):>16}" for f in figures.values()))
    print("every concurrent store is in the database exactly once")
    print(load_average())
    write_json(args.json, {name: {"single": percentiles(f["single"]), "rates": [round(r, 1) for r in f["rates"]]}
                           for name, f in figures.items()})


if __name__ == "__main__":
    main()
