"""Dream and reasoning (issue 20): the dream's phases, its wake latency, causal reasoning and test_recall_accuracy.

    .venv/bin/python bench/corpus.py --db engram_bench_10k --size 10000       # once: the corpus (perf.py's)
    .venv/bin/python bench/dream.py --corpus 10k --json bench/results/dream_10k.json
    .venv/bin/python bench/dream.py --corpus 100k --json bench/results/dream_100k.json    # ~25 min
    .venv/bin/python bench/dream.py --corpus 10k --only recall --recall-10k             # + haystack 10,000 (~5 min)
    .venv/bin/python bench/dream.py --corpus 10k --only cycle --profile                 # + cProfile's top costs

Databases: the corpus is copied once into engram_bench_dream_<corpus>_base (CREATE DATABASE ... TEMPLATE), which a
child process prepares once (below); every run then measures in engram_bench_dream_<corpus>, dropped and copied
afresh from the base, so each run starts from the same graph and perf.py's corpora stay as they were.

What the base gets, all through the real services, as the corpus user (bench/corpus.py's):
- near-duplicates, through memory_store_many: DUPLICATES copies of corpus memories stored through the service (the
  first 1000, which have real whole-text vectors) with a cosmetic change (case, a trailing word, punctuation), and
  PARAPHRASES with a clause dropped or added; the cosine of each to its original is printed (merged above 0.97,
  potential_merge tasks from 0.90);
- causal-cue memories, through memory_store_many: CAUSES "<a corpus memory> As a result, <another sentence>", then
  CHAINED "<one of those effects> As a result, <another>", so the linker (a claim's side names a neighbour at cosine
  >= 0.6) makes cause -> effect links, some of them two hops long;
- SessionItems: INJECTS real inject_context calls with LoCoMo questions (sessions of 25), whose activated nodes the
  NREM replay reads.

Figures:
- cycle: one full_cycle dream (its default 100 REM walks, seed fixed), executed in this process as the Celery task
  does, resumed until completed. Each batch is timed by wrapping the run's batch function (services/dream/runs.py
  _batch: the phase's work, the undo snapshot, the Event, the checkpoint, one transaction), so each phase's time is
  the sum of its batches. NREM edge updates/s = edges strengthened + weakened + reactivated (the run's counters:
  distinct links changed) over the replay's time; merges/s over dedupe's; REM queries/s = walks over REM's time;
  the full cycle's wall time; restore_from_hash of the whole run (the graph ends as it began); the process's peak
  RSS (ru_maxrss) after it: this process holds MiniLM and ran the dream in-process, as a worker does.
- wake: a dream (phase nrem, then phase rem, half the samples each) executes in a thread with a large budget; at a
  random moment the main thread makes a real query of the owner (apps.memories.services.memory_retrieve, which
  announces it); latency = from the query's return to dream_execute's return (interrupted). The next sample resumes
  the run; a run that completes is undone and a new one started; the last is undone.
- causal: find_causal_path and query_causal (do, observe, counterfactual) between the ends of causal links (one
  and two hops), by node id (the walk alone) and by the nodes' words (resolution by retrieval + the walk).
- recall: test_recall_accuracy (full_suite, 100 needles, seed 20) at haystack 1,000 (and 10,000 with --recall-10k),
  run inline through recall_test_start in a user of its own; its hidden cube is deleted after.
- gardener: successive gardener cycles on the corpus user's whole graph, each tending the next window of MAX_NODES
  (1000) nodes (--garden-cycles, default 3; --garden-round: until the round's last window), after GARDEN_WEAK weak
  links idle two days were added between random pairs of its nodes and importance spread to 0.1 / 0.95 (so prune,
  dedupe and scaling all have work in every window): each cycle's wall time, window, counters and per-step time (the
  sum of its batches, timed by wrapping cycle.BATCHES) and its longest batch (what a query waits for); then each
  cycle's undo, the last first; its stop latency (--garden-stops samples: a cycle runs in a thread and a real query
  of the owner, memory_retrieve, stops it; from the query's return to the cycle's); and the beat's activity_tick over
  GARDEN_USERS users' activity (idle, so each is judged: one due, the rest within their 5 minutes).
- summarise (--only summarise, --summarise-minutes): NREM summarise alone on the prepared corpus, a dream started at
  that step (its earlier steps marked done) and executed a minute at a time: the kNN stage's nodes read and the
  clusters written after each minute (a step that slows as it goes shows here), then the run's undo.
- worker (--worker-rss, or --only worker): a real `celery -A config worker --concurrency=1` process (as `make run`
  starts it, without the beat) on the measuring database and its SQL broker runs a full_cycle dream (dream_queue)
  and then a gardener cycle (gardener_request + gardener_queue), as the pages hand them over; the resident memory of
  its process tree is sampled every 0.2 s from /proc (psutil), with each process's own peak (VmHWM).

    .venv/bin/python bench/dream.py --corpus 10k --only gardener --garden-round --worker-rss
    .venv/bin/python bench/dream.py --corpus 100k --only gardener --garden-cycles 5
    .venv/bin/python bench/dream.py --corpus 100k --only summarise --summarise-minutes 10
"""
from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    REPO, bench_user, load_average, machine, percentiles, profiled, setup_django, write_json,
)
from bench.corpus import CORPUS_USER, LOCOMO, copy_database, locomo_pieces  # noqa: E402
from bench.perf import print_table, questions, timed  # noqa: E402

