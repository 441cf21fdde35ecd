"""Context Graph's vocabularies, limits and thresholds, defined once: the models, services, MCP input schemas,
REST serializers and forms all read them from here (docs/context_graph.md gives each with its reason)."""
from __future__ import annotations

from django.db import models

from apps.core.limits import Interval, Range


class Modality(models.TextChoices):
    TEXT = "text", "Text"
    IMAGE = "image", "Image"
    AUDIO = "audio", "Audio"
    VIDEO = "video", "Video"


class Domain(models.TextChoices):
    CODE = "code", "Code"
    MEDICAL = "medical", "Medical"
    LEGAL = "legal", "Legal"
    CREATIVE = "creative", "Creative"
    RESEARCH = "research", "Research"
    GENERAL = "general", "General"


class Johari(models.TextChoices):
    OPEN = "open", "Open"
    BLIND = "blind", "Blind"
    HIDDEN = "hidden", "Hidden"
    UNKNOWN = "unknown", "Unknown"


class Privacy(models.TextChoices):
    PRIVATE = "private", "Private"
    TEAM = "team", "Team"
    SHARED = "shared", "Shared"


class Stage(models.TextChoices):
    INFANCY = "infancy", "Infancy"
    GROWTH = "growth", "Growth"
    MATURITY = "maturity", "Maturity"


# Undo snapshots and tombstones are kept this long; then cognition.purge_expired removes them for good.
UNDO_RETENTION_DAYS = 30
SCRATCHPAD_TTL_MINUTES = 60

# Surprise (delta S) compares a new item with this many of the session's latest items and the nearest live node.
RECENT_ITEMS = 50
# Entropy is the exponentially weighted mean of delta S with this weight on the newest item.
ENTROPY_SMOOTHING = 0.3

# --- store_memory (the seed's bounds) ---------------------------------------------------------------------------
# Text content, in characters: past the model's window it is embedded as the mean of its windows' vectors.
STORE_CONTENT_MAX_CHARS = 65_536
# Binary content (content_base64, data_uri), decoded; kept as a file beside the node.
MEDIA_MAX_BYTES = 10 * 1024 * 1024
RATIONALE_MIN_CHARS = 10
RATIONALE_MAX_CHARS = 500
# Nodes a store may link to by hand (link_to).
LINK_TO_MAX = 50

# --- steering reward (services/store.py gives the formula) ------------------------------------------------------
# A stored node this close (cosine of content vectors) to a live node of the caller is a near-duplicate.
NEAR_DUPLICATE_COSINE = 0.90
NEAR_DUPLICATE_PENALTY = 0.4
# A rationale this far from its content (cosine) does not explain it.
RATIONALE_MIN_COSINE = 0.2
RATIONALE_MISMATCH_PENALTY = 0.3
# A rationale needs this many content words (not stopwords) to say why.
RATIONALE_MIN_WORDS = 3
THIN_RATIONALE_PENALTY = 0.5

# --- navigation tools -------------------------------------------------------------------------------------------
# The MCP schemas read these ranges (apps/core/limits.Range): the seed's bounds, and a minimum where it has none.
SEARCH_TOP_K = Range(1, 100, default=10)
NEIGHBORHOOD_HOPS = Range(1, 3, default=2)
NEIGHBORHOOD_NODES = Range(5, 50, default=20)
# Without focal_node_id, a neighbourhood starts from at most this many of the session's last activated nodes.
NEIGHBORHOOD_SEEDS = 5
RECENT_LOOKBACK_MINUTES = Range(1, 1440, default=60)
RECENT_LIMIT = Range(1, 50, default=10)
# Agent ids a perspective lock may name (each list).
PERSPECTIVE_MAX_AGENTS = 50

# temporary_scratchpad: a thought's length, its tags, and the importance above which a dream commits it.
SCRATCHPAD_CONTENT_CHARS = 4096
SCRATCHPAD_TAGS = 5
SCRATCHPAD_AUTO_COMMIT = Interval(0.3, 0.9)
SCRATCHPAD_AUTO_COMMIT_DEFAULT = 0.6
# A retrieve shows this many items, newest kept (items_count still counts them all).
SCRATCHPAD_ITEMS_SHOWN = 100

# get_node_lineage's depth (changes back) and get_system_logs' page.
LINEAGE_DEPTH = Range(1, 20, default=5)
LOG_LIMIT = Range(1, 100, default=20)
# get_system_logs looks back this far when `since` is left out, and never further than the longest relative span.
LOG_DEFAULT_SINCE = "-24h"
LOG_MAX_LOOKBACK_DAYS = 3650

# get_memetic_status: how many concepts and open curation tasks it shows.
TOP_CONCEPTS = 5
CURATION_TASKS_SHOWN = 20
# A dream replays and links a user's nodes: it has something to work on from two live nodes the user may write.
DREAM_MIN_NODES = 2

