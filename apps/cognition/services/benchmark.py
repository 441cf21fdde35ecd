"""Context Graph's validation tools: debug_compare_retrieval (one query, several retrieval methods side by side on the
caller's graph) and test_recall_accuracy (a BenchmarkRun: seeded needles in a haystack, stored for real in a hidden
cube, found again from paraphrases). Neither writes to the caller's graph: no reinforcement, no session item, and
the benchmark's cube is deleted for good when its run ends, however it ends.

**The methods** (no mixture of experts, no 12 models, no hyperbolic embedding is computed anywhere in Engram):
- ``cosine_baseline``: dense only, the query's MiniLM vector against the stored content vectors by pgvector cosine
  (apps/memories/vectors.nearest_in_scope), over the live nodes of the cubes the caller may read.
- ``fuse_moe``: Engram's fused dense + lexical + graph retrieval (memory_retrieve's composite score, docs/retrieval.md).
- ``causal_pathfinding``: spreading activation from the best COMPARE_SEEDS fused hits, each starting at its score
  over the best one's; a node's activation is max over paths of a(seed) x prod(weight x COMPARE_DECAY) over at
  most COMPARE_HOPS links, causal links followed from cause to effect only, other links either way.
- ``hyperbolic_entailment``: expansion from the same seeds along hierarchical links both ways (member -> summary,
  kind -> genus, and back), activation a(seed) x prod(weight), at most COMPARE_HOPS links.
Each method's latency is what it costs alone (the graph methods include the fused retrieval that seeds them).

**Metrics** (debug_compare_retrieval): with ``ground_truth_node_ids`` G (the seed's "known-good results"), a method's
results R give precision |R ∩ G| / |R| and recall |R ∩ G| / |G|; without G the seed defines neither, and both are
empty. ``overlap`` is the mean Jaccard |A ∩ B| / |A ∪ B| over every pair of methods run, in percent.

**test_recall_accuracy** (apps/cognition/needles.py writes the corpus): the run's hidden cube gets every item through
the memory core's store path (validate, embed, insert, link) in batches of BENCHMARK_STORE_BATCH; each query is
answered by fused retrieval and, unless the baseline is "none", by the MiniLM cosine baseline, both in the hidden cube
only, top BENCHMARK_TOP_K. A needle is found when it ranks first: accuracy = found / queries; false_positives counts
the queries whose first result is another item; semantic_drift is the mean cosine distance between the first result
and the needle (0 when found); p95_latency_ms is the 95th percentile (nearest rank) of the fused retrieval's time
per query. improvement_percent = 100 (fused - baseline) / baseline, left out when the baseline found none.
Work runs inline for ENGRAM_BENCHMARK_INLINE_SECONDS; then the run is handed to Celery (cognition.benchmark_run)
and the call answers with its id and progress. Every batch commits with the run's counters under its lease, so a
run resumes exactly where it stopped.
"""
from __future__ import annotations

import math
import secrets
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition import needles
from apps.cognition.lineage import changes_unrecorded
from apps.cognition.limits import (
    BENCHMARK_LEASE_SECONDS, BENCHMARK_QUERY_BATCH, BENCHMARK_STALE_SECONDS, BENCHMARK_STORE_BATCH, BENCHMARK_TOP_K,
    COMPARE_DECAY, COMPARE_HOPS, COMPARE_MAX_GROUND_TRUTH, COMPARE_REDUNDANT_OVERLAP, COMPARE_SEEDS, COMPARE_TOP_K,
    HAYSTACK_SIZE, NEEDLE_COUNT,
)
from apps.cognition.models import BenchmarkRun
from apps.cognition.selectors.walks import Arc, Rule, Step, ball, best_paths, readable_cube_ids
from apps.core.exceptions import Conflict, DomainError, InvalidInput
from apps.cubes.access import hidden_cube_scope
from apps.cubes.models import Cube
from apps.cubes.services import cube_delete, cube_register
from apps.memories.embeddings import embed_query
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.selectors import memory_ids_readable
from apps.memories.services import memory_retrieve, retrieval
from apps.memories.services.store import embed_memories, memory_prepare_many, memory_store_prepared
from apps.memories.validation import MAX_QUERY_CHARS, MemoryFilters
from apps.memories.vectors import nearest_in_scope