CORPORA = {"10k": "engram_bench_10k", "100k": "engram_bench_100k"}
SECTIONS = ("cycle", "wake", "causal", "recall", "gardener", "summarise", "worker")
# Measured only when asked: a real worker's memory (--worker-rss or --only worker: it runs a dream of its own), and
# summarise alone (--only summarise: the full cycle has it).
DEFAULT_SECTIONS = SECTIONS[:-2]
LINKED = 1000  # bench/corpus.py stores the first 1000 memories through the service: real vectors, links
DUPLICATES, PARAPHRASES = 120, 80
CAUSES, CHAINED = 240, 120
INJECTS = 300
SESSION_SIZE = 25
STORE_BATCH = 40
DUP_SESSION, CAUSE_SESSION = "bench-dream-duplicates", "bench-dream-causal"
RECALL_USER = "bench-dream-recall"
SEED = 20


# --- the base: near-duplicates, causal cues, session items -------------------------------------------------------

def prepare(seed: int) -> None:
    """Give the base database's corpus user what the dream works on (once; each step is skipped when done)."""
    from django.db import connection

    from apps.cognition.models import SessionItem
    from apps.memories.models import Memory, MemoryLink

    user = bench_user(CORPUS_USER)
    rng = random.Random(seed)
    _, sentences = locomo_pieces(LOCOMO)
    originals = list(Memory.objects.filter(owner=user, deleted_at__isnull=True, kind=Memory.Kind.MEMORY)
                     .order_by("created_at", "pk").values_list("pk", "content", "primary_sector", "tags")[:LINKED])
    if not Memory.objects.filter(owner=user, session_id=DUP_SESSION).exists():
        store_duplicates(user, rng.sample(originals, DUPLICATES + PARAPHRASES), sentences, rng)
    if not Memory.objects.filter(owner=user, session_id=CAUSE_SESSION).exists():
        store_causes(user, rng.sample(originals, CAUSES), sentences, rng)
    if not SessionItem.objects.filter(session__owner=user).exists():
        inject(user, questions(INJECTS, seed))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    causal = MemoryLink.objects.filter(source__owner=user, link_type=MemoryLink.LinkType.CAUSAL).count()
    print(f"prepared: {SessionItem.objects.filter(session__owner=user).count()} session items, "
          f"{Memory.objects.filter(owner=user, deleted_at__isnull=True).count()} memories, "
          f"{MemoryLink.objects.filter(source__owner=user).count()} links ({causal} causal)", flush=True)


def _near_copy(content: str, rng: random.Random) -> str:
    """The same words, cosmetically changed (what a client re-sending a memory does)."""
    change = rng.randrange(4)
    if change == 0:
        return content.rstrip(".!?") + "!"
    if change == 1:
        return content + " Really."
    if change == 2:
        return content.lower()
    return content.replace(", ", " ").rstrip(".") + "..."


def _paraphrase(content: str, sentences: list[str], rng: random.Random) -> str:
    """A longer or shorter telling of the same memory: a sentence dropped, or one added."""
    speaker, _, text = content.partition(": ")
    parts = [part for part in text.split(". ") if part]
    if len(parts) > 1:
        parts.pop(rng.randrange(len(parts)))
        return f"{speaker}: {'. '.join(parts)}"
    return f"{content} {rng.choice(sentences)}"