# epistemic_action: two recently activated nodes this close in meaning (cosine) but in different components of the
# active subgraph are told twice or in conflict; the closest such pair is worth a question.
AMBIGUOUS_PAIR_COSINE = 0.55
# Pairs tried before giving up on the pair question (each may have been rejected from the inbox before).
AMBIGUOUS_PAIRS_TRIED = 10

# The visualize:// resources draw at most this many nodes (the strongest links first).
MAP_NODES = 40

# Curation (merge_concepts, annotate_node, search_tombstones).
MERGE_MAX_SOURCES = 50
ANNOTATION_MAX_CHARS = 1024
TOMBSTONE_TOP_K = Range(1, 100, default=10)
# Two agents whose nodes' mean vectors are less similar than this see the world differently: merging their nodes
# would lose one perspective, so merge_concepts links them instead (unless force_merge).
PRIORS_MIN_COSINE = 0.7


# --- directed reasoning: query_causal, find_causal_path, expand_causal_path, entailment_query ---------------------
# The seed's bounds (find_causal_path, entailment_query) and issue 20's (expand_causal_path).
CAUSAL_PATH_HOPS = Range(1, 6, default=4)
EXPAND_HOPS = Range(1, 6, default=3)
EXPAND_MIN_WEIGHT = Interval(0.0, 1.0)
EXPAND_MIN_WEIGHT_DEFAULT = 0.1
ENTAILMENT_DEPTH = Range(1, 10, default=3)
# query_causal takes no hop limit: each of its walks (up to the causes, down to the effects) stops at this many links.
CAUSAL_QUERY_HOPS = 6
# A walk reaches at most this many nodes, best first, and reads at most this many links a hop (the strongest):
# the bound on work whatever the graph's size; an answer that hit it says truncated.
REASONING_MAX_NODES = 2000
REASONING_LINKS_PER_HOP = 10_000
# find_causal_path's alternatives (Yen's k loopless paths after the best one).
CAUSAL_ALTERNATIVES = 3
# Results a reasoning answer lists at most, strongest first (query_causal's effects, expand_causal_path's paths).
REASONING_RESULTS = 50
# A concept given as text matches a node when retrieval finds one this close in meaning (cosine, as search's own
# threshold) or sharing a word with it; among the best CONCEPT_CANDIDATES the most relevant wins, and when none
# qualifies the error names the nearest CONCEPT_NEAREST_SHOWN.
CONCEPT_MIN_SIMILARITY = 0.45
CONCEPT_CANDIDATES = 5
CONCEPT_NEAREST_SHOWN = 3


# --- inject_context ----------------------------------------------------------------------------------------------
class Priority(models.TextChoices):
    LOW = "low", "Low"
    NORMAL = "normal", "Normal"
    HIGH = "high", "High"
    CRITICAL = "critical", "Critical"


# How many memories retrieval ranks for each priority, before the 1-hop expansion adds at most as many neighbours.
CONTEXT_POOL = {Priority.LOW: 5, Priority.NORMAL: 10, Priority.HIGH: 20, Priority.CRITICAL: 40}


class DistillationMode(models.TextChoices):
    AUTO = "auto", "Auto"
    RAW = "raw", "Raw"
    NARRATIVE = "narrative", "Narrative"
    STRUCTURED = "structured", "Structured"
    CODE_FOCUSED = "code_focused", "Code focused"


class ContextMetadata(models.TextChoices):
    CAUSAL_LINKS = "causal_links", "Causal links"
    ENTAILMENT_CONES = "entailment_cones", "Entailment cones"
    NEIGHBORHOOD = "neighborhood", "Neighbourhood"
    CONFLICTS = "conflicts", "Conflicts"


CONTEXT_QUERY_CHARS = 4096
CONTEXT_TOKENS = Range(100, 8192, default=2048)
VERBOSITY = Range(0, 2, default=1)
# auto leaves a context raw up to this many tokens (and within max_tokens); above it, it is distilled (structured).
AUTO_RAW_TOKENS = 2048
# A distillation keeps at most this share of the raw context's tokens (and never more than max_tokens).
DISTILLED_SHARE = 0.5
# Passages compared with the query per call, from the best-ranked nodes first: each is embedded (a few ms apiece on
# a CPU), so a critical pool of long nodes does not embed thousands; the rest rank by their node's score alone.
DISTILL_SENTENCES = 96
# Two retrieved nodes this similar (cosine of their vectors) conflict when no path of CONFLICT_HOPS links joins them,
# or when their texts clash (a negation in one only, different numbers after the same word).
CONFLICT_COSINE = 0.8
CONFLICT_HOPS = 2
# Conflicting pairs reported (and given an inbox task) per call, the most similar first.
CONFLICT_PAIRS = 5
# Above this entropy a retrieval's quality is doubtful: inject_context warns (tool gating).
GATING_ENTROPY = 0.8
# The bundled mini-graphs beside the neighbourhood: causal chains and IS-A cones around the retrieved nodes.
CAUSAL_HOPS = 3
CAUSAL_PATHS = 10
CONE_DEPTH = 2
# A citation tag names a node by the first hex digits of its id: [node_0123456789ab].
CITATION_HEX = 12
CITATIONS_PER_CALL = Range(1, 10)