COSINE, FUSED, PATHFINDING, HIERARCHY = "cosine_baseline", "fuse_moe", "causal_pathfinding", "hyperbolic_entailment"
METHODS = (COSINE, FUSED, PATHFINDING, HIERARCHY)
DEFAULT_METHODS = (COSINE, FUSED, PATHFINDING)
METHOD_NAMES = {
    COSINE: "dense only: the query's MiniLM vector against the stored content vectors (pgvector cosine)",
    FUSED: "fused dense + lexical + graph retrieval (Engram's memory_retrieve; no mixture of experts, one model)",
    PATHFINDING: f"spreading activation from the best {COMPARE_SEEDS} fused hits over links (causal ones from cause "
                 f"to effect only), x weight x {COMPARE_DECAY} per hop, at most {COMPARE_HOPS} hops",
    HIERARCHY: f"expansion from the best {COMPARE_SEEDS} fused hits along hierarchical links both ways, x weight per "
               f"hop, at most {COMPARE_HOPS} hops (no hyperbolic embedding is computed)",
}
HIERARCHICAL = (MemoryLink.LinkType.HIERARCHICAL.value,)
NOT_CAUSAL = tuple(value for value in MemoryLink.LinkType.values if value != MemoryLink.LinkType.CAUSAL)
BASELINES = ("text-embedding-3-large", "text-embedding-ada-002", "none")
DEFAULT_BASELINE = "text-embedding-3-large"
DEFAULT_SEED = 20
ACTIVE = (BenchmarkRun.Status.QUEUED, BenchmarkRun.Status.RUNNING)
TASK_NAME = "cognition.benchmark_run"


# --- debug_compare_retrieval ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ranked:
    memory: Memory
    score: float


@dataclass(frozen=True)
class Comparison:
    query: str
    top_k: int
    methods: list[str]
    results: dict[str, list[Ranked]]
    latency_ms: dict[str, float]
    ground_truth: list[str] | None
    precision: dict[str, float]
    recall: dict[str, float]
    overlap: float | None
    overlap_pairs: dict[str, float]
    recommendation: str
    method_names: dict[str, str] = field(default_factory=dict)


def _clean_methods(methods) -> list[str]:
    if methods is None:
        return list(DEFAULT_METHODS)
    if isinstance(methods, str) or not isinstance(methods, (list, tuple)) or not methods:
        raise InvalidInput(f"methods must be a non-empty list of {', '.join(METHODS)}.", field="methods")
    for index, value in enumerate(methods):
        if value not in METHODS:
            raise InvalidInput(f"methods[{index}] must be one of {', '.join(METHODS)}.", field=f"methods[{index}]")
    return list(dict.fromkeys(methods))


def _clean_query(query) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query cannot be empty: give the test query to run against every method.", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query has at most {MAX_QUERY_CHARS} characters.", field="query")
    return query.strip()