def store_duplicates(user, chosen: list[tuple], sentences: list[str], rng: random.Random) -> None:
    import numpy as np

    from apps.memories.models import MemoryVector
    from apps.memories.services import memory_store_many

    items = []
    for index, (pk, content, sector, tags) in enumerate(chosen):
        text = _near_copy(content, rng) if index < DUPLICATES else _paraphrase(content, sentences, rng)
        items.append({"content": text, "primary_sector": sector, "tags": list(tags), "session_id": DUP_SESSION})
    started, stored = time.perf_counter(), []
    for start in range(0, len(items), STORE_BATCH):
        stored += memory_store_many(actor=user, items=items[start:start + STORE_BATCH])
    print(f"stored {len(items)} near-duplicates through memory_store_many in {time.perf_counter() - started:.0f} s",
          flush=True)
    pairs = [(original[0], result.memory.pk) for original, result in zip(chosen, stored)]
    vectors = dict(MemoryVector.objects.filter(memory_id__in=[pk for pair in pairs for pk in pair])
                   .values_list("memory_id", "embedding"))
    cosines = []
    for original, copy in pairs:
        a, b = (np.asarray(_listed(vectors[pk]), dtype=np.float64) for pk in (original, copy))
        cosines.append(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
    print(f"cosine to their originals: {sum(c > 0.97 for c in cosines)} above 0.97, "
          f"{sum(0.90 <= c <= 0.97 for c in cosines)} in 0.90-0.97, {sum(c < 0.90 for c in cosines)} below "
          f"(cosmetic copies {min(cosines[:DUPLICATES]):.3f}-{max(cosines[:DUPLICATES]):.3f}, paraphrases "
          f"{min(cosines[DUPLICATES:]):.3f}-{max(cosines[DUPLICATES:]):.3f})", flush=True)


def _listed(embedding):
    return embedding.to_list() if hasattr(embedding, "to_list") else embedding


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def store_causes(user, causes: list[tuple], sentences: list[str], rng: random.Random) -> None:
    from apps.memories.services import memory_store_many

    first = [(content, rng.choice(sentences)) for _, content, _, _ in causes]
    items = [{"content": f"{content} As a result, {_lower_first(effect)}", "session_id": CAUSE_SESSION}
             for content, effect in first]
    chained = [{"content": f"{effect} As a result, {_lower_first(rng.choice(sentences))}", "session_id": CAUSE_SESSION}
               for _, effect in rng.sample(first, CHAINED)]
    started = time.perf_counter()
    for batch in (items, chained):  # the chained ones find the first ones' memories as neighbours
        for start in range(0, len(batch), STORE_BATCH):
            memory_store_many(actor=user, items=batch[start:start + STORE_BATCH])
    print(f"stored {len(items)} + {len(chained)} causal-cue memories through memory_store_many in "
          f"{time.perf_counter() - started:.0f} s", flush=True)


def inject(user, texts: list[str]) -> None:
    from apps.cognition.services.context import context_inject

    started = time.perf_counter()
    for index, text in enumerate(texts):
        session = uuid.uuid5(uuid.NAMESPACE_URL, f"bench-dream-session-{index // SESSION_SIZE}")
        context_inject(actor=user, query=text, session_id=str(session))
    print(f"{len(texts)} inject_context calls in {time.perf_counter() - started:.0f} s", flush=True)


def fresh_copy(source: str, target: str) -> None:
    """Drop ``target`` (this script's own database) and copy it again from ``source``."""
    import psycopg

    from apps.core.embedded_postgres import django_database
    from config.settings.base import VAR_DIR

    params = django_database(VAR_DIR)
    with psycopg.connect(dbname="postgres", user=params["USER"], host=params["HOST"], autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
    started = time.perf_counter()
    copy_database(source, target)
    print(f"({time.perf_counter() - started:.0f} s)", flush=True)


# --- cycle ---------------------------------------------------------------------------------------------------------

class BatchClock:
    """Times each batch of every dream this process executes, by phase (wraps runs._batch; the services are
    unchanged)."""

    def __init__(self) -> None:
        from apps.cognition.services.dream import runs

        self.seconds: Counter = Counter()
        self.batches: Counter = Counter()
        self.items: Counter = Counter()
        original = runs._batch

        def batch(state, size):
            phase = state.run.checkpoint["phase"]
            started = time.perf_counter()
            work = original(state, size)
            self.seconds[phase] += time.perf_counter() - started
            self.batches[phase] += 1
            self.items[phase] += work.items
            return work

        runs._batch = batch

    def reset(self) -> None:
        self.seconds.clear()
        self.batches.clear()
        self.items.clear()


def dream_until_done(user, *, phase: str, seed: int, walks: int, minutes: float | None = None):
    """Trigger a dream and execute it (resuming it when its minutes run out) until it completes, or until ``minutes``
    have passed (then it is left interrupted); the run and its wall time."""
    from apps.cognition.models import ConsolidationRun
    from apps.cognition.services.dream import dream_execute, dream_trigger

    budget = {"duration_minutes": 10 if minutes is None else max(1, min(10, round(minutes))),
              "max_items": 1_000_000, "synthetic_query_count": walks}
    run = dream_trigger(actor=user, phase=phase, seed=seed, **budget)
    started = time.perf_counter()
    while True:
        run = dream_execute(run_id=run.pk)
        elapsed = time.perf_counter() - started
        if run.status == ConsolidationRun.Status.COMPLETED:
            return run, elapsed
        reason = run.progress.get("stop_reason")
        if run.status != ConsolidationRun.Status.INTERRUPTED or reason not in ("minutes", "budget"):
            raise SystemExit(f"The dream stopped: {run.status} ({reason}); notes {run.notes}")
        if minutes is not None and elapsed >= 60 * minutes:
            print(f"  the dream stopped for its {reason} after {elapsed:.0f} s: left interrupted", flush=True)
            return run, elapsed
        print(f"  the dream stopped for its {reason}; resumed", flush=True)
        run = dream_trigger(actor=user, **budget)


def rate(count: int, seconds: float) -> float | None:
    return round(count / seconds, 1) if seconds else None


def cycle(user, clock: BatchClock, *, seed: int, walks: int, minutes: float | None) -> dict:
    from apps.cognition.models import Event
    from apps.cognition.services.undo import undo_apply
    from apps.memories.models import MemoryLink

    links_before = MemoryLink.objects.filter(source__owner=user).count()
    clock.reset()
    run, wall = dream_until_done(user, phase="full_cycle", seed=seed, walks=walks, minutes=minutes)
    completed = run.status == run.Status.COMPLETED
    counters = dict(run.checkpoint["counters"])
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_now = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                   if line.startswith("VmRSS")) / 1024
    rows_written = sum(len(detail.get("reweighted", [])) for detail in Event.objects.filter(
        reversal_hash=run.reversal_hash, detail__phase="nrem_replay").values_list("detail", flat=True))
    updates = sum(counters[name] for name in ("edges_strengthened", "edges_weakened", "edges_reactivated"))
    seconds = dict(clock.seconds)
    replay, dedupe, rem_time = (seconds.get(name, 0.0) for name in ("nrem_replay", "nrem_dedupe", "rem"))
    started = time.perf_counter()
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    undone = time.perf_counter() - started
    links_after = MemoryLink.objects.filter(source__owner=user).count()
    rem_alone = None
    if not rem_time:  # the cap came first: REM on its own, from the same graph (the run above is undone)
        rem_run, rem_alone = dream_until_done(user, phase="rem", seed=seed, walks=walks)
        rem_time = clock.seconds["rem"]
        counters["walks"] = rem_run.checkpoint["counters"]["walks"]
        undo_apply(actor=user, reversal_hash=rem_run.reversal_hash, preview=False)
    figures = {
        "full_cycle completed": completed,
        "full_cycle wall time s" if completed else f"full_cycle stopped (cap {minutes} min) after s": round(wall, 1),
        "phase rem run on its own (the cap came first), wall s": rem_alone and round(rem_alone, 1),
        "phase reached": run.checkpoint.get("phase"),
        "phase seconds (sum of batches)": {name: round(value, 2) for name, value in clock.seconds.items()},
        "phase batches": dict(clock.batches), "phase items": dict(clock.items),
        "counters": counters,
        "NREM edge updates/s (strengthened+weakened+reactivated / replay s)": rate(updates, replay),
        "NREM edge rows rewritten/s (Events' reweighted / replay s)": rate(rows_written, replay),
        "NREM merges/s (merges / dedupe s)": rate(counters["merges"], dedupe),
        "NREM nodes compared/s (dedupe)": rate(counters["nodes_compared"], dedupe),
        "REM queries/s (walks / REM s)": rate(counters["walks"], rem_time),
        "restore_from_hash of the run s": round(undone, 2),
        "links before / after the run's undo": [links_before, links_after],
        "process peak RSS MiB (ru_maxrss, after the full cycle, MiniLM loaded)": round(rss_peak),
        "process RSS MiB now (VmRSS)": round(rss_now),
        "notes": run.notes,
        "load average": load_average(),
    }
    return figures


# --- summarise -----------------------------------------------------------------------------------------------------

def summarise(user, *, minutes: float) -> dict:
    """NREM summarise alone: an NREM dream whose checkpoint starts at its summarise step (replay, link and dedupe
    marked done, as a run resumed there has them), executed a minute at a time (its budget) until the step ends or
    ``minutes`` have passed; the nodes read by the kNN stage and the clusters written after each minute, then the
    run's undo."""
    from apps.cognition.models import ConsolidationRun
    from apps.cognition.services.dream import dream_execute, dream_trigger
    from apps.cognition.services.undo import undo_apply

    budget = {"duration_minutes": 1, "max_items": 1_000_000}
    run = dream_trigger(actor=user, phase="nrem", **budget)
    ConsolidationRun.objects.filter(pk=run.pk).update(checkpoint={
        **run.checkpoint, "phase": "nrem_summarise", "phases_done": ["nrem_replay", "nrem_link", "nrem_dedupe"]})
    started = time.perf_counter()
    minutes_seen = []
    while True:
        run = dream_execute(run_id=run.pk)
        counters = run.checkpoint["counters"]
        elapsed = time.perf_counter() - started
        minutes_seen.append([round(elapsed), counters.get("nodes_clustered", 0), counters.get("clusters_examined", 0)])
        print(f"  {elapsed:5.0f} s: {minutes_seen[-1][1]} nodes read, {minutes_seen[-1][2]} clusters written",
              flush=True)
        if run.status == ConsolidationRun.Status.COMPLETED or run.checkpoint.get("phase") != "nrem_summarise":
            break
        if run.progress.get("stop_reason") != "minutes" or elapsed >= 60 * minutes:
            break
        run = dream_trigger(actor=user, **budget)
    finished = run.checkpoint.get("phase") != "nrem_summarise"
    undo_started = time.perf_counter()
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    counters = run.checkpoint["counters"]
    return {
        "summarise finished": finished,
        "wall time s": round(elapsed, 1),
        "after each minute [s, nodes read, clusters written]": minutes_seen,
        "kNN nodes read/s over the whole": rate(counters.get("nodes_clustered", 0), elapsed),
        "summaries created / updated": [counters.get("summaries_created", 0), counters.get("summaries_updated", 0)],
        "summary edges created": counters.get("summary_edges_created", 0),
        "undo s": round(time.perf_counter() - undo_started, 1),
        "notes": list(dict.fromkeys(run.notes)),
        "load average": load_average(),
    }


# --- wake ----------------------------------------------------------------------------------------------------------

def query_while(call, user, text: str, rng: random.Random) -> tuple:
    """Run ``call`` in a thread and, at a random moment 0.5-3 s in, make a real query of ``user`` (memory_retrieve,
    which announces it as it starts): (what ``call`` returned, when it returned, when the query was called, when the
    query returned), perf_counter seconds."""
    from django.db import connection

    from apps.memories.services import memory_retrieve

    done: dict = {}

    def work():
        try:
            done["result"] = call()
            done["at"] = time.perf_counter()
        finally:
            connection.close()

    thread = threading.Thread(target=work, name="bench-query-while")
    thread.start()
    time.sleep(rng.uniform(0.5, 3.0))
    began = time.perf_counter()
    memory_retrieve(actor=user, text=text, limit=10)
    returned = time.perf_counter()
    thread.join()
    return done["result"], done["at"], began, returned


def wake(user, clock: BatchClock, texts: list[str], *, samples: int, seed: int) -> dict:
    """Wake latency: the dream's return after a real query of its owner, half the samples in NREM, half in REM."""
    from apps.cognition.models import ConsolidationRun
    from apps.cognition.services.dream import dream_execute, dream_trigger
    from apps.cognition.services.undo import undo_apply

    rng = random.Random(seed)
    Status = ConsolidationRun.Status
    latencies: dict[str, list[float]] = defaultdict(list)
    phases_hit: Counter = Counter()
    query_ms: list[float] = []
    finished_first = 0
    clock.reset()
    for phase in ("nrem", "rem"):
        run = None
        taken = 0
        while taken < samples // 2:
            budget = {"duration_minutes": 10, "max_items": 1_000_000, "synthetic_query_count": 500}
            run = dream_trigger(actor=user, phase=phase, seed=seed, **budget)
            run, at, began, returned = query_while(lambda run_id=run.pk: dream_execute(run_id=run_id), user,
                                                   texts[(taken + samples) % len(texts)], rng)
            if run.status == Status.COMPLETED or at < returned:  # it ended before the query: no sample
                finished_first += 1
                if run.status == Status.COMPLETED:
                    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
                continue
            if run.progress.get("stop_reason") != "query":
                raise SystemExit(f"The dream stopped for {run.progress.get('stop_reason')}, not the query.")
            latencies[phase].append(1000 * (at - returned))
            phases_hit[run.checkpoint.get("phase")] += 1
            query_ms.append(1000 * (returned - began))
            taken += 1
        undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    every = [value for values in latencies.values() for value in values]
    return {"wake latency (query return -> dream return), all": percentiles(every),
            "wake latency, NREM dream": percentiles(latencies["nrem"]),
            "wake latency, REM dream": percentiles(latencies["rem"]),
            "the query's own latency while the dream ran": percentiles(query_ms),
            "phases the dream was in when woken": dict(phases_hit),
            "dreams that ended before the query (not samples)": finished_first,
            "batches of these dreams: seconds, batches, items by phase": {
                name: [round(clock.seconds[name], 2), clock.batches[name], clock.items[name]] for name in clock.seconds},
            "REM queries/s in these dreams (walks / REM batch s)": rate(clock.items["rem"], clock.seconds["rem"]),
            "load average": load_average()}


# --- causal --------------------------------------------------------------------------------------------------------

def causal_ends(user, count: int, seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(cause, effect) node pairs joined by one causal link, and by two (cause -> middle -> effect), fixed order."""
    from apps.memories.models import MemoryLink

    arcs = sorted((str(s), str(t)) for s, t in MemoryLink.objects.filter(
        source__owner=user, link_type=MemoryLink.LinkType.CAUSAL, source__deleted_at__isnull=True,
        target__deleted_at__isnull=True).values_list("source_id", "target_id"))
    out = defaultdict(list)
    for source, target in arcs:
        out[source].append(target)
    two = sorted({(a, c) for a, b in arcs for c in out.get(b, ()) if c != a})
    rng = random.Random(seed)
    return rng.sample(arcs, min(count, len(arcs))), rng.sample(two, min(count, len(two)))


def words_of(node_ids: set[str]) -> dict[str, str]:
    from apps.memories.models import Memory

    return {str(pk): " ".join(content.split())[:200]
            for pk, content in Memory.objects.filter(pk__in=node_ids).values_list("pk", "content")}


def causal(user, *, count: int, seed: int) -> dict:
    from apps.cognition.services.causal import causal_path_find, causal_query

    one, two = causal_ends(user, count, seed)
    print(f"{len(one)} one-link and {len(two)} two-link causal pairs sampled", flush=True)
    pairs = one + two
    if not pairs:
        return {"causal": "no causal links in the corpus"}
    text = words_of({node for pair in pairs for node in pair})
    found = lambda pair, **kw: causal_path_find(actor=user, start_concept=pair[0], end_concept=pair[1], **kw)  # noqa
    for pair in pairs[:3]:
        found(pair)  # warm
    figures = {}
    paths = [found(pair) for pair in pairs]
    figures["find_causal_path (ids, path_type any) found a path"] = (
        f"{sum(path.path is not None for path in paths)}/{len(paths)}")
    figures["find_causal_path, ids, path_type any"] = percentiles(timed(found, pairs))
    figures["find_causal_path, ids, path_type causal"] = percentiles(timed(lambda p: found(p, path_type="causal"),
                                                                          pairs))
    figures["find_causal_path, ids, any, with alternatives (Yen k=3)"] = percentiles(timed(
        lambda p: found(p, include_alternatives=True), pairs))
    by_words = [(text[a], text[b]) for a, b in pairs]
    resolved = [causal_path_find(actor=user, start_concept=a, end_concept=b) for a, b in by_words]
    figures["find_causal_path by words: both ends resolved to the intended nodes"] = (
        f"{sum(r.start.node_id == a and r.end.node_id == b for r, (a, b) in zip(resolved, pairs))}/{len(pairs)}")
    figures["find_causal_path, words (retrieval resolves both ends)"] = percentiles(timed(found, by_words))
    actions = sorted({a for a, _ in pairs})
    for kind in ("do", "observe", "counterfactual"):
        figures[f"query_causal {kind}, id"] = percentiles(timed(
            lambda x, kind=kind: causal_query(actor=user, action=x, intervention_type=kind), actions))
    figures["query_causal do, with outcome, ids"] = percentiles(timed(
        lambda p: causal_query(actor=user, action=p[0], outcome=p[1], intervention_type="do"), pairs))
    figures["query_causal do, words"] = percentiles(timed(
        lambda x: causal_query(actor=user, action=text[x], intervention_type="do"), actions))
    effects = [len(causal_query(actor=user, action=x, intervention_type="do").results) for x in actions]
    figures["query_causal do: effects per action (mean, max)"] = [round(sum(effects) / len(effects), 1),
                                                                   max(effects)]
    figures["load average"] = load_average()
    return figures


# --- recall --------------------------------------------------------------------------------------------------------

def recall(haystacks: list[int]) -> dict:
    from django.test import override_settings

    from apps.cognition.services.benchmark import recall_test_start

    user = bench_user(RECALL_USER)
    figures = {}
    for size in haystacks:
        started = time.perf_counter()
        with override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=3600):  # inline, as the tool does for 25 s
            run = recall_test_start(actor=user, test_type="full_suite", needle_count=100, haystack_size=size,
                                    seed=SEED)
        wall = time.perf_counter() - started
        report = run.report
        details = report["test_details"]
        figures[f"test_recall_accuracy haystack {size}"] = {
            "status": run.status, "fuse_moe_accuracy": report["fuse_moe_accuracy"],
            "baseline_accuracy": report.get("baseline_accuracy"),
            "improvement_percent": report.get("improvement_percent"), "p95_latency_ms": report["p95_latency_ms"],
            "semantic_drift (fused / dense)": [details["semantic_drift"], details.get("baseline_semantic_drift")],
            "by_type": details["by_type"], "wall time s": round(wall, 1),
            "items/s (stores + queries)": round((size + 100) / wall, 1), "load average": load_average()}
    return figures


# --- gardener ------------------------------------------------------------------------------------------------------

GARDEN_WEAK = 3000
GARDEN_USERS = 1000


class StepClock:
    """Times each batch of every gardener step this process runs, by step (wraps cycle.BATCHES: the step's own work,
    without its undo, Event and commit; the services are unchanged)."""

    def __init__(self) -> None:
        from apps.cognition.services.gardener import cycle

        self.seconds: Counter = Counter()
        self.batches: Counter = Counter()
        self.longest: Counter = Counter()
        for name, step in list(cycle.BATCHES.items()):
            def timed(state, cursor, memo, size, step=step, name=name):
                started = time.perf_counter()
                try:
                    return step(state, cursor, memo, size)
                finally:
                    spent = time.perf_counter() - started
                    self.seconds[name] += spent
                    self.batches[name] += 1
                    self.longest[name] = max(self.longest[name], spent)

            cycle.BATCHES[name] = timed

    def reset(self) -> None:
        self.seconds.clear()
        self.batches.clear()
        self.longest.clear()


def garden_work(user, *, seed: int) -> None:
    """Work for every window of the corpus user's graph: GARDEN_WEAK weak links (0.05) made two days ago between random
    pairs of their nodes (prune), and importance spread to 0.1 / 0.95 by a byte of each node's id (variance ~0.18:
    scaling; 0.1 is not below the clearance's bound, so the old unlinked corpus rows are not all forgotten)."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from apps.memories.models import Memory, MemoryLink

    rng = random.Random(seed)
    ids = list(Memory.objects.filter(owner=user, deleted_at__isnull=True).order_by("pk").values_list("pk", flat=True))
    pairs = {tuple(rng.sample(ids, 2)) for _ in range(GARDEN_WEAK)}
    MemoryLink.objects.bulk_create([MemoryLink(source_id=a, target_id=b, weight=0.05, origin=MemoryLink.Origin.MANUAL)
                                    for a, b in pairs], ignore_conflicts=True)
    # Made two days ago (created_at is set on insert): idle long enough for the prune.
    MemoryLink.objects.filter(source__owner=user, origin=MemoryLink.Origin.MANUAL, weight=0.05).update(
        created_at=timezone.now() - timedelta(days=2))
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Memory._meta.db_table} SET importance = CASE WHEN get_byte(uuid_send(id), 15) "
                       "%% 2 = 0 THEN 0.1 ELSE 0.95 END WHERE owner_id = %s AND deleted_at IS NULL", [user.pk])
        cursor.execute(f"ANALYZE {Memory._meta.db_table}, {MemoryLink._meta.db_table}")


