"""The gardener's numbers, written once (docs/context_graph.md, "Gardener", gives each with its reason)."""
from __future__ import annotations

# --- activity: an EWMA of the owner's queries, one step per beat tick -------------------------------------------
TICK_SECONDS = 30
# activity <- ALPHA x min(1, queries in the tick / QUERIES_FOR_FULL) + (1 - ALPHA) x activity
ALPHA = 0.3
QUERIES_FOR_FULL = 5
# Below this the user is idle.
IDLE_ACTIVITY = 0.15
# A tick that comes sooner than this after the last one (a second beat, a manual run) leaves the EWMA alone.
MIN_TICK_SECONDS = TICK_SECONDS / 2
# After a silence (beat down), at most this many missed ticks are replayed, the counted queries spread over them.
MAX_CATCH_UP_TICKS = 40

# --- when a cycle runs --------------------------------------------------------------------------------------------
IDLE_SECONDS_FOR_CYCLE = 2 * 60
SECONDS_BETWEEN_CYCLES = 5 * 60
# A cycle tends a window of at most this many of the owner's live nodes (the next ones by id after the last window's,
# so that successive cycles go round the whole graph): its cost stays bounded whatever the graph's size. Read at call
# time (limits.MAX_NODES), so a test may lower it.
MAX_NODES = 1000
# Auto-dream: idle this long, and no dream run or triggered since the user went idle.
IDLE_SECONDS_FOR_DREAM = 10 * 60
# A cycle's lease (wall-clock) lapses when its heartbeat is older than this: the next run takes over.
LEASE_IDLE_SECONDS = 120

# --- a cycle: bounded batches, each one transaction ---------------------------------------------------------------
# Items (links, nodes, cycles) a batch takes at most.
BATCH_ITEMS = 200
# Seconds of a step's own work a batch aims at, as a dream's (services/dream/limits.py): a query of the owner stops
# the cycle before its next batch, so within about one short batch. One item first, then as many as the step's last
# batch's time per item fits, at most twice the last batch's, never above BATCH_ITEMS.
BATCH_SECONDS = 0.05
# Prune: edges this weak, idle (last activated, else made) this long.
PRUNE_WEIGHT = 0.1
PRUNE_IDLE_HOURS = 24
# A causal cycle with a node this important opens a semantic_cancer task.
CANCER_IMPORTANCE = 0.7
# Causal cycles are looked for from the window's nodes along causal links, this many links deep (so cycles of up to
# this many links are found), reading at most CAUSAL_SCOPE_NODES nodes around the window.
CAUSAL_HOPS = 8
CAUSAL_SCOPE_NODES = 10_000
# Scaling: above this importance variance, importance' = 0.5 + k (importance - 0.5), k = sqrt(target / variance);
# the variance is the whole graph's, read once a round (its first window), and k applied window by window.
SCALING_VARIANCE = 0.15
SCALING_TARGET_VARIANCE = 0.10
SCALING_CENTRE = 0.5
# Glymphatic clearance: orphan nodes (no link either way) older than this, never accessed, this unimportant.
ORPHAN_DAYS = 30
ORPHAN_IMPORTANCE = 0.1

STEPS = ("prune", "dedupe", "cycles", "glymphatic", "scaling")