def retrieval_compare(*, actor: User, query, top_k=None, methods=None, ground_truth_node_ids=None) -> Comparison:
    """Run ``query`` through each method on the caller's graph (see the module docstring)."""
    query = _clean_query(query)
    limit = COMPARE_TOP_K.clean(top_k, field="top_k")
    chosen = _clean_methods(methods)
    truth = None
    if ground_truth_node_ids is not None:
        if isinstance(ground_truth_node_ids, list) and len(ground_truth_node_ids) > COMPARE_MAX_GROUND_TRUTH:
            raise InvalidInput(f"ground_truth_node_ids has at most {COMPARE_MAX_GROUND_TRUTH} ids.",
                               field="ground_truth_node_ids")
        truth = list(dict.fromkeys(memory_ids_readable(actor=actor, memory_ids=ground_truth_node_ids,
                                                       field="ground_truth_node_ids")))
    readable = readable_cube_ids(actor=actor)
    results: dict[str, list[Ranked]] = {}
    latency: dict[str, float] = {}
    fused_cost = 0.0
    fused: list[Ranked] = []
    if FUSED in chosen or PATHFINDING in chosen or HIERARCHY in chosen:
        started = time.perf_counter()
        found = memory_retrieve(actor=actor, text=query, limit=max(limit, COMPARE_SEEDS), reinforce=False)
        fused = [Ranked(item.memory, item.score) for item in found.items]
        fused_cost = time.perf_counter() - started
    for method in chosen:
        started = time.perf_counter()
        if method == COSINE:
            ranked = _cosine(query, readable, limit)
        elif method == FUSED:
            ranked = fused[:limit]
        else:
            ranked = _spread(fused[:COMPARE_SEEDS], readable, limit, hierarchy=method == HIERARCHY)
        cost = time.perf_counter() - started + (fused_cost if method != COSINE else 0.0)
        results[method], latency[method] = ranked, round(cost * 1000, 1)
    precision, recall = {}, {}
    if truth is not None:
        for method, ranked in results.items():
            hits = len({str(entry.memory.pk) for entry in ranked} & set(truth))
            precision[method] = round(hits / len(ranked), 4) if ranked else 0.0
            recall[method] = round(hits / len(truth), 4) if truth else 0.0
    pairs = {}
    for index, first in enumerate(chosen):
        for second in chosen[index + 1:]:
            a = {entry.memory.pk for entry in results[first]}
            b = {entry.memory.pk for entry in results[second]}
            pairs[f"{first}|{second}"] = round(100 * len(a & b) / len(a | b), 1) if a | b else 100.0
    overlap = round(sum(pairs.values()) / len(pairs), 1) if pairs else None
    return Comparison(query=query, top_k=limit, methods=chosen, results=results, latency_ms=latency,
                      ground_truth=truth, precision=precision, recall=recall, overlap=overlap, overlap_pairs=pairs,
                      recommendation=_recommend(chosen, results, latency, truth, precision, recall, pairs),
                      method_names={method: METHOD_NAMES[method] for method in chosen})


def _cosine(query: str, readable: list[str], limit: int) -> list[Ranked]:
    scope = Memory.objects.filter(cube_id__in=readable, deleted_at__isnull=True)
    return _load(nearest_in_scope(scope, embed_query(query), limit=limit))


def _load(rows: list[tuple]) -> list[Ranked]:
    """(memory id, cosine distance) rows as Ranked memories, in order, score = cosine similarity."""
    memories = Memory.objects.in_bulk([memory_id for memory_id, _ in rows])
    return [Ranked(memories[memory_id], 1.0 - float(distance)) for memory_id, distance in rows
            if memory_id in memories]


def _spread(seeds: list[Ranked], readable: list[str], limit: int, *, hierarchy: bool) -> list[Ranked]:
    """Activation from the seeds over the links a method follows (the module docstring), best first."""
    if not seeds:
        return []
    best = max(seeds[0].score, 1e-9)
    sources = {str(seed.memory.pk): max(seed.score / best, 1e-6) for seed in seeds}
    rule = Rule(forward=HIERARCHICAL, backward=HIERARCHICAL) if hierarchy else Rule(forward=None, backward=NOT_CAUSAL)
    read = ball(sources=sources, readable=readable, rule=rule, hops=COMPARE_HOPS)
    decay = 1.0 if hierarchy else COMPARE_DECAY
    steps = {node: [Step(step.node, step.to, Arc(step.arc.source, step.arc.target, step.arc.link_type,
                                                 step.arc.weight * decay)) for step in out]
             for node, out in read.steps.items()}
    paths = best_paths(steps, sources, COMPARE_HOPS)
    order = sorted(paths.items(), key=lambda entry: (-entry[1].score, entry[1].hops, entry[0]))[:limit]
    memories = Memory.objects.in_bulk([node for node, _ in order])
    return [Ranked(memories[uuid.UUID(node)], path.score) for node, path in order if uuid.UUID(node) in memories]


