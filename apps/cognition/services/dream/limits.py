"""The dream's numbers, written once: the tool's ranges (the seed's), the budget, and the rules of each phase
(docs/context_graph.md, "Dream", gives each with its reason)."""
from __future__ import annotations

from apps.core.limits import Range

# --- budget: a dream does bounded work and stops, it never sleeps ----------------------------------------------
DREAM_MINUTES = Range(1, 10, default=5)
SYNTHETIC_QUERIES = Range(10, 500, default=100)
# Work items (session items replayed, pairs linked, nodes compared, walks) per batch: one transaction each.
BATCH_ITEMS = Range(1, 200, default=200)
# Seconds of a phase's own work a batch aims at: the run reads a query's wake mark between batches, so a batch this
# short (plus its commit) keeps the stop inside Context Graph's 100 ms gate. Each phase's next batch is sized from its
# last batch's time per item: one item first, at most twice the last batch's, never above BATCH_ITEMS (the budget's).
BATCH_SECONDS = 0.05
# A running dream's dream.progress goes out at most this often, and on each phase's first and last batch: its
# batches are ~50 ms, and each event is a stored row that catching-up clients replay.
PROGRESS_SECONDS = 1.0
# Work items a run does per trigger before it stops (interrupted, resumable by the next trigger).
MAX_ITEMS = Range(1, 1_000_000, default=100_000)
# A running dream whose heartbeat is older than this has lost its worker: the next worker takes it over.
LEASE_IDLE_SECONDS = 60

# --- NREM: Hebbian replay of what the owner's sessions activated together (REFERENCE.md) -------------------------
# w' = clamp(w (1 - HEBB_DECAY) + eta a_i a_j, WEIGHT_FLOOR, WEIGHT_CEILING); an edge at the floor is pruned.
HEBB_DECAY = 0.001
WEIGHT_FLOOR = 0.05
WEIGHT_CEILING = 1.0
# eta = 10 x acetylcholine, the owner's level when the run is made (services/neuromod.py; 0.01 at rest).
# A pair co-activated this often in the replayed items, with no edge either way, gets a semantic edge of this weight.
CO_ACTIVATIONS_TO_LINK = 3
CO_ACTIVATION_WEIGHT = 0.3
# At most this many such pairs a run (kept in the run's list, so a resumed run links the same ones).
LINK_PAIRS_MAX = 20_000
# Near-duplicates (cosine of content vectors, memory and summary nodes of one cube): merged above MERGE_COSINE,
# proposed as potential_merge tasks from TASK_COSINE up.
MERGE_COSINE = 0.97
TASK_COSINE = 0.90
# Neighbours compared per node when looking for near-duplicates.
DEDUPE_NEIGHBOURS = 5

# Clusters: components of the kNN graph (each node's CLUSTER_NEIGHBOURS nearest in its cube, joined at cosine >=
# CLUSTER_COSINE) of at least CLUSTER_MIN_NODES memory or summary nodes get an extractive summary node, each member
# linked to it by a hierarchical edge (weight: the member's cosine to the summary). A dream summary whose members
# overlap a new cluster by SUMMARY_OVERLAP (Jaccard) or more is rewritten in place instead.
CLUSTER_COSINE = 0.75
CLUSTER_NEIGHBOURS = 5
CLUSTER_MIN_NODES = 3
SUMMARY_OVERLAP = 0.6
# The summary's text: the members' best sentences (distill.py, structured), at most this many tokens.
SUMMARY_TOKENS = 256
# At most this many kNN pairs a run, as found (a pair found from both its ends counts twice), kept in the run's list
# until the clusters are drawn from them.
CLUSTER_PAIRS_MAX = 100_000
# The memory metadata key that marks a dream's summary (its run and member count).
SUMMARY_MARK = "dream_summary"

# --- REM: random walks from sparse regions, each ending in a real (unreinforced) retrieval -----------------------
# Walks start at the owner's nodes with the fewest links (this many, fixed when the phase begins).
REM_START_NODES = 500
REM_HOPS = 5
# A step picks a link with probability proportional to exp(weight / temperature): at 2.0, nearly uniform.
REM_TEMPERATURE = 2.0
# The synthetic query is the walk's last node's first characters; the retrieval's best hits are judged.
REM_QUERY_CHARS = 500
REM_HITS = 5
# A hit this similar (dense cosine) with no path of REM_PATH_HOPS links or fewer is a leap: a semantic edge.
REM_LEAP_COSINE = 0.7
REM_LEAP_WEIGHT = 0.3
REM_PATH_HOPS = 3
# A best hit scoring under this: the region is thin (a BlindSpot).
REM_THIN_SCORE = 0.35
# A path of REM_SHORTCUT_HOPS links or more walked REM_SHORTCUT_WALKS times gets a shortcut edge of weight
# min(REM_SHORTCUT_MAX, REM_SHORTCUT_FACTOR x the product of its weights).
REM_SHORTCUT_HOPS = 3
REM_SHORTCUT_WALKS = 5
REM_SHORTCUT_FACTOR = 1.5
REM_SHORTCUT_MAX = 0.9

NREM_STEPS = ("nrem_replay", "nrem_link", "nrem_dedupe", "nrem_summarise", "nrem_commit")
PHASES = {
    "nrem": NREM_STEPS,
    "rem": ("rem",),
    "full_cycle": (*NREM_STEPS, "rem"),
}
STEPS = PHASES["full_cycle"]