def gardener_stops(user, texts: list[str], *, samples: int, seed: int) -> dict:
    """Stop latency: a cycle runs in a thread; at a random moment the main thread makes a real query of the owner
    (memory_retrieve, which announces it as it starts); latency = from the query's call to gardener_run's return
    (interrupted), which may come before the query itself returns. Each sample starts a new cycle, which tends the
    window the last one left."""
    from apps.cognition.services.gardener.cycle import gardener_run
    from apps.cognition.services.gardener.limits import STEPS

    rng = random.Random(seed)
    latencies, query_ms, steps_hit = [], [], Counter()
    finished_first = 0
    for index in range(samples):
        report, at, began, returned = query_while(lambda: gardener_run(actor=user), user, texts[index % len(texts)],
                                                  rng)
        if report.stop_reason != "query":  # it ended before the query: no sample
            finished_first += 1
            continue
        latencies.append(1000 * (at - began))
        query_ms.append(1000 * (returned - began))
        steps_hit[next((step for step in STEPS if step not in report.steps_done), "done")] += 1
    return {"stop latency (query call -> cycle return)": percentiles(latencies) if latencies else None,
            "the query's own latency while the cycle ran": percentiles(query_ms) if query_ms else None,
            "steps the cycle was in when stopped": dict(steps_hit),
            "cycles that ended before the query (not samples)": finished_first, "load average": load_average()}