def _recommend(chosen, results, latency, truth, precision, recall, pairs) -> str:
    if truth is not None:
        def f1(method):
            p, r = precision[method], recall[method]
            return 2 * p * r / (p + r) if p + r else 0.0

        best = max(chosen, key=lambda method: (f1(method), recall[method], -latency[method]))
        found = round(recall[best] * len(truth))
        if f1(best) == 0:
            return (f"No method found any of the {len(truth)} known-good nodes in its top results: the query and the "
                    "graph's words may differ, or the nodes are not linked to what the query finds.")
        return (f"{best} did best for this query: {found} of {len(truth)} known-good nodes (precision "
                f"{precision[best]:.2f}, recall {recall[best]:.2f}, {latency[best]:.0f} ms).")
    text = "No ground_truth_node_ids: precision and recall need them. "
    pair = f"{COSINE}|{FUSED}"
    if pair in pairs:
        extra = {entry.memory.pk for entry in results[FUSED]} - {entry.memory.pk for entry in results[COSINE]}
        if pairs[pair] > COMPARE_REDUNDANT_OVERLAP:
            text += (f"{FUSED} and {COSINE} overlap {pairs[pair]:.0f}%: for this query the fused retrieval adds little "
                     "over dense cosine.")
        else:
            text += (f"{FUSED} found {len(extra)} node(s) {COSINE} did not (overlap {pairs[pair]:.0f}%); check whether "
                     "they are the ones you wanted.")
    for method in (PATHFINDING, HIERARCHY):
        if method in results and FUSED in results:
            new = {entry.memory.pk for entry in results[method]} - {entry.memory.pk for entry in results[FUSED]}
            text += f" {method} reached {len(new)} node(s) beyond the fused hits through links."
    return text.strip()


# --- test_recall_accuracy ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Progress:
    phase: str
    stored: int
    total_items: int
    queried: int
    total_queries: int

    @property
    def percent(self) -> float:
        total = self.total_items + self.total_queries
        return round(100 * (self.stored + self.queried) / total, 1) if total else 100.0


def progress_of(run: BenchmarkRun) -> Progress:
    return Progress(run.phase, run.stored, run.total_items, run.queried, run.total_queries)


class _LeaseLost(Exception):
    """Another worker took the run over (this one was idle past the lease): stop without writing."""


def _clean_choice(value, choices: tuple[str, ...], default: str, field_name: str) -> str:
    if value is None:
        return default
    if value not in choices:
        raise InvalidInput(f"{field_name} must be one of {', '.join(choices)}.", field=field_name)
    return value


def baseline_name(baseline_model: str) -> str:
    """What the baseline really is: Engram calls no hosted embedding model, so it is the local model's cosine."""
    if baseline_model == "none":
        return ""
    return (f"{settings.ENGRAM_EMBEDDING_MODEL} cosine, dense only (the stored content vectors); "
            f"{baseline_model} is not configured in Engram, so the local model stands in")


def recall_test_start(*, actor: User, test_type=None, needle_count=None, haystack_size=None, baseline_model=None,
                      seed=None, inline_seconds: float | None = None) -> BenchmarkRun:
    """Start a run and work on it inline for ``inline_seconds`` (ENGRAM_BENCHMARK_INLINE_SECONDS when None; a page
    that shows progress itself passes 0, so only the first batch runs in its request): the finished run, or the
    running one handed to Celery. One unfinished run per user (Conflict ``benchmark_running`` with its id)."""
    test_type = _clean_choice(test_type, needles.TEST_TYPES, needles.NEEDLE_HAYSTACK, "test_type")
    count = NEEDLE_COUNT.clean(needle_count, field="needle_count")
    size = HAYSTACK_SIZE.clean(haystack_size, field="haystack_size")
    baseline = _clean_choice(baseline_model, BASELINES, DEFAULT_BASELINE, "baseline_model")
    seed = DEFAULT_SEED if seed is None else _clean_seed(seed)
    _reap_stale(actor)
    run = BenchmarkRun(owner=actor, test_type=test_type, needle_count=count, haystack_size=size,
                       baseline_model=baseline, baseline_used=baseline_name(baseline), seed=seed,
                       total_items=count + size, total_queries=count)
    run.cube_id = f"bench-{run.pk.hex}"
    try:
        with transaction.atomic():
            run.save(force_insert=True)
            cube_register(actor=actor, cube_id=run.cube_id, name=f"Benchmark run {run.pk}", hidden=True,
                          description="test_recall_accuracy's needles and haystack; deleted when the run ends.")
    except IntegrityError:
        active = BenchmarkRun.objects.filter(owner=actor, status__in=ACTIVE).first()
        raise _running(active) from None
    token = _take_lease(run)
    inline = settings.ENGRAM_BENCHMARK_INLINE_SECONDS if inline_seconds is None else inline_seconds
    deadline = time.monotonic() + inline
    if _work(run, token=token, deadline=deadline):
        run.refresh_from_db()
        return run
    with transaction.atomic():
        BenchmarkRun.objects.filter(pk=run.pk, lease=token).update(background=True, lease="", updated_at=timezone.now())
        transaction.on_commit(lambda: _send(str(run.pk)))
    run.refresh_from_db()
    return run


