"""Build (or grow) a benchmark corpus of N memories, and time the real store path on the way.

    .venv/bin/python bench/corpus.py --db engram_bench_10k --size 10000
    .venv/bin/python bench/corpus.py --db engram_bench_100k --size 100000 --from-db engram_bench_10k

The text is LoCoMo turns recombined: each memory is one to three sentences drawn from different turns,
voiced by one speaker, so vocabulary and lengths are those of real chat memories. Memory i depends only
on (seed, i): the corpus is deterministic, and a run that stops resumes where it left off.

The first --real memories (default 1000) go through memory_store_many, the path import_memories takes
(the content's vector, keywords, salience, links); the rate printed is the batched-import throughput.
The rest are filled in bulk, which is faster still: each row is built by the service's own build_memory
(validation, keywords, salience), and its vector is the normalised mean of the real MiniLM vectors of its
sentences (each distinct sentence embedded once), with the content's real token count. Filled rows have
no links. Retrieval then works on realistic text and vectors that
match it, at full scale; docs/benchmarks.md says which figures come from which rows.
``--from-db`` copies a smaller corpus first (CREATE DATABASE ... TEMPLATE), so 100k grows out of 10k.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, bench_user, machine, setup_django  # noqa: E402

LOCOMO = REPO.parent / "shared" / "bench" / "locomo" / "locomo_dev.json"
SENTENCE = re.compile(r"(?<=[.!?])\s+")
SECTORS = ["episodic", "semantic", "procedural", "emotional", "reflective"]
TAGS = ["work", "family", "health", "travel", "hobby", "friends", "music", "books", "food", "plans"]
CORPUS_USER = "bench-corpus"
EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
FILL_CHUNK = 1000
REBUILD_INDEX_ABOVE = 20000


def locomo_pieces(path: Path) -> tuple[list[str], list[str]]:
    speakers, sentences = set(), []
    for conversation in json.loads(path.read_text()):
        for key, turns in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    speakers.add(turn["speaker"])
                    sentences.extend(s.strip() for s in SENTENCE.split(turn["text"]) if len(s.strip()) > 12)
    return sorted(speakers), sentences


def memory_item(index: int, *, seed: int, speakers: list[str], sentences: list[str]) -> dict:
    rng = random.Random(f"{seed}-{index}")
    chosen = [rng.choice(sentences) for _ in range(rng.choice((1, 1, 2, 2, 3)))]
    return {
        "content": f"{rng.choice(speakers)}: {' '.join(chosen)}",
        "sentences": chosen,
        "primary_sector": rng.choice(SECTORS),
        "session_id": f"session-{index // 25}",
        "tags": rng.sample(TAGS, rng.randint(0, 2)),
        "created_at": EPOCH + timedelta(minutes=index * 5),
    }


def copy_database(source: str, target: str) -> None:
    """CREATE DATABASE target TEMPLATE source, unless target exists (needs no one connected to source)."""
    import subprocess

    check = f"import bench.common as c; c.setup_django({source!r})"
    subprocess.run([sys.executable, "-c", check], check=True, cwd=REPO)  # the server is up and source migrated
    from apps.core.embedded_postgres import django_database
    import psycopg

    from config.settings.base import VAR_DIR
    params = django_database(VAR_DIR)
    with psycopg.connect(dbname="postgres", user=params["USER"], host=params["HOST"], autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [target]).fetchone():
            conn.execute(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')
            print(f"copied {source} -> {target}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="benchmark database to build into")
    parser.add_argument("--size", type=int, required=True, help="number of memories the corpus should hold")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--from-db", help="start from a copy of this (smaller) corpus database")
    parser.add_argument("--real", type=int, default=1000, help="memories stored through the service layer")
    args = parser.parse_args()
    if args.from_db:
        copy_database(args.from_db, args.db)
    setup_django(args.db)
    from apps.memories.models import Memory
    from apps.memories.services import memory_store_many

    from django.db import connection

    # Two builds of one corpus at once would each fill it to --size (a 10k corpus of 19,872 was seen):
    # the second waits here for the first, then finds the corpus built. Held until the process ends.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtext('engram-bench-corpus'))")
    user = bench_user(CORPUS_USER)
    speakers, sentences = locomo_pieces(LOCOMO)
    have = Memory.objects.filter(owner=user).count()
    print(f"{machine()}\n{args.db}: {have} memories, building to {args.size}", flush=True)
    real_until = min(args.real, args.size)
    started, stored = time.perf_counter(), 0
    for start in range(have, real_until, args.batch_size):
        items = [memory_item(i, seed=args.seed, speakers=speakers, sentences=sentences)
                 for i in range(start, min(start + args.batch_size, real_until))]
        for item in items:
            del item["sentences"]
        memory_store_many(actor=user, items=items)
        stored += len(items)
        elapsed = time.perf_counter() - started
        print(f"{have + stored} memories, {stored / elapsed:.1f} memories/s through memory_store_many", flush=True)
    have = max(have, real_until)
    if have < args.size:
        fill(user, range(have, args.size), seed=args.seed, speakers=speakers, sentences=sentences)
    hnsw_index(present=True)
    # What autovacuum does to a table in steady state; without it, counts cannot use index-only scans
    # (the totalCount of 100k memories took 48 ms by sequential scan instead of 12 ms).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) memories_memory, memories_memoryvector")


def fill(user, indices: range, *, seed: int, speakers: list[str], sentences: list[str]) -> None:
    import numpy as np
    from django.db import transaction

    from apps.cubes.services import cube_ensure_personal
    from apps.memories.models import Memory, MemoryVector
    from apps.memories.sectors import token_counts
    from apps.memories.services.store import build_memory

    distinct = sorted(set(sentences))
    sentence_vectors = dict(zip(distinct, sentence_embeddings(distinct)))
    cube = cube_ensure_personal(actor=user)
    rebuild_index = len(indices) > REBUILD_INDEX_ABOVE
    if rebuild_index:
        hnsw_index(present=False)
    started = time.perf_counter()
    for chunk_start in range(indices.start, indices.stop, FILL_CHUNK):
        memories, rows = [], []
        for index in range(chunk_start, min(chunk_start + FILL_CHUNK, indices.stop)):
            item = memory_item(index, seed=seed, speakers=speakers, sentences=sentences)
            semantic = unit(np.mean([sentence_vectors[s] for s in item.pop("sentences")], axis=0))
            memories.append(build_memory(actor=user, cube=cube, **item))
            rows.append(semantic)
        created = [memory.created_at for memory in memories]
        with transaction.atomic():
            Memory.objects.bulk_create(memories)
            for memory, created_at in zip(memories, created):
                memory.created_at = created_at  # bulk_create applies auto_now_add
            Memory.objects.bulk_update(memories, ["created_at"])
            tokens = token_counts([memory.content for memory in memories])
            MemoryVector.objects.bulk_create([
                MemoryVector(memory=memory, embedding=vector.tolist(), tokens=count)
                for memory, vector, count in zip(memories, rows, tokens)
            ])
        done = chunk_start + len(memories) - indices.start
        print(f"{chunk_start + len(memories)} memories, filled {done / (time.perf_counter() - started):.0f}/s",
              flush=True)
    if rebuild_index:
        started = time.perf_counter()
        hnsw_index(present=True)
        print(f"built the HNSW index in {time.perf_counter() - started:.0f} s", flush=True)


def hnsw_index(*, present: bool) -> None:
    """Drop or (re)build the vectors' HNSW index: one build after a bulk fill is far faster than
    inserting row by row into the graph. A fill that stops half way leaves it dropped; the next
    run builds it."""
    from django.db import connection

    from apps.memories.models import MemoryVector

    [index] = MemoryVector._meta.indexes
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [index.name])
        exists = cursor.fetchone() is not None
        if present and not exists:
            cursor.execute("SET maintenance_work_mem = '4GB'")
    if exists != present:
        with connection.schema_editor() as editor:
            (editor.add_index if present else editor.remove_index)(MemoryVector, index)


def sentence_embeddings(distinct: list[str]):
    """The real MiniLM vectors of the distinct sentences, kept under var/bench/ between runs."""
    import hashlib

    import numpy as np

    from apps.memories.embeddings import embed_texts

    key = hashlib.sha256("\n".join(distinct).encode()).hexdigest()[:16]
    cache = REPO / "var" / "bench" / f"sentences-{key}.npy"
    if cache.exists():
        return np.load(cache)
    started = time.perf_counter()
    vectors = np.array(embed_texts(distinct), dtype=np.float32)
    print(f"embedded {len(distinct)} distinct sentences in {time.perf_counter() - started:.0f} s", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def unit(vector):
    import numpy as np

    return vector / np.linalg.norm(vector)


if __name__ == "__main__":
    main()
