"""Context Graph (issue 19): latency of its tools through the service layer and through MCP over HTTP.

    .venv/bin/python bench/corpus.py --db engram_bench_10k --size 10000       # once: the corpus (perf.py's)
    .venv/bin/python bench/context_graph.py --corpus 10k                       # the figures
    .venv/bin/python bench/context_graph.py --corpus 100k --json bench/results/context_graph_100k.json
    .venv/bin/python bench/context_graph.py --corpus 10k --only inject --no-mcp --profile   # + cProfile's top

Each corpus is copied once into a database of its own (engram_bench_cg_10k from engram_bench_10k, by CREATE
DATABASE ... TEMPLATE) and kept: the tools write (session items, activations, curation tasks, undo entries), and
perf.py's corpora stay as they were. The graph is bench/corpus.py's: LoCoMo turns recombined, owned by one user;
the first 1000 memories were stored through memory_store_many and carry its links, the rest have none.

Figures (p50/p95 of the wall time of each call, ms):
- inject_context per distillation mode (auto, raw, narrative, structured, code_focused; priority normal, and auto at
  priority critical), and search_graph (top 10): context_inject / node_search, then the same tools over MCP.
- store_memory: Context Graph's node_store (rationale, profile, reward, session) and its MCP tool against the memory
  core's memory_store, by a second user whose memories are hard-deleted afterwards (the corpus keeps its size).
- the pulse every Context Graph answer carries: pulse_get, with_pulse (pulse_get on the database thread, the answer
  serialised again), and the lightest tool over MCP.
- merge_concepts + restore_from_hash and forget_concept + restore_from_hash on linked corpus nodes (each undone, so
  the graph ends as it began), and 2-hop neighbourhoods of 20 nodes (around the nodes whose neighbourhood fills 20).
MCP runs a real uvicorn server of this checkout on 127.0.0.1 (bench/perf.py's rest_server) and posts one stateless
JSON-RPC tools/call per call to /mcp/context-graph/ with a Bearer token, as an MCP client does.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    bench_user, load_average, machine, percentiles, profiled, setup_django, write_json,
)
from bench.corpus import CORPUS_USER, LOCOMO, copy_database, locomo_pieces, memory_item  # noqa: E402
from bench.perf import print_table, questions, rest_server, timed  # noqa: E402

CORPORA = {"10k": "engram_bench_10k", "100k": "engram_bench_100k"}
MODES = ("auto", "raw", "narrative", "structured", "code_focused")
STORE_USER = "bench-cg-store"
RATIONALE = "The user said this in conversation and will ask about it again later."
LINKED = 1000  # bench/corpus.py stores the first 1000 memories through the service: they have links
SECTIONS = ("inject", "search", "store", "pulse", "curation", "neighborhood")


def warm(call, inputs) -> None:
    for value in inputs:  # the model's and the pool's first calls are slow
        call(value)


# --- service ---------------------------------------------------------------------------------------------------------

def inject_service(user, texts: list[str]) -> dict:
    from apps.cognition.services.context import context_inject

    warm(lambda t: context_inject(actor=user, query=t), texts[:5])
    figures = {}
    for mode in MODES:
        figures[f"inject_context {mode}"] = percentiles(timed(
            lambda t, mode=mode: context_inject(actor=user, query=t, distillation_mode=mode), texts))
    figures["inject_context auto, priority critical"] = percentiles(timed(
        lambda t: context_inject(actor=user, query=t, priority="critical"), texts))
    return figures


def search_service(user, texts: list[str]) -> dict:
    from apps.cognition.services.search import node_search

    warm(lambda t: node_search(actor=user, query=t), texts[:5])
    return {"search_graph (top 10)": percentiles(timed(lambda t: node_search(actor=user, query=t, top_k=10), texts))}


def store_items(count: int) -> list[dict]:
    speakers, sentences = locomo_pieces(LOCOMO)
    return [{"content": memory_item(i, seed=313, speakers=speakers, sentences=sentences)["content"]}
            for i in range(count)]


def store_service(count: int) -> dict:
    """node_store against memory_store on the same texts (each stored twice, so each as a new memory: the store
    user's memories are deleted between the two)."""
    from apps.cognition.services.store import node_store
    from apps.memories.models import Memory
    from apps.memories.services import memory_store

    user = bench_user(STORE_USER)
    items = store_items(count + 3)
    try:
        warm(lambda item: memory_store(actor=user, content=item["content"]), items[:3])
        core = timed(lambda item: memory_store(actor=user, content=item["content"]), items[3:])
        Memory.objects.filter(owner=user).delete()
        warm(lambda item: node_store(actor=user, rationale=RATIONALE, content=item["content"]), items[:3])
        graph = timed(lambda item: node_store(actor=user, rationale=RATIONALE, content=item["content"]), items[3:])
    finally:
        Memory.objects.filter(owner=user).delete()
    return {"memory_store (memory core)": percentiles(core), "store_memory: node_store": percentiles(graph)}


def pulse_service(user, texts: list[str]) -> dict:
    """pulse_get, and with_pulse as the MCP profile runs it after every tool: pulse_get on the server's thread for
    database calls, the answer (here a real inject_context answer) copied with the pulse and serialised again."""
    import asyncio
    import json
    from types import SimpleNamespace

    from mcp_types import CallToolResult, TextContent

    from apps.cognition.services.context import context_inject
    from apps.cognition.services.sessions import pulse_get
    from apps.mcp.profiles.context_graph import pulse

    warm(lambda _: pulse_get(actor=user), range(3))
    figures = {"pulse_get": percentiles(timed(lambda _: pulse_get(actor=user), texts))}
    answers = [context_inject(actor=user, query=text).as_dict() for text in texts[:10]]
    results = [CallToolResult(content=[TextContent(type="text", text=json.dumps(answer))], structured_content=answer)
               for answer in answers]
    caller = pulse.current_caller
    pulse.current_caller = lambda: SimpleNamespace(user=user)  # what the MCP server's auth sets for the token
    loop = asyncio.new_event_loop()
    try:
        call = lambda index: loop.run_until_complete(pulse.with_pulse(results[index % 10], {}))  # noqa: E731
        warm(call, range(3))
        figures["with_pulse (on an inject_context answer)"] = percentiles(timed(call, range(len(texts))))
    finally:
        pulse.current_caller = caller
        loop.close()
    return figures


def linked_nodes(user, count: int, seed: int) -> list[str]:
    """Live corpus nodes with at least one link, in a fixed random order."""
    from django.db.models import Q

    from apps.memories.models import Memory, MemoryLink

    linked = set(MemoryLink.objects.filter(source__owner=user).values_list("source_id", flat=True)[:20000])
    rows = sorted(str(pk) for pk in Memory.objects.filter(
        Q(pk__in=linked), owner=user, deleted_at__isnull=True, kind=Memory.Kind.MEMORY).values_list("pk", flat=True))
    return random.Random(seed).sample(rows, min(count, len(rows)))


def curation_service(user, runs: int, seed: int) -> dict:
    """merge + undo and forget + restore, each undone at once: the graph ends as it began."""
    from apps.cognition.services.curation import node_forget, nodes_merge
    from apps.cognition.services.undo import undo_apply

    nodes = linked_nodes(user, 3 * (runs + 1), seed)
    merge, merge_undo, forget, forget_undo = [], [], [], []
    for index in range(runs + 1):  # the first round warms up
        a, b, c = nodes[3 * index:3 * index + 3]
        started = time.perf_counter()
        merged = nodes_merge(actor=user, source_node_ids=[a, b], target_name="bench merge", force_merge=True)
        middle = time.perf_counter()
        undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
        ended = time.perf_counter()
        forgotten = node_forget(actor=user, node_id=c, reason="obsolete")
        after = time.perf_counter()
        undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
        done = time.perf_counter()
        if index:
            merge.append(1000 * (middle - started))
            merge_undo.append(1000 * (ended - started))
            forget.append(1000 * (after - ended))
            forget_undo.append(1000 * (done - ended))
    return {"merge_concepts (2 nodes)": percentiles(merge), "merge + restore_from_hash": percentiles(merge_undo),
            "forget_concept": percentiles(forget), "forget + restore_from_hash": percentiles(forget_undo)}


def wide_nodes(user, count: int) -> list[str]:
    """Up to ``count`` nodes whose 2-hop neighbourhood holds 20 nodes (the corpus's links are sparse: most nodes
    reach fewer), the most linked first."""
    from collections import Counter

    from apps.cognition.selectors.graph import node_neighborhood
    from apps.memories.models import MemoryLink

    degree = Counter()
    for source, target in MemoryLink.objects.filter(source__owner=user).values_list("source_id", "target_id"):
        degree.update((str(source), str(target)))
    found = []
    for node, _ in degree.most_common():
        if len(node_neighborhood(actor=user, focal_node_id=node, max_hops=2, max_nodes=20).nodes) == 20:
            found.append(node)
            if len(found) == count:
                break
    return found


def neighborhood_service(user, focal: list[str]) -> dict:
    from apps.cognition.selectors.graph import node_neighborhood

    call = lambda node: node_neighborhood(actor=user, focal_node_id=node, max_hops=2, max_nodes=20)  # noqa: E731
    warm(call, focal[:3])
    return {"get_neighborhood (2 hops, 20 nodes)": percentiles(timed(call, focal))}


# --- MCP over HTTP ---------------------------------------------------------------------------------------------------

def mcp_tool(client, tool: str, token: str | None = None):
    """A function that calls the Context Graph ``tool`` with its arguments (one stateless JSON-RPC POST) and fails on
    an error answer."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"

    def call(arguments: dict):
        answer = client.post("/mcp/context-graph/", headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        answer.raise_for_status()
        result = answer.json().get("result") or {}
        if result.get("isError") or "error" in answer.json():
            raise SystemExit(f"{tool} failed: {answer.text[:400]}")
        return result
    return call


def mcp_figures(database: str, user, texts: list[str], sections: set[str], *, stores: int, focal: list[str]
                ) -> dict:
    from apps.accounts.services import token_create
    from apps.memories.models import Memory

    token = token_create(actor=user, name="bench-cg", scopes=["read", "write"]).raw
    store_user = bench_user(STORE_USER)
    store_token = token_create(actor=store_user, name="bench-cg", scopes=["read", "write"]).raw
    figures = {}
    with rest_server(database, token) as client:
        inject = mcp_tool(client, "inject_context")
        if "inject" in sections:
            warm(lambda t: inject({"query": t}), texts[:5])
            for mode in MODES:
                figures[f"MCP inject_context {mode}"] = percentiles(timed(
                    lambda t, mode=mode: inject({"query": t, "distillation_mode": mode}), texts))
        if "search" in sections:
            search = mcp_tool(client, "search_graph")
            warm(lambda t: search({"query": t}), texts[:5])
            figures["MCP search_graph (top 10)"] = percentiles(timed(lambda t: search({"query": t, "top_k": 10}),
                                                                     texts))
        if "pulse" in sections:  # the lightest tool: the latest session's stage, seed texts, and the pulse
            instructions = mcp_tool(client, "get_system_instructions")
            warm(lambda _: instructions({}), range(3))
            figures["MCP get_system_instructions (+ pulse)"] = percentiles(timed(lambda _: instructions({}), texts))
        if "neighborhood" in sections:
            around = mcp_tool(client, "get_neighborhood")
            call = lambda node: around({"focal_node_id": node, "max_hops": 2, "max_nodes": 20})  # noqa: E731
            warm(call, focal[:3])
            figures["MCP get_neighborhood (2 hops, 20 nodes)"] = percentiles(timed(call, focal))
        if "store" in sections:
            store = mcp_tool(client, "store_memory", store_token)
            items = store_items(stores + 3)
            try:
                warm(lambda item: store({"content": item["content"], "rationale": RATIONALE}), items[:3])
                figures["MCP store_memory"] = percentiles(timed(
                    lambda item: store({"content": item["content"], "rationale": RATIONALE}), items[3:]))
            finally:
                Memory.objects.filter(owner=store_user).delete()
    return figures


# --- the run ---------------------------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="10k",
                        help="bench/corpus.py's corpus to copy (once) into engram_bench_cg_<corpus>")
    parser.add_argument("--queries", type=int, default=60, help="LoCoMo questions per latency figure")
    parser.add_argument("--runs", type=int, default=20, help="stores, merges, forgets per figure")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--only", choices=SECTIONS, action="append", help="measure only these (repeatable)")
    parser.add_argument("--no-mcp", action="store_true", help="measure the service layer only")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top costs of the service figures")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    database = f"engram_bench_cg_{args.corpus}"
    copy_database(CORPORA[args.corpus], database)
    setup_django(database)
    from apps.memories.models import Memory

    user = bench_user(CORPUS_USER)
    size = Memory.objects.filter(owner=user, deleted_at__isnull=True).count()
    texts = questions(args.queries, args.seed)
    sections = set(args.only or SECTIONS)
    print(f"{machine()}\n{database}: {size} memories; {len(texts)} questions", flush=True)
    figures: dict = {"memories": size}
    focal = wide_nodes(user, 50) if "neighborhood" in sections else []
    if focal:
        print(f"{len(focal)} nodes with a 20-node 2-hop neighbourhood", flush=True)

    measures = {"inject": lambda: inject_service(user, texts), "search": lambda: search_service(user, texts),
                "store": lambda: store_service(args.runs), "pulse": lambda: pulse_service(user, texts),
                "curation": lambda: curation_service(user, args.runs, args.seed),
                "neighborhood": lambda: neighborhood_service(user, focal)}

    def service() -> None:
        for section in SECTIONS:
            if section in sections:
                measured = measures[section]()
                print_table(measured)
                figures.update(measured)

    profiled(service, 30) if args.profile else service()
    if not args.no_mcp and sections - {"curation"}:
        measured = mcp_figures(database, user, texts, sections, stores=args.runs, focal=focal)
        print_table(measured)
        figures.update(measured)
    figures["load average at the end"] = load_average()
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