def _send(run_id: str) -> None:
    """cognition.benchmark_run.delay(run_id), found by name: a service never imports the tasks (an edge). A process
    whose Celery app has not imported the apps' tasks yet (a web process) imports them first."""
    if TASK_NAME not in current_app.tasks:
        current_app.loader.import_default_modules()
    current_app.tasks[TASK_NAME].delay(run_id)


def _clean_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 31:
        raise InvalidInput("seed must be a whole number from 0 to 2147483647.", field="seed")
    return seed


def _running(active: BenchmarkRun | None) -> Conflict:
    run_id = str(active.pk) if active else None
    progress = progress_of(active) if active else None
    return Conflict(
        f"Benchmark run {run_id} is still running ({progress.percent if progress else 0}% done): one run at a time.",
        code="benchmark_running",
        extra={"run_id": run_id, "suggestion": f"Poll benchmark://runs/{run_id} (or GET "
                                               f"/api/v1/cognition/benchmarks/{run_id}/) until it completes."})


def recall_test_continue(*, run_id) -> str:
    """Celery's side (cognition.benchmark_run): resume a run from its checkpoint. Idempotent by run id: a finished
    run is left as it is ("finished"), a run whose lease another live worker holds is left to it ("leased")."""
    run = BenchmarkRun.objects.filter(pk=run_id).first()
    if run is None or run.status not in ACTIVE:
        return "finished"
    token = _take_lease(run)
    if token is None:
        return "leased"
    _work(run, token=token, deadline=None)
    return "finished"


def _take_lease(run: BenchmarkRun) -> str | None:
    now, token = timezone.now(), secrets.token_hex(16)
    taken = (BenchmarkRun.objects.filter(pk=run.pk, status__in=ACTIVE)
             .filter(Q(lease="") | Q(heartbeat_at__lt=now - timedelta(seconds=BENCHMARK_LEASE_SECONDS)))
             .update(lease=token, heartbeat_at=now, status=BenchmarkRun.Status.RUNNING, updated_at=now))
    return token if taken else None


def _reap_stale(actor: User) -> None:
    """An unfinished run of the actor not touched for BENCHMARK_STALE_SECONDS lost its worker for good (a request
    that died before handing it over): failed, and its cube deleted."""
    stale = timezone.now() - timedelta(seconds=BENCHMARK_STALE_SECONDS)
    for run in BenchmarkRun.objects.filter(owner=actor, status__in=ACTIVE, updated_at__lt=stale):
        token = _take_lease(run)
        if token is not None:
            _fail(run, token, "Abandoned: no worker touched it for "
                              f"{BENCHMARK_STALE_SECONDS // 60} minutes.")


def _work(run: BenchmarkRun, *, token: str, deadline: float | None) -> bool:
    """Store, then query, batch by batch from the run's checkpoint; finish. True when the run ended (completed or
    failed), False when the deadline came first. Any failure fails the run and deletes its cube."""
    try:
        corpus = needles.generate(seed=run.seed, needle_count=run.needle_count, haystack_size=run.haystack_size,
                                  test_type=run.test_type)
        with hidden_cube_scope(run.cube_id), changes_unrecorded():
            while run.stored < run.total_items:
                _store_batch(run, corpus, token)
                if deadline is not None and time.monotonic() > deadline:
                    return False
            while run.queried < run.total_queries:
                _query_batch(run, corpus, token)
                if deadline is not None and time.monotonic() > deadline and run.queried < run.total_queries:
                    return False
            _finish(run, token)
        return True
    except _LeaseLost:
        return True
    except Exception as exc:
        message = exc.message if isinstance(exc, DomainError) else f"{type(exc).__name__}: {exc}"
        _fail(run, token, message[:1000])
        raise


