"""Store throughput and retrieve/search latency, through the service layer and through REST.

    .venv/bin/python bench/corpus.py --db engram_bench_10k --size 10000     # once: the corpus
    .venv/bin/python bench/perf.py --db engram_bench_10k                    # the figures
    .venv/bin/python bench/perf.py --db engram_bench_100k --explain         # + EXPLAIN ANALYZE

Queries are LoCoMo questions (natural language) against a corpus of recombined LoCoMo turns owned by
one user (bench/corpus.py). Latencies include the query embedding and, as in production, the
reinforcement of what is returned. REST runs a real uvicorn server on 127.0.0.1 with the benchmark
settings and calls POST /api/v1/memories/retrieve/ and /search/ with a Bearer token over httpx; the same
server answers ThoughtMCP's retrieve_memories and search_memories over streamable HTTP.
Store throughput is measured with a separate user whose memories are hard-deleted afterwards, so the
corpus keeps its size.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, bench_user, load_average, machine, percentiles, setup_django, write_json  # noqa: E402
from bench.corpus import CORPUS_USER, LOCOMO, locomo_pieces, memory_item  # noqa: E402

STORE_USER = "bench-store"
WORD = re.compile(r"[A-Za-z]{4,}")


def questions(count: int, seed: int) -> list[str]:
    texts = [qa["question"] for sample in json.loads(LOCOMO.read_text()) for qa in sample["qa"]]
    return random.Random(seed).sample(texts, min(count, len(texts)))


def boolean_queries(texts: list[str]) -> list[str]:
    """Operator queries made of each question's two longest words: "a OR b", then "a -b" in turn."""
    from apps.memories.text import STOPWORDS

    made = []
    for index, text in enumerate(texts):
        # Longest first, ties alphabetical: a set's order changes with each process's hash seed.
        words = sorted({w.lower() for w in WORD.findall(text) if w.lower() not in STOPWORDS}, key=lambda w: (-len(w), w))
        if len(words) >= 2:
            made.append(f"{words[0]} OR {words[1]}" if index % 2 == 0 else f"{words[0]} -{words[1]}")
    return made


def timed(call, inputs) -> list[float]:
    samples = []
    for value in inputs:
        started = time.perf_counter()
        call(value)
        samples.append(1000 * (time.perf_counter() - started))
    return samples


def service_latency(user, texts: list[str], boolean: list[str]) -> dict:
    from apps.memories.embeddings import embed_query
    from apps.memories.services import memory_retrieve, memory_search

    for text in texts[:5]:
        memory_retrieve(actor=user, text=text)  # the model's first calls are slow
        memory_search(actor=user, text=text)
    return {
        "embed_query": percentiles(timed(embed_query, texts)),
        "retrieve": percentiles(timed(lambda t: memory_retrieve(actor=user, text=t, limit=10), texts)),
        "search (plain words, hybrid)": percentiles(timed(lambda t: memory_search(actor=user, text=t, limit=10), texts)),
        "search (boolean, full-text)": percentiles(timed(lambda t: memory_search(actor=user, text=t, limit=10), boolean)),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def rest_server(database: str, token: str, *, repo: Path = REPO, timeout: float = 60):
    """An httpx client of a real uvicorn server of `repo` (this checkout, or a worktree of an earlier commit)
    on 127.0.0.1 with the benchmark settings, authenticated with `token`; the server stops on exit."""
    import httpx

    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.bench", "ENGRAM_BENCH_DB": database,
           "ENGRAM_VAR_DIR": os.environ.get("ENGRAM_VAR_DIR", str(REPO / "var"))}  # one embedded server for both
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on", "--log-level", "warning"], cwd=repo, env=env,
    )
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=timeout,
                              headers={"Authorization": f"Bearer {token}"})
        deadline = time.monotonic() + 120
        while True:
            try:
                client.get("/healthz")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("The uvicorn server did not start.") from None
                time.sleep(0.5)
        yield client
    finally:
        server.terminate()
        server.wait(timeout=30)


def rest_call(client, path: str):
    """A function that POSTs one query text to `path` (limit 10) and fails on an error answer."""
    def call(text: str):
        client.post(path, json={"text": text, "limit": 10}).raise_for_status()
    return call