# --- check_adversarial (services/immune.py) and critique_context (services/critique.py) --------------------------
# embedding_anomaly: a text whose vector lies further from the centroid of the user's live nodes than their mean
# cosine distance to it plus ANOMALY_SD standard deviations. Measured over the latest ANOMALY_SAMPLE nodes (bounded
# work on every store), and only from ANOMALY_MIN_NODES: fewer say nothing about where the graph lies. The deviation
# counts as at least ANOMALY_MIN_SD, so that a graph of near-identical nodes does not flag everything new.
ANOMALY_SD = 3.0
ANOMALY_MIN_NODES = 30
ANOMALY_SAMPLE = 2000
ANOMALY_MIN_SD = 0.05
# content_misalignment: a given embedding whose cosine to the content's own is below this describes other content.
MISALIGNMENT_COSINE = 0.4
# A side of a causal claim names a node when their cosine reaches this (the clause resolution).
CLAIM_RESOLVE_COSINE = 0.6
# circular_logic walks directed causal edges this many hops and nodes at most; a text's first CLAIMS_CHECKED claims.
CYCLE_HOPS = 6
CYCLE_NODES = 2000
CLAIMS_CHECKED = 20
# A given embedding has at most this many numbers in the schema (the service wants exactly the model's dimensions).
EMBEDDING_MAX_ITEMS = 4096

# critique_context
CRITIQUE_SUMMARY_MIN_CHARS = 20
CRITIQUE_SUMMARY_MAX_CHARS = 2000
CONTRADICTION_THRESHOLD = Interval(0.3, 0.9)
CONTRADICTION_THRESHOLD_DEFAULT = 0.5
CRITIQUE_FOCAL_NODES = 20
# Each sentence is compared with its CRITIQUE_NEIGHBOURS nearest nodes (and the focal nodes) that are at least
# CRITIQUE_RELATED_COSINE alike: below it a sentence and a node are not about the same thing.
CRITIQUE_SENTENCES = 40
CRITIQUE_NEIGHBOURS = 5
CRITIQUE_RELATED_COSINE = 0.5
# A sentence near a node that carries a correction, which it does not itself clash with: the correction may already
# be what the sentence says, so its score is the cosine times this.
CORRECTION_UNCONFIRMED = 0.7
CRITIQUE_FINDINGS = 50


# --- planning and benchmarks: generate_search_plan, reflect_on_memory, debug_compare_retrieval, test_recall_accuracy
# A goal's length (the seed's generate_search_plan bounds; issue 20 gives reflect_on_memory the same).
GOAL_MIN_CHARS = 10
GOAL_MAX_CHARS = 500
PLAN_QUERIES = Range(1, 7, default=3)
# The goal's own pool: its best PLAN_POOL hits by fused retrieval. A planned query's expected_recall is the share of
# that pool it retrieves in its own best PLAN_POOL; the graph's words come from the pool's best PLAN_WORD_HITS.
PLAN_POOL = 10
PLAN_WORD_HITS = 5
# Words a planned query adds from the graph, at most, beside the goal's own.
PLAN_GRAPH_WORDS = 4
REFLECT_STEPS = Range(1, 5, default=3)
# reflect_on_memory's thresholds (issue 20's, fixed whatever the stage): entropy above one asks a clarifying
# question, coherence below the other consolidates.
REFLECT_ENTROPY_HIGH = 0.6
REFLECT_COHERENCE_LOW = 0.4
COMPARE_TOP_K = Range(1, 100, default=10)
COMPARE_MAX_GROUND_TRUTH = 100
# The graph methods start from the best COMPARE_SEEDS fused hits and walk COMPARE_HOPS links; spreading activation
# multiplies by the link's weight and by COMPARE_DECAY at each hop.
COMPARE_SEEDS = 3
COMPARE_HOPS = 2
COMPARE_DECAY = 0.5
# Two methods whose results overlap more than this (percent, mean pairwise Jaccard) add nothing to each other.
COMPARE_REDUNDANT_OVERLAP = 90.0
NEEDLE_COUNT = Range(5, 100, default=20)
HAYSTACK_SIZE = Range(100, 10_000, default=1000)
# A run works inline this long (seconds; ENGRAM_BENCHMARK_INLINE_SECONDS), then hands the rest to Celery and answers
# with its id and progress; items are stored and queries answered in batches, each committed with the checkpoint.
BENCHMARK_STORE_BATCH = 200
BENCHMARK_QUERY_BATCH = 20
# Retrieval depth of a benchmark query: a needle counts as found at rank 1, recall is read at this depth.
BENCHMARK_TOP_K = 10
# A lease not renewed for this long is taken over (its worker died); an unfinished run not touched for
# BENCHMARK_STALE_SECONDS is failed and its cube deleted when its owner starts another.
BENCHMARK_LEASE_SECONDS = 60
BENCHMARK_STALE_SECONDS = 600