def gardener(user, steps: StepClock, texts: list[str], *, seed: int, cycles: int, whole_round: bool,
             stops: int) -> dict:
    """Successive gardener cycles on the corpus user's graph, window after window (``whole_round``: until the round's
    last window), each as the task runs it (gardener_run, manual); then each undone, the last first."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.accounts.models import User
    from apps.cognition.models import ActivityState
    from apps.cognition.services.gardener.activity import activity_tick
    from apps.cognition.services.gardener.cycle import gardener_run
    from apps.cognition.services.gardener.limits import MAX_NODES
    from apps.cognition.services.undo import undo_apply
    from apps.memories.models import Memory, MemoryLink

    garden_work(user, seed=seed)
    links_before = MemoryLink.objects.filter(source__owner=user).count()
    live_before = Memory.objects.filter(owner=user, deleted_at__isnull=True).count()
    figures: dict = {"graph": {"live nodes": live_before, "links": links_before, "window (MAX_NODES)": MAX_NODES}}
    reports, walls = [], []
    while True:
        steps.reset()
        started = time.perf_counter()
        report = gardener_run(actor=user)
        wall = time.perf_counter() - started
        reports.append(report)
        walls.append(wall)
        figures[f"cycle {len(reports)}"] = {
            "wall s": round(wall, 2), "status": report.status, "window": {
                key: report.window[key] for key in ("round", "index", "of", "nodes", "last")},
            "counters": {name: value for name, value in report.counters.items() if value},
            "step s (sum of batches)": {name: round(value, 2) for name, value in steps.seconds.items()},
            "longest batch s by step": {name: round(value, 2) for name, value in steps.longest.items()},
            "load average": load_average()}
        print(f"  cycle {len(reports)}: window {report.window['index']} of {report.window['of']}, {wall:.1f} s, "
              f"{report.status}, load {load_average()}", flush=True)
        if report.status != "completed" or (report.window["last"] if whole_round else len(reports) >= cycles):
            break
    figures["cycles: wall s p50 / mean / max"] = [round(sorted(walls)[len(walls) // 2], 2),
                                                   round(sum(walls) / len(walls), 2), round(max(walls), 2)]
    figures["cycles: nodes tended"] = sum(report.window["nodes"] for report in reports)
    if whole_round:
        figures["the whole round s (sum of its cycles)"] = round(sum(walls), 1)
    undone = []
    for report in reversed(reports):
        if report.reversal_hash:
            started = time.perf_counter()
            undo_apply(actor=user, reversal_hash=report.reversal_hash, preview=False)
            undone.append(time.perf_counter() - started)
    figures["undo of each cycle, last first: s"] = [round(value, 2) for value in undone]
    figures["links / live nodes before the cycles and after their undo"] = [
        [links_before, MemoryLink.objects.filter(source__owner=user).count()],
        [live_before, Memory.objects.filter(owner=user, deleted_at__isnull=True).count()]]
    if stops:
        figures["stop on a query"] = gardener_stops(user, texts, samples=stops, seed=seed)
    # The tick: one statement of reads for every user's state, whatever their number.
    others = [User(username=f"bench-idle-{index}", email=f"idle-{index}@bench.invalid") for index in range(GARDEN_USERS)]
    User.objects.bulk_create(others, ignore_conflicts=True)
    idle = User.objects.filter(username__startswith="bench-idle-")
    now = timezone.now()
    ActivityState.objects.bulk_create(
        [ActivityState(owner=other, activity=0.0, low_since=now - timedelta(minutes=3), last_cycle_at=now)
         for other in idle], ignore_conflicts=True)
    ticks = []
    for round_ in range(5):
        started = time.perf_counter()
        activity_tick(now=now + timedelta(seconds=30 * (round_ + 1)))
        ticks.append((time.perf_counter() - started) * 1000)
    figures[f"activity_tick, {idle.count()} idle users"] = {**percentiles(ticks), "load average": load_average()}
    return figures


# --- worker: a real Celery worker's memory ----------------------------------------------------------------------

WORKER_SAMPLE_SECONDS = 0.2


class TreeMemory:
    """The resident memory of a process and its children, sampled from /proc (psutil) by a thread: the largest total
    seen, and each process's own peak (VmHWM, read as it ends or at the last sample)."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.peak_total = 0
        self.peaks: dict[int, tuple[str, int]] = {}
        self.running = True
        self.thread = threading.Thread(target=self._sample, name="bench-rss", daemon=True)
        self.thread.start()

    def _processes(self):
        import psutil

        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def now(self) -> int:
        """Resident bytes of the tree now (VmRSS summed)."""
        import psutil

        total = 0
        for process in self._processes():
            try:
                total += process.memory_info().rss
                high = next(int(line.split()[1]) * 1024 for line in Path(f"/proc/{process.pid}/status").read_text()
                            .splitlines() if line.startswith("VmHWM"))
                role = "main" if process.pid == self.root.pid else "pool child"
                self.peaks[process.pid] = (role, max(high, self.peaks.get(process.pid, (role, 0))[1]))
            except (psutil.NoSuchProcess, FileNotFoundError, StopIteration):
                continue
        self.peak_total = max(self.peak_total, total)
        return total

    def _sample(self) -> None:
        while self.running:
            self.now()
            time.sleep(WORKER_SAMPLE_SECONDS)

    def stop(self) -> None:
        self.running = False
        self.thread.join()