def mcp_call(client, tool: str, user_id: str, *, limit: int = 10, token: str | None = None):
    """A function that calls ThoughtMCP's `tool` with one query text over streamable HTTP, one stateless JSON-RPC
    POST as an MCP client sends it, fails on an error answer and returns the tool's answer ({success, data, ...}).
    `token` authenticates as another user than the client's own."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"

    def call(text: str) -> dict:
        answer = client.post("/mcp/thoughtmcp/", headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": {"userId": user_id, "text": text, "limit": limit}},
        })
        answer.raise_for_status()
        result = answer.json().get("result") or {}
        payload = json.loads(result["content"][0]["text"]) if result.get("content") else {}
        if result.get("isError") or not payload.get("success"):
            raise SystemExit(f"{tool} failed: {answer.text[:300]}")
        return payload
    return call


def rest_latency(database: str, user, texts: list[str], boolean: list[str]) -> dict:
    from apps.accounts.services import token_create

    token = token_create(actor=user, name="bench", scopes=["read", "write"]).raw
    with rest_server(database, token) as client:
        retrieve = rest_call(client, "/api/v1/memories/retrieve/")
        search = rest_call(client, "/api/v1/memories/search/")
        mcp_retrieve = mcp_call(client, "retrieve_memories", str(user.pk))
        mcp_search = mcp_call(client, "search_memories", str(user.pk))
        for text in texts[:5]:
            for call in (retrieve, search, mcp_retrieve, mcp_search):
                call(text)
        return {
            "REST retrieve": percentiles(timed(retrieve, texts)),
            "REST search (plain words, hybrid)": percentiles(timed(search, texts)),
            "REST search (boolean, full-text)": percentiles(timed(search, boolean)),
            "MCP retrieve_memories": percentiles(timed(mcp_retrieve, texts)),
            "MCP search_memories (plain words)": percentiles(timed(mcp_search, texts)),
        }


def store_throughput(*, singles: int, batches: int, batch_size: int) -> dict:
    from apps.memories.models import Memory
    from apps.memories.services import memory_store, memory_store_many

    user = bench_user(STORE_USER)
    speakers, sentences = locomo_pieces(LOCOMO)
    items = [memory_item(i, seed=991, speakers=speakers, sentences=sentences) for i in range(singles + batches * batch_size)]
    for item in items:
        del item["sentences"], item["created_at"]
    memory_store(actor=user, **items[0])  # the model's first call is slow
    started = time.perf_counter()
    for item in items[1:singles]:
        memory_store(actor=user, **item)
    single_rate = (singles - 1) / (time.perf_counter() - started)
    started = time.perf_counter()
    for start in range(singles, len(items), batch_size):
        memory_store_many(actor=user, items=items[start:start + batch_size])
    batch_rate = batches * batch_size / (time.perf_counter() - started)
    Memory.objects.filter(owner=user).delete()
    return {"memory_store (one at a time), memories/s": round(single_rate, 1),
            f"memory_store_many (batches of {batch_size}), memories/s": round(batch_rate, 1)}


def explain(user, text: str) -> None:
    """EXPLAIN ANALYZE every statement of one retrieve and one search, slowest first."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.memories.services import memory_retrieve, memory_search
    from apps.memories.services.retrieval.dense import RETRIEVAL_EF_SEARCH
    from apps.memories.vectors import filtered_vector_scan

    for name, call in (("retrieve", memory_retrieve), ("search", memory_search)):
        with CaptureQueriesContext(connection) as captured:
            call(actor=user, text=text, limit=10, reinforce=False)
        # A statement sent behind the HNSW settings (vectors.vector_scan_settings) is explained under them.
        statements = [dict(q, sql=q["sql"].split("; ", 1)[1]) if q["sql"].startswith("SELECT set_config('hnsw") else q
                      for q in captured.captured_queries]
        statements = [q for q in statements if q["sql"].lstrip().upper().startswith(("SELECT", "WITH"))]
        statements.sort(key=lambda q: float(q["time"]), reverse=True)
        print(f"\n=== {name} {text!r}: {len(captured.captured_queries)} statements")
        for query in statements[:4]:
            with filtered_vector_scan(RETRIEVAL_EF_SEARCH), connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query['sql']}")
                plan = "\n".join(row[0] for row in cursor.fetchall())
            print(f"\n--- {float(query['time']) * 1000:.1f} ms: {query['sql'][:300]}\n{plan}")


def print_table(figures: dict) -> None:
    print(f"\n{'':36} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'mean':>8} {'max':>8}")
    for name, value in figures.items():
        if isinstance(value, dict):
            print(f"{name:36} {value['n']:>4} {value['p50']:>8} {value['p95']:>8} {value['mean']:>8} {value['max']:>8}")
        else:
            print(f"{name}: {value}")
    print(f"load average now {load_average()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="benchmark database holding a corpus (bench/corpus.py)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--no-rest", action="store_true", help="measure the service layer only")
    parser.add_argument("--no-store", action="store_true", help="skip the store throughput")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of retrieve and search")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    setup_django(args.db)
    from apps.memories.models import Memory

    user = bench_user(CORPUS_USER)
    size = Memory.objects.filter(owner=user).count()
    texts = questions(args.queries, args.seed)
    boolean = boolean_queries(texts)
    print(f"{machine()}\n{args.db}: {size} memories; {len(texts)} questions, {len(boolean)} boolean queries",
          flush=True)
    figures = {"memories": size}
    if not args.no_store:
        figures.update(store_throughput(singles=40, batches=4, batch_size=64))
        print(json.dumps(figures, indent=2), flush=True)
    figures.update(service_latency(user, texts, boolean))
    print_table(figures)
    if not args.no_rest:
        figures.update(rest_latency(args.db, user, texts, boolean))
        print_table(figures)
    if args.explain:
        explain(user, texts[0])
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
