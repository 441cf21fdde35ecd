"""The ThoughtMCP profile: its five memory tools and its eight reasoning and metacognitive tools, with
input schemas exactly as its seed documents them (seeds/000, "Memory Tools", "Reasoning Tools",
"Metacognitive Tools"). Descriptions, names, types, enums and ranges are the seed's; only the delete
default differs, as the delete_memory description says. The reasoning tools store nothing and act for
the token's user (they have no userId)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema

from apps.core.limits import OFFSET, PAGE_LIMIT
from apps.mcp.auth import READ, WRITE
from apps.mcp.envelopes import ThoughtMcpEnvelope
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import SeedModel
from apps.memories import mcp_tools
from apps.memories.models import SECTORS
from apps.reasoning import mcp_tools as reasoning_tools

# Sector names are checked by the memory services, whose message is the seed's "Invalid sector".
Sector = Annotated[str, WithJsonSchema({"type": "string", "enum": SECTORS})]
DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]

USER_ID = "User ID for memory isolation (required)"
OWNER_ID = "User ID for ownership verification (required)"
SECTORS_TO_SEARCH = "Memory sectors to search (default: all sectors)"
UNIT = {"ge": 0, "le": 1}


class StoreMetadata(SeedModel):
    keywords: list[str] | None = Field(None, description="Keywords for search (auto-extracted if not provided)")
    tags: list[str] | None = Field(None, description="Tags for categorization")
    category: str | None = Field(None, description="Category for grouping")
    context: str | None = Field(None, description="Additional context information")
    importance: float | None = Field(None, **UNIT, description="Importance score (0-1, default 0.5)")


class StoreMemoryInput(SeedModel):
    content: str = Field(description="Memory content to store (required, non-empty)")
    user_id: str = Field(description=USER_ID)
    session_id: str = Field(description="Session ID for context tracking (required)")
    primary_sector: Sector = Field(description="Primary memory sector")
    metadata: StoreMetadata | None = Field(None, description="Optional metadata for classification and search")


class DateRange(SeedModel):
    start: DateTime | None = None
    end: DateTime | None = None


class MetadataFilter(SeedModel):
    keywords: list[str] | None = None
    tags: list[str] | None = None
    category: str | None = None


class RetrieveMemoriesInput(SeedModel):
    user_id: str = Field(description=USER_ID)
    text: str | None = Field(None, description="Search query text for vector similarity (optional)")
    sectors: list[Sector] | None = Field(None, description=SECTORS_TO_SEARCH)
    primary_sector: Sector | None = Field(None, description="Filter by primary sector")
    min_strength: float | None = Field(None, **UNIT, description="Minimum memory strength (0-1)")
    min_salience: float | None = Field(None, **UNIT, description="Minimum salience score (0-1)")
    date_range: DateRange | None = Field(None, description="Filter by creation date range (ISO 8601)")
    metadata: MetadataFilter | None = Field(None, description="Metadata filters")
    limit: float | None = Field(None, **PAGE_LIMIT.schema(), description="Maximum results to return (default 10, max 100)")
    offset: float | None = Field(None, **OFFSET.schema(), description="Pagination offset (default 0)")


class SearchMemoriesInput(RetrieveMemoriesInput):
    text: str | None = Field(
        None,
        description="Full-text search query with boolean operators (AND, OR, NOT) and phrase matching",
    )
    date_range: DateRange | None = Field(None, description="Filter by creation date range")


class MetadataUpdate(SeedModel):
    keywords: list[str] | None = None
    tags: list[str] | None = None
    category: str | None = None
    context: str | None = None
    importance: float | None = Field(None, **UNIT)


class UpdateMemoryInput(SeedModel):
    memory_id: str = Field(description="Memory ID to update (required)")
    user_id: str = Field(description=OWNER_ID)
    content: str | None = Field(None, description="New content (triggers embedding regeneration)")
    strength: float | None = Field(None, **UNIT, description="New strength value (0-1)")
    salience: float | None = Field(None, **UNIT, description="New salience value (0-1)")
    metadata: MetadataUpdate | None = Field(None, description="Metadata updates")


class DeleteMemoryInput(SeedModel):
    memory_id: str = Field(description="Memory ID to delete (required)")
    user_id: str = Field(description=OWNER_ID)
    soft: bool | None = Field(
        None,
        description="Soft delete (true) sets strength=0, hard delete (false) removes record (default: false)",
    )


class ContextInput(SeedModel):
    background: str | None = None
    constraints: list[str] | None = None
    goals: list[str] | None = None


class DescribedContextInput(SeedModel):
    background: str | None = Field(None, description="Background information")
    constraints: list[str] | None = Field(None, description="Constraints to consider")
    goals: list[str] | None = Field(None, description="Goals to achieve")


class DecompositionContextInput(SeedModel):
    background: str | None = None
    constraints: list[str] | None = None


class ThinkInput(SeedModel):
    problem: str = Field(description="Problem or question to reason about (required)")
    mode: Literal["analytical", "creative", "critical", "synthetic", "parallel"] = Field(
        description="Reasoning mode: analytical (logical), creative (innovative), critical (skeptical), synthetic "
                    "(holistic), parallel (all modes simultaneously)")
    context: DescribedContextInput | None = Field(None, description="Additional context for reasoning (optional)")


class AnalyzeSystematicallyInput(SeedModel):
    problem: str = Field(description="Problem to analyze systematically (required)")
    preferred_framework: Literal[
        "scientific-method", "design-thinking", "systems-thinking", "critical-thinking", "creative-problem-solving",
        "root-cause-analysis", "first-principles", "scenario-planning",
    ] | None = Field(None, description="Preferred framework (optional, overrides automatic selection)")
    context: ContextInput | None = None


class ThinkParallelInput(SeedModel):
    problem: str = Field(description="Problem to analyze with parallel reasoning (required)")
    timeout: float | None = Field(None, ge=1000, le=60000,
                                  description="Total timeout in milliseconds (default: 30000ms, max: 60000ms)")
    context: ContextInput | None = None


class DecomposeProblemInput(SeedModel):
    problem: str = Field(description="Problem to decompose (required)")
    max_depth: float | None = Field(None, ge=1, le=5, description="Maximum decomposition depth (default: 3, max: 5)")
    context: DecompositionContextInput | None = None


class AssessConfidenceInput(SeedModel):
    reasoning: str = Field(description="Reasoning to assess (required)")
    evidence: list[str] | None = Field(None, description="Supporting evidence (optional)")
    context: str | None = Field(None, description="Context for assessment (optional)")


class DetectBiasInput(SeedModel):
    reasoning: str = Field(description="Reasoning to analyze for biases (required)")
    context: str | None = Field(None, description="Context for bias detection (optional)")
    monitor_continuously: bool | None = Field(None, description="Enable continuous monitoring (default: false)")


class DetectEmotionInput(SeedModel):
    text: str = Field(description="Text to analyze for emotions (required)")
    include_discrete: bool | None = Field(None, description="Include discrete emotion classification (default: true)")
    context: str | None = Field(None, description="Context for emotion detection (optional)")


class AnalyzeReasoningInput(SeedModel):
    reasoning: str = Field(description="Reasoning to analyze (required)")
    context: str | None = Field(None, description="Context for analysis (optional)")
    include_confidence: bool | None = Field(None, description="Include confidence assessment (default: true)")
    include_bias: bool | None = Field(None, description="Include bias detection (default: true)")
    include_emotion: bool | None = Field(None, description="Include emotion analysis (default: false)")


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
            adapter=mcp_tools.store_memory,
            scope=WRITE,
            components_used=("memoryRepository", "embeddingEngine", "graphBuilder"),
            acts_for_field="user_id",
        ),
        ToolSpec(
            name="retrieve_memories",
            description="Retrieve memories using composite scoring with vector similarity, metadata filtering, "
                        "and pagination: 0.6×similarity + 0.2×salience + 0.1×recency + 0.1×linkWeight. Supports "
                        "filtering by sectors, strength, salience, date range, and metadata.",
            input_model=RetrieveMemoriesInput,
            adapter=mcp_tools.retrieve_memories,
            scope=READ,
            components_used=("memoryRepository", "embeddingEngine", "compositeScorer"),
            acts_for_field="user_id",
        ),
        ToolSpec(
            name="update_memory",
            description="Update an existing memory with selective field updates. Content changes trigger automatic "
                        "embedding regeneration and waypoint connection updates. Supports updating strength, "
                        "salience, and metadata.",
            input_model=UpdateMemoryInput,
            adapter=mcp_tools.update_memory,
            scope=WRITE,
            components_used=("memoryRepository", "embeddingEngine", "graphBuilder"),
            acts_for_field="user_id",
        ),
        ToolSpec(
            name="delete_memory",
            description="Delete a memory. Soft delete sets strength to 0 and keeps everything, so the memory can "
                        "be restored; hard delete removes the memory with its embeddings and connections. "
                        "Engram deletes softly when `soft` is omitted (deletes stay recoverable unless you ask "
                        "otherwise); pass soft: false to remove the memory for good.",
            input_model=DeleteMemoryInput,
            adapter=mcp_tools.delete_memory,
            scope=WRITE,
            components_used=("memoryRepository",),
            acts_for_field="user_id",
        ),
        ToolSpec(
            name="search_memories",
            description="Advanced memory search combining full-text search, vector similarity, and metadata "
                        "filtering. PostgreSQL full-text search with boolean operators (AND, OR, NOT) and "
                        "\"phrase matching\"; returns ranked results with composite scores.",
            input_model=SearchMemoriesInput,
            adapter=mcp_tools.search_memories,
            scope=READ,
            components_used=("memoryRepository", "searchEngine", "embeddingEngine"),
            acts_for_field="user_id",
        ),
        ToolSpec(
            name="think",
            description="Perform reasoning with specified mode (analytical, creative, critical, synthetic, parallel). "
                        "Integrates all reasoning components including parallel streams, confidence assessment, and "
                        "bias detection. Supports single-stream or parallel multi-stream reasoning. Engram draws on "
                        "your memories, decisions and sharp edges as evidence, and uses a language model when one is "
                        "configured or your client offers sampling (the answer's `method` says which ran).",
            input_model=ThinkInput,
            adapter=reasoning_tools.think,
            scope=READ,
            components_used=("reasoningOrchestrator", "memoryRepository"),
        ),
        ToolSpec(
            name="analyze_systematically",
            description="Analyze problem using systematic thinking framework with dynamic framework selection. "
                        "Automatically selects optimal framework (Scientific Method, Design Thinking, Systems "
                        "Thinking, etc.) based on problem characteristics. Supports preferred framework override.",
            input_model=AnalyzeSystematicallyInput,
            adapter=reasoning_tools.analyze_systematically,
            scope=READ,
            components_used=("frameworkSelector", "frameworkRegistry", "memoryRepository"),
        ),
        ToolSpec(
            name="think_parallel",
            description="Execute parallel reasoning streams with coordination and synthesis. Runs all four "
                        "reasoning streams (analytical, creative, critical, synthetic) concurrently with "
                        "synchronization at 25%, 50%, 75% completion. Results are synthesized with conflict "
                        "preservation and insight attribution.",
            input_model=ThinkParallelInput,
            adapter=reasoning_tools.think_parallel,
            scope=READ,
            components_used=("parallelReasoningOrchestrator", "resultSynthesizer", "memoryRepository"),
        ),
        ToolSpec(
            name="decompose_problem",
            description="Decompose problem into hierarchical sub-problems with dependency mapping. Breaks complex "
                        "problems into manageable components and identifies execution order using topological "
                        "sorting. Supports configurable decomposition depth.",
            input_model=DecomposeProblemInput,
            adapter=reasoning_tools.decompose_problem,
            scope=READ,
            components_used=("problemDecomposer", "memoryRepository"),
        ),
        ToolSpec(
            name="assess_confidence",
            description="Assess confidence in reasoning with multi-dimensional analysis. Evaluates evidence "
                        "quality, reasoning coherence, completeness, uncertainty level, and bias freedom. Provides "
                        "interpretation, warnings, and actionable recommendations.",
            input_model=AssessConfidenceInput,
            adapter=reasoning_tools.assess_confidence,
            scope=READ,
            components_used=("confidenceAssessor",),
        ),
        ToolSpec(
            name="detect_bias",
            description="Detect cognitive biases in reasoning with real-time monitoring. Identifies 8 bias types: "
                        "confirmation, anchoring, availability, recency, representativeness, framing, sunk cost, "
                        "attribution. Provides severity assessment and correction strategies. (Engram keeps no "
                        "background monitor: monitoringActive is always false, and the answer says so.)",
            input_model=DetectBiasInput,
            adapter=reasoning_tools.detect_bias,
            scope=READ,
            components_used=("biasDetector",),
        ),
        ToolSpec(
            name="detect_emotion",
            description="Detect emotions using Circumplex model and discrete classification. Analyzes text using "
                        "the Circumplex model (valence, arousal, dominance) and classifies 11 discrete emotions: "
                        "joy, sadness, anger, fear, disgust, surprise, pride, shame, guilt, gratitude, awe.",
            input_model=DetectEmotionInput,
            adapter=reasoning_tools.detect_emotion,
            scope=READ,
            components_used=emotion_components,
        ),
        ToolSpec(
            name="analyze_reasoning",
            description="Analyze reasoning quality with comprehensive assessment. Evaluates coherence, "
                        "completeness, logical validity, and evidence support. Identifies strengths, weaknesses, "
                        "and provides improvement recommendations. Optionally includes confidence assessment, bias "
                        "detection, and emotion analysis.",
            input_model=AnalyzeReasoningInput,
            adapter=reasoning_tools.analyze_reasoning,
            scope=READ,
            components_used=analysis_components,
        ),
    ),
)
