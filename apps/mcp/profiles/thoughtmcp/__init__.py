"""The ThoughtMCP profile: its five memory tools and its eight reasoning and metacognitive tools, with
input schemas exactly as its seed documents them (seeds/000, "Memory Tools", "Reasoning Tools",
"Metacognitive Tools"). Descriptions, names, types, enums and ranges are the seed's; the delete default
differs, as the delete_memory description says, and retrieve_memories names Engram's composite weights
(docs/retrieval.md). The reasoning tools store nothing and act for
the token's user (they have no userId)."""
from __future__ import annotations

from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.profiles.thoughtmcp import memories, reasoning
from apps.mcp.profiles.thoughtmcp.envelope import ThoughtMcpEnvelope
from apps.mcp.profiles.thoughtmcp.inputs import (
    MEMORY_ALIASES, REASONING_ALIASES, AnalyzeReasoningInput, AnalyzeSystematicallyInput, AssessConfidenceInput,
    DecomposeProblemInput, DeleteMemoryInput, DetectBiasInput, DetectEmotionInput, RetrieveMemoriesInput,
    SearchMemoriesInput, StoreMemoryInput, ThinkInput, ThinkParallelInput, UpdateMemoryInput,
)
from apps.memories.services.retrieval.scoring import WITH_QUERY


def emotion_components(params: DetectEmotionInput) -> tuple[str, ...]:
    return ("emotionAnalyzer",) + (("discreteEmotionClassifier",) if params.include_discrete is not False else ())


def analysis_components(params: AnalyzeReasoningInput) -> tuple[str, ...]:
    """The assessors that ran besides the quality analysis itself, as the seed's example lists them (confidence and
    bias included: confidenceAssessor, biasDetector); the quality analyzer alone when none was asked for."""
    included = (("confidenceAssessor", params.include_confidence is not False),
                ("biasDetector", params.include_bias is not False), ("emotionAnalyzer", bool(params.include_emotion)))
    return tuple(name for name, used in included if used) or ("reasoningAnalyzer",)