def _checkpoint(run: BenchmarkRun, token: str, **fields) -> None:
    """Write the run's counters under its lease, in the caller's transaction (with the batch they count)."""
    now = timezone.now()
    if not BenchmarkRun.objects.filter(pk=run.pk, lease=token).update(heartbeat_at=now, updated_at=now, **fields):
        raise _LeaseLost()
    for name, value in fields.items():
        setattr(run, name, value)


def _store_batch(run: BenchmarkRun, corpus: needles.Corpus, token: str) -> None:
    items = corpus.items[run.stored:run.stored + BENCHMARK_STORE_BATCH]
    batch = memory_prepare_many(actor=run.owner, items=[{"content": item.content} for item in items],
                                cube_id=run.cube_id)
    vectors = embed_memories(batch.memories)  # outside the transaction: a slow model holds no lock
    with transaction.atomic():
        stored = memory_store_prepared(batch, vectors)
        found = dict(run.needles)
        for item, result in zip(items, stored):
            if item.needle is not None:
                found[str(item.needle)] = str(result.memory.pk)
        phase = BenchmarkRun.Phase.STORING if run.stored + len(items) < run.total_items else BenchmarkRun.Phase.QUERYING
        _checkpoint(run, token, stored=run.stored + len(items), needles=found, phase=phase)


def _query_batch(run: BenchmarkRun, corpus: needles.Corpus, token: str) -> None:
    scope = Memory.objects.filter(cube_id=run.cube_id, deleted_at__isnull=True)
    outcomes = []
    for query in corpus.queries[run.queried:run.queried + BENCHMARK_QUERY_BATCH]:
        needle = run.needles[str(query.needle)]
        started = time.perf_counter()
        # The package's own retrieval, unannounced: the benchmark's queries are no query of its owner's, and must
        # not wake their dream (apps/memories/queries.py).
        fused = retrieval.memory_retrieve(actor=run.owner, text=query.text, filters=MemoryFilters(cube_id=run.cube_id),
                                          limit=BENCHMARK_TOP_K, reinforce=False)
        fused_ms = (time.perf_counter() - started) * 1000
        fused_ids = [str(item.memory.pk) for item in fused.items]
        outcome = {"needle": query.needle, "type": query.test_type, "fused_rank": _rank(fused_ids, needle),
                   "fused_hits": len(fused_ids), "fused_ms": round(fused_ms, 2), "fused_drift": _drift(fused_ids, needle)}
        if run.baseline_used:
            dense = [str(memory_id) for memory_id, _ in nearest_in_scope(scope, embed_query(query.text),
                                                                          limit=BENCHMARK_TOP_K)]
            outcome.update(baseline_rank=_rank(dense, needle), baseline_drift=_drift(dense, needle))
        outcomes.append(outcome)
    with transaction.atomic():
        _checkpoint(run, token, outcomes=[*run.outcomes, *outcomes], queried=run.queried + len(outcomes))


def _rank(ids: list[str], needle: str) -> int | None:
    return ids.index(needle) + 1 if needle in ids else None


def _drift(ids: list[str], needle: str) -> float:
    """The cosine distance between the first result and the needle (0 when the needle is first, 1 with no result)."""
    if not ids:
        return 1.0
    if ids[0] == needle:
        return 0.0
    table = MemoryVector._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT a.embedding <=> b.embedding FROM {table} a, {table} b "
                       "WHERE a.memory_id = %s AND b.memory_id = %s", [ids[0], needle])
        row = cursor.fetchone()
    return round(float(row[0]), 4) if row else 1.0


def _finish(run: BenchmarkRun, token: str) -> None:
    report = recall_report(run)
    with transaction.atomic():
        _delete_cube(run)
        _checkpoint(run, token, status=BenchmarkRun.Status.COMPLETED, phase=BenchmarkRun.Phase.DONE, report=report,
                    lease="", finished_at=timezone.now())


