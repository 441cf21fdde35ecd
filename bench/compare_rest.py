"""REST and MCP retrieve/search latency of an earlier commit against this checkout, interleaved, whole stack.

    .venv/bin/python bench/compare_rest.py --db engram_bench_100k --before b3a425e

bench/compare.py swaps only the retrieval module; this serves both checkouts over real HTTP (a uvicorn
server each, bench/perf.py's `rest_server`, on the same embedded PostgreSQL and benchmark database) and
sends each query to both in turn (REST, then ThoughtMCP's tools over streamable HTTP), alternating which goes first, so that the shared machine's load falls
on both alike. The earlier commit is checked out in a temporary git worktree (removed afterwards) and
runs with this checkout's virtualenv. Same queries as bench/perf.py, limit 10, reinforcement on.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, bench_user, load_average, machine, percentiles, setup_django  # noqa: E402
from bench.corpus import CORPUS_USER  # noqa: E402
from bench.perf import boolean_queries, mcp_call, questions, rest_call, rest_server, timed  # noqa: E402

# Each kind of call: the query set it takes, and how to make it with a client of one server.
CALLS = {
    "REST retrieve": ("plain", lambda client: rest_call(client, "/api/v1/memories/retrieve/")),
    "REST search, plain words": ("plain", lambda client: rest_call(client, "/api/v1/memories/search/")),
    "REST search, boolean": ("boolean", lambda client: rest_call(client, "/api/v1/memories/search/")),
    "MCP retrieve_memories": ("plain", lambda client: mcp_call(client, "retrieve_memories", CORPUS_USER)),
    "MCP search_memories, plain": ("plain", lambda client: mcp_call(client, "search_memories", CORPUS_USER)),
    "MCP search_memories, boolean": ("boolean", lambda client: mcp_call(client, "search_memories", CORPUS_USER)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="benchmark database holding a corpus (bench/corpus.py)")
    parser.add_argument("--before", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    setup_django(args.db)
    from apps.accounts.services import token_create

    user = bench_user(CORPUS_USER)
    token = token_create(actor=user, name="bench-compare", scopes=["read", "write"]).raw
    texts = questions(args.queries, args.seed)
    inputs = {"plain": texts, "boolean": boolean_queries(texts)}
    print(f"{machine()}\n{args.db}: {args.queries} questions; before = {args.before}", flush=True)
    with tempfile.TemporaryDirectory(prefix="engram-before-") as folder:
        worktree = Path(folder) / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(worktree), args.before],
                       check=True)
        try:
            with rest_server(args.db, token, repo=worktree) as before, rest_server(args.db, token) as after:
                clients = {"before": before, "after": after}
                calls = {(name, kind): make(client) for name, client in clients.items()
                         for kind, (_, make) in CALLS.items()}
                samples = {key: [] for key in calls}
                for key, call in calls.items():
                    for text in inputs[CALLS[key[1]][0]][:5]:  # warm both: models, caches
                        call(text)
                for index in range(len(texts)):
                    for kind, (query_set, _) in CALLS.items():
                        if index >= len(inputs[query_set]):
                            continue
                        names = ["before", "after"] if index % 2 == 0 else ["after", "before"]
                        for name in names:
                            samples[(name, kind)] += timed(calls[(name, kind)], [inputs[query_set][index]])
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], check=False)
    print(f"\n{'ms (p50 / p95)':30} {'before':>16} {'after':>16}")
    for kind in CALLS:
        cells = [percentiles(samples[(name, kind)]) for name in ("before", "after")]
        print(f"{kind:30} " + " ".join(f"{c['p50']:>7.1f} / {c['p95']:<6.1f}" for c in cells))
    print(load_average())


if __name__ == "__main__":
    main()