def mib(value: int) -> int:
    return round(value / 2 ** 20)


def worker(user, database: str, *, seed: int, walks: int) -> dict:
    """A real `celery worker` (as `make run` starts it, without the beat: --concurrency=1, the prefork pool) on the
    measuring database and its SQL broker, given what a user's pages give it: a full_cycle dream (dream_queue), then a
    gardener cycle (gardener_request + gardener_queue); its process tree's resident memory sampled throughout."""
    import os
    import signal

    from apps.cognition.models import ActivityState, ConsolidationRun
    from apps.cognition.services.dream import dream_trigger
    from apps.cognition.services.gardener.cycle import gardener_request
    from apps.cognition.tasks import dream_queue, gardener_queue
    from apps.core.models import WorkerHeartbeat

    hostname = f"bench-rss-{os.getpid()}@bench"
    env = {**os.environ, "ENGRAM_BENCH_DB": database, "DJANGO_SETTINGS_MODULE": "config.settings.bench",
           "HF_HUB_OFFLINE": "1"}
    log = open(Path("/tmp") / f"bench-worker-{os.getpid()}.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO",
                                "--concurrency=1", "--hostname", hostname], cwd=REPO, env=env,
                               start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    memory = TreeMemory(process.pid)
    figures: dict = {"worker": "celery -A config worker --loglevel=INFO --concurrency=1 (prefork, one pool child)",
                     "worker log": log.name}
    try:
        started = time.perf_counter()
        while not WorkerHeartbeat.objects.filter(hostname=hostname).exists():
            if process.poll() is not None or time.perf_counter() - started > 120:
                raise SystemExit(f"The worker did not start: see {log.name}")
            time.sleep(0.5)
        time.sleep(2)  # the pool child forks after the consumer is up
        figures["ready after s"] = round(time.perf_counter() - started, 1)
        figures["RSS MiB when ready (main + child)"] = mib(memory.now())
        budget = {"duration_minutes": 10, "max_items": 1_000_000, "synthetic_query_count": walks}
        run = dream_queue(dream_trigger(actor=user, phase="full_cycle", seed=seed, **budget))
        started = time.perf_counter()
        while True:
            time.sleep(1)
            run = ConsolidationRun.objects.get(pk=run.pk)
            if run.status == ConsolidationRun.Status.COMPLETED:
                break
            if run.status == ConsolidationRun.Status.INTERRUPTED and run.progress.get("stop_reason") == "minutes":
                run = dream_queue(dream_trigger(actor=user, **budget))  # resumed, as a second trigger would
            elif run.status not in ConsolidationRun.ACTIVE:
                raise SystemExit(f"The dream stopped: {run.status} {run.progress} {run.notes}")
        figures["dream full_cycle through the worker: wall s"] = round(time.perf_counter() - started, 1)
        figures["dream counters"] = {name: value for name, value in run.checkpoint["counters"].items() if value}
        figures["RSS MiB after the dream"] = mib(memory.now())
        figures["load average after the dream"] = load_average()
        gardener_queue(user, gardener_request(actor=user))
        started = time.perf_counter()
        while True:
            time.sleep(0.5)
            state = ActivityState.objects.get(owner=user)
            if not state.cycle_token:
                break
        figures["gardener cycle through the worker: wall s"] = round(time.perf_counter() - started, 1)
        figures["gardener cycle"] = {"status": state.last_cycle["status"], "window": state.last_cycle.get("window"),
                                     "counters": {name: value for name, value in state.last_cycle["counters"].items()
                                                  if value}}
        figures["RSS MiB after the gardener cycle"] = mib(memory.now())
        figures["load average after the gardener cycle"] = load_average()
    finally:
        memory.now()
        memory.stop()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    figures["peak RSS MiB of the tree (sampled every 0.2 s)"] = mib(memory.peak_total)
    figures["peak RSS MiB by process (VmHWM)"] = {f"{role} {pid}": mib(high)
                                                   for pid, (role, high) in sorted(memory.peaks.items())}
    return figures


