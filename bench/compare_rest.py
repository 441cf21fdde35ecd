"""REST retrieve/search latency of an earlier commit against this checkout, interleaved, whole stack.

    .venv/bin/python bench/compare_rest.py --db engram_bench_100k --before b3a425e

bench/compare.py swaps only the retrieval module; this serves both checkouts over real HTTP (a uvicorn
server each, bench/perf.py's `rest_server`, on the same embedded PostgreSQL and benchmark database) and
sends each query to both in turn, alternating which goes first, so that the shared machine's load falls
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
from bench.perf import boolean_queries, questions, rest_call, rest_server, timed  # noqa: E402

PATHS = {"retrieve": "/api/v1/memories/retrieve/", "search, plain words": "/api/v1/memories/search/",
         "search, boolean": "/api/v1/memories/search/"}


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
    inputs = {"retrieve": texts, "search, plain words": texts, "search, boolean": boolean_queries(texts)}
    print(f"{machine()}\n{args.db}: {args.queries} questions; before = {args.before}", flush=True)
    with tempfile.TemporaryDirectory(prefix="engram-before-") as folder:
        worktree = Path(folder) / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(worktree), args.before],
                       check=True)
        try:
            with rest_server(args.db, token, repo=worktree) as before, rest_server(args.db, token) as after:
                clients = {"before": before, "after": after}
                samples = {(name, kind): [] for name in clients for kind in PATHS}
                for kind, path in PATHS.items():
                    for text in inputs[kind][:5]:  # warm both: models, caches
                        for client in clients.values():
                            rest_call(client, path)(text)
                for index in range(len(texts)):
                    for kind, path in PATHS.items():
                        if index >= len(inputs[kind]):
                            continue
                        order = list(clients.items()) if index % 2 == 0 else list(reversed(clients.items()))
                        for name, client in order:
                            samples[(name, kind)] += timed(rest_call(client, path), [inputs[kind][index]])
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], check=False)
    print(f"\n{'ms (p50 / p95)':22} {'before':>16} {'after':>16}")
    for kind in PATHS:
        cells = [percentiles(samples[(name, kind)]) for name in ("before", "after")]
        print(f"{kind:22} " + " ".join(f"{c['p50']:>7.1f} / {c['p95']:<6.1f}" for c in cells))
    print(load_average())


if __name__ == "__main__":
    main()