def _fail(run: BenchmarkRun, token: str, message: str) -> None:
    """Fail the run and delete its cube, whatever state either is in; never raises (it runs on the way out of an
    error, which must stay the one reported)."""
    try:
        with transaction.atomic(), hidden_cube_scope(run.cube_id):
            _delete_cube(run)
            BenchmarkRun.objects.filter(pk=run.pk, lease=token).update(
                status=BenchmarkRun.Status.FAILED, error=message, lease="", finished_at=timezone.now(),
                updated_at=timezone.now())
    except Exception:  # the database itself failed: the stale-run reaper retries later
        pass


def _delete_cube(run: BenchmarkRun) -> None:
    if Cube.objects.filter(pk=run.cube_id, owner=run.owner, hidden=True).exists():
        cube_delete(actor=run.owner, cube_id=run.cube_id)


def _share(outcomes: list[dict], key: str) -> float:
    return round(sum(1 for outcome in outcomes if outcome.get(key) == 1) / len(outcomes), 4) if outcomes else 0.0


def _p95(values: list[float]) -> int:
    """The 95th percentile by nearest rank, in whole milliseconds (rounded up)."""
    if not values:
        return 0
    ordered = sorted(values)
    return math.ceil(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)])


def recall_report(run: BenchmarkRun) -> dict:
    """The seed's answer from the run's outcomes (the module docstring defines each figure)."""
    outcomes = run.outcomes
    fused = _share(outcomes, "fused_rank")
    found = sum(1 for outcome in outcomes if outcome["fused_rank"] == 1)
    false_positives = sum(1 for outcome in outcomes if outcome["fused_rank"] != 1 and outcome["fused_hits"])
    drift = round(sum(outcome["fused_drift"] for outcome in outcomes) / len(outcomes), 4) if outcomes else 0.0
    by_type = {}
    for kind in dict.fromkeys(outcome["type"] for outcome in outcomes):
        group = [outcome for outcome in outcomes if outcome["type"] == kind]
        by_type[kind] = {"queries": len(group), "fuse_moe_accuracy": _share(group, "fused_rank")}
        if run.baseline_used:
            by_type[kind]["baseline_accuracy"] = _share(group, "baseline_rank")
    details = {
        "needles_found": found, "false_positives": false_positives, "semantic_drift": drift, "queries": len(outcomes),
        f"fuse_moe_recall_at_{BENCHMARK_TOP_K}": round(sum(1 for outcome in outcomes if outcome["fused_rank"])
                                                       / len(outcomes), 4) if outcomes else 0.0,
        "by_type": by_type, "seed": run.seed, "needle_count": run.needle_count, "haystack_size": run.haystack_size,
    }
    report = {"fuse_moe_accuracy": fused, "p95_latency_ms": _p95([outcome["fused_ms"] for outcome in outcomes]),
              "test_details": details, "baseline_used": run.baseline_used or None}
    if run.baseline_used:
        baseline = _share(outcomes, "baseline_rank")
        report["baseline_accuracy"] = baseline
        details["baseline_needles_found"] = sum(1 for outcome in outcomes if outcome.get("baseline_rank") == 1)
        details["baseline_semantic_drift"] = round(
            sum(outcome["baseline_drift"] for outcome in outcomes) / len(outcomes), 4) if outcomes else 0.0
        if baseline > 0:
            report["improvement_percent"] = round(100 * (fused - baseline) / baseline, 1)
    report["recommendation"] = _verdict(report, run)
    return report


def _verdict(report: dict, run: BenchmarkRun) -> str:
    fused = report["fuse_moe_accuracy"]
    text = (f"Fused retrieval ranked the needle first for {report['test_details']['needles_found']} of "
            f"{report['test_details']['queries']} paraphrased queries ({fused:.0%}) among {run.haystack_size} "
            f"haystack items; p95 {report['p95_latency_ms']} ms per query.")
    if "baseline_accuracy" in report:
        baseline = report["baseline_accuracy"]
        if fused > baseline:
            text += f" Dense cosine alone found {baseline:.0%}: fusing lexical and graph signals helps here."
        elif fused < baseline:
            text += (f" Dense cosine alone found {baseline:.0%}, more than fused retrieval: check the lexical "
                     "weights (docs/retrieval.md).")
        else:
            text += f" Dense cosine alone found the same share ({baseline:.0%}): fusion adds nothing on this corpus."
    if fused < 0.5:
        text += " Below half: retrieval misses most paraphrases; review the embedding model and the lexical weights."
    return text