# --- the run -------------------------------------------------------------------------------------------------------

def show(figures: dict) -> None:
    print_table({name: value for name, value in figures.items() if not isinstance(value, dict) or "p95" in value})
    for name, value in figures.items():
        if isinstance(value, dict) and "p95" not in value:
            print(f"{name}: {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="10k")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="measure only these (repeatable)")
    parser.add_argument("--walks", type=int, default=100, help="REM walks of the full cycle (10-500)")
    parser.add_argument("--cycle-minutes", type=float, help="stop the full cycle after this long (then REM alone)")
    parser.add_argument("--summarise-minutes", type=float, default=60, help="stop summarise alone after this long")
    parser.add_argument("--wake-samples", type=int, default=24, help="wake samples, half in NREM, half in REM")
    parser.add_argument("--pairs", type=int, default=40, help="causal pairs of each length (one and two links)")
    parser.add_argument("--recall-10k", action="store_true", help="also test_recall_accuracy at haystack 10,000")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top costs of the sections")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--run-db", help="the measuring copy's name (default engram_bench_dream_<corpus>): two runs "
                                         "at once need two")
    parser.add_argument("--corpus-db", help="the corpus database to start from (default engram_bench_<corpus>); its "
                                            "base copy is <corpus-db>_dream_base")
    parser.add_argument("--garden-cycles", type=int, default=3, help="gardener cycles (windows) to run one after "
                                                                     "another")
    parser.add_argument("--garden-round", action="store_true", help="gardener cycles until the round's last window")
    parser.add_argument("--garden-stops", type=int, default=12, help="gardener stop-latency samples (a query of the "
                                                                     "owner while a cycle runs)")
    parser.add_argument("--worker-rss", action="store_true", help="also a real celery worker's RSS while it runs a "
                                                                  "full_cycle dream and a gardener cycle")
    parser.add_argument("--prepare", help=argparse.SUPPRESS)  # the child that prepares the base database
    args = parser.parse_args()
    if args.prepare:
        setup_django(args.prepare)
        prepare(args.seed)
        return
    source = args.corpus_db or CORPORA[args.corpus]
    base = f"{args.corpus_db}_dream_base" if args.corpus_db else f"engram_bench_dream_{args.corpus}_base"
    database = args.run_db or f"engram_bench_dream_{args.corpus}"
    copy_database(source, base)
    subprocess.run([sys.executable, __file__, "--prepare", base, "--seed", str(args.seed)], check=True, cwd=REPO)
    fresh_copy(base, database)
    setup_django(database)
    from apps.memories.models import Memory

    user = bench_user(CORPUS_USER)
    size = Memory.objects.filter(owner=user, deleted_at__isnull=True).count()
    sections = set(args.only or DEFAULT_SECTIONS) | ({"worker"} if args.worker_rss else set())
    print(f"{machine()}\n{database} (from {source}): {size} memories", flush=True)
    figures: dict = {"machine": machine(), "memories": size}
    clock = BatchClock()
    steps = StepClock()
    texts = questions(200, args.seed + 1)
    measures = {"cycle": lambda: cycle(user, clock, seed=args.seed, walks=args.walks,
                                            minutes=args.cycle_minutes),
                "wake": lambda: wake(user, clock, texts, samples=args.wake_samples, seed=args.seed),
                "causal": lambda: causal(user, count=args.pairs, seed=args.seed),
                "recall": lambda: recall([1000, 10000] if args.recall_10k else [1000]),
                "gardener": lambda: gardener(user, steps, texts, seed=args.seed, cycles=args.garden_cycles,
                                             whole_round=args.garden_round, stops=args.garden_stops),
                "summarise": lambda: summarise(user, minutes=args.summarise_minutes),
                "worker": lambda: worker(user, database, seed=args.seed, walks=args.walks)}

    def measure() -> None:
        for section in SECTIONS:
            if section in sections:
                print(f"\n== {section} (load average {load_average()})", flush=True)
                measured = measures[section]()
                show(measured)
                figures[section] = measured

    profiled(measure, 40) if args.profile else measure()
    figures["load average at the end"] = load_average()
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