PROFILE = Profile(
    name="thoughtmcp",
    title="ThoughtMCP",
    description="ThoughtMCP's memory tools (five-sector memories, waypoint links, composite-scored retrieval "
                "and boolean full-text search) and its reasoning and metacognitive tools.",
    envelope=ThoughtMcpEnvelope(),
    tools=(
        ToolSpec(
            name="store_memory",
            description="Store a new memory with automatic embedding generation and waypoint graph connections. "
                        "Generates five-sector embeddings (episodic, semantic, procedural, emotional, reflective) "
                        "and creates 1-3 waypoint connections to similar existing memories.",
            input_model=StoreMemoryInput,
            adapter=memories.store_memory,
            scope=WRITE,
            components_used=("memoryRepository", "embeddingEngine", "graphBuilder"),
            acts_for_field="user_id",
            aliases=MEMORY_ALIASES,
        ),
        ToolSpec(
            name="retrieve_memories",
            description="Retrieve memories using composite scoring with vector similarity, metadata filtering, "
                        f"and pagination: {WITH_QUERY} (relevance fuses vector and keyword similarity; "
                        "ThoughtMCP's 0.6×similarity + 0.2×salience + 0.1×recency + 0.1×linkWeight, refitted). "
                        "Supports filtering by sectors, strength, salience, date range, and metadata.",
            input_model=RetrieveMemoriesInput,
            adapter=memories.retrieve_memories,
            scope=READ,
            components_used=("memoryRepository", "embeddingEngine", "compositeScorer"),
            acts_for_field="user_id",
            aliases=MEMORY_ALIASES,
        ),
        ToolSpec(
            name="update_memory",
            description="Update an existing memory with selective field updates. Content changes trigger automatic "
                        "embedding regeneration and waypoint connection updates. Supports updating strength, "
                        "salience, and metadata.",
            input_model=UpdateMemoryInput,
            adapter=memories.update_memory,
            scope=WRITE,
            components_used=("memoryRepository", "embeddingEngine", "graphBuilder"),
            acts_for_field="user_id",
            aliases=MEMORY_ALIASES,
        ),
        ToolSpec(
            name="delete_memory",
            description="Delete a memory. Soft delete sets strength to 0 and keeps everything, so the memory can "
                        "be restored; hard delete removes the memory with its embeddings and connections. "
                        "Engram deletes softly when `soft` is omitted (deletes stay recoverable unless you ask "
                        "otherwise); pass soft: false to remove the memory for good.",
            input_model=DeleteMemoryInput,
            adapter=memories.delete_memory,
            scope=WRITE,
            components_used=("memoryRepository",),
            acts_for_field="user_id",
            aliases=MEMORY_ALIASES,
        ),
        ToolSpec(
            name="search_memories",
            description="Advanced memory search combining full-text search, vector similarity, and metadata "
                        "filtering. PostgreSQL full-text search with boolean operators (AND, OR, NOT) and "
                        "\"phrase matching\"; returns ranked results with composite scores.",
            input_model=SearchMemoriesInput,
            adapter=memories.search_memories,
            scope=READ,
            components_used=("memoryRepository", "searchEngine", "embeddingEngine"),
            acts_for_field="user_id",
            aliases=MEMORY_ALIASES,
        ),
        ToolSpec(
            name="think",
            description="Perform reasoning with specified mode (analytical, creative, critical, synthetic, parallel). "
                        "Integrates all reasoning components including parallel streams, confidence assessment, and "
                        "bias detection. Supports single-stream or parallel multi-stream reasoning. Engram draws on "
                        "your memories, decisions and sharp edges as evidence, and uses a language model when one is "
                        "configured or your client offers sampling (the answer's `method` says which ran).",
            input_model=ThinkInput,
            adapter=reasoning.think,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=("reasoningOrchestrator", "memoryRepository"),
        ),
        ToolSpec(
            name="analyze_systematically",
            description="Analyze problem using systematic thinking framework with dynamic framework selection. "
                        "Automatically selects optimal framework (Scientific Method, Design Thinking, Systems "
                        "Thinking, etc.) based on problem characteristics. Supports preferred framework override.",
            input_model=AnalyzeSystematicallyInput,
            adapter=reasoning.analyze_systematically,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=("frameworkSelector", "frameworkRegistry", "memoryRepository"),
        ),
        ToolSpec(
            name="think_parallel",
            description="Execute parallel reasoning streams with coordination and synthesis. Runs all four "
                        "reasoning streams (analytical, creative, critical, synthetic) concurrently with "
                        "synchronization at 25%, 50%, 75% completion. Results are synthesized with conflict "
                        "preservation and insight attribution.",
            input_model=ThinkParallelInput,
            adapter=reasoning.think_parallel,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=("parallelReasoningOrchestrator", "resultSynthesizer", "memoryRepository"),
        ),
        ToolSpec(
            name="decompose_problem",
            description="Decompose problem into hierarchical sub-problems with dependency mapping. Breaks complex "
                        "problems into manageable components and identifies execution order using topological "
                        "sorting. Supports configurable decomposition depth.",
            input_model=DecomposeProblemInput,
            adapter=reasoning.decompose_problem,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=("problemDecomposer", "memoryRepository"),
        ),
        ToolSpec(
            name="assess_confidence",
            description="Assess confidence in reasoning with multi-dimensional analysis. Evaluates evidence "
                        "quality, reasoning coherence, completeness, uncertainty level, and bias freedom. Provides "
                        "interpretation, warnings, and actionable recommendations.",
            input_model=AssessConfidenceInput,
            adapter=reasoning.assess_confidence,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=("confidenceAssessor",),
        ),
        ToolSpec(
            name="detect_bias",
            description="Detect cognitive biases in reasoning with real-time monitoring. Identifies 8 bias types: "
                        "confirmation, anchoring, availability, recency, representativeness, framing, sunk cost, "
                        "attribution. Provides severity assessment and correction strategies. (Engram keeps no "
                        "background monitor: monitoringActive is always false, and the answer says so.)",
            input_model=DetectBiasInput,
            adapter=reasoning.detect_bias,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=("biasDetector",),
        ),
        ToolSpec(
            name="detect_emotion",
            description="Detect emotions using Circumplex model and discrete classification. Analyzes text using "
                        "the Circumplex model (valence, arousal, dominance) and classifies 11 discrete emotions: "
                        "joy, sadness, anger, fear, disgust, surprise, pride, shame, guilt, gratitude, awe.",
            input_model=DetectEmotionInput,
            adapter=reasoning.detect_emotion,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=emotion_components,
        ),
        ToolSpec(
            name="analyze_reasoning",
            description="Analyze reasoning quality with comprehensive assessment. Evaluates coherence, "
                        "completeness, logical validity, and evidence support. Identifies strengths, weaknesses, "
                        "and provides improvement recommendations. Optionally includes confidence assessment, bias "
                        "detection, and emotion analysis.",
            input_model=AnalyzeReasoningInput,
            adapter=reasoning.analyze_reasoning,
            scope=READ,
            aliases=REASONING_ALIASES,
            components_used=analysis_components,
        ),
    ),
)
