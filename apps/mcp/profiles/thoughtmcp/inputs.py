"""ThoughtMCP's tool input models, exactly as its seed (seeds/000, "Memory Tools", "Reasoning Tools",
"Metacognitive Tools") documents them: names, types, enums, ranges and descriptions."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema

from apps.core.aliases import Aliases
from apps.core.limits import DECOMPOSE_DEPTH, OFFSET, PAGE_LIMIT, PARALLEL_TIMEOUT_MS, UNIT
from apps.mcp.schema import SeedModel
from apps.memories.models import SECTORS

# Sector names are checked by the memory services, whose message is the seed's "Invalid sector".
Sector = Annotated[str, WithJsonSchema({"type": "string", "enum": SECTORS})]


DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


USER_ID = "User ID for memory isolation (required)"


OWNER_ID = "User ID for ownership verification (required)"


SECTORS_TO_SEARCH = "Memory sectors to search (default: all sectors)"


# The memory services' and acting_user's argument names -> ThoughtMCP's, where they differ: errors name what the
# caller sent.
MEMORY_ALIASES = Aliases({
    "user_id": "userId", "primary_sector": "primarySector", "session_id": "sessionId", "memory_id": "memoryId",
    "min_strength": "minStrength", "min_salience": "minSalience", "date_start": "dateRange.start",
    "date_end": "dateRange.end", "date_range": "dateRange", "keywords": "metadata.keywords",
    "tags": "metadata.tags", "category": "metadata.category", "context": "metadata.context",
    "importance": "metadata.importance",
})

# The analysis services' argument names -> ThoughtMCP's reasoning tools', where they differ.
REASONING_ALIASES = Aliases({
    "preferred_framework": "preferredFramework", "timeout_ms": "timeout", "max_depth": "maxDepth",
    "monitor_continuously": "monitorContinuously", "include_discrete": "includeDiscrete",
    "include_confidence": "includeConfidence", "include_bias": "includeBias", "include_emotion": "includeEmotion",
})


class StoreMetadata(SeedModel):
    keywords: list[str] | None = Field(None, description="Keywords for search (auto-extracted if not provided)")
    tags: list[str] | None = Field(None, description="Tags for categorization")
    category: str | None = Field(None, description="Category for grouping")
    context: str | None = Field(None, description="Additional context information")
    importance: float | None = Field(None, **UNIT.schema(), description="Importance score (0-1, default 0.5)")


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
    min_strength: float | None = Field(None, **UNIT.schema(), description="Minimum memory strength (0-1)")
    min_salience: float | None = Field(None, **UNIT.schema(), description="Minimum salience score (0-1)")
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
    importance: float | None = Field(None, **UNIT.schema())


class UpdateMemoryInput(SeedModel):
    memory_id: str = Field(description="Memory ID to update (required)")
    user_id: str = Field(description=OWNER_ID)
    content: str | None = Field(None, description="New content (triggers embedding regeneration)")
    strength: float | None = Field(None, **UNIT.schema(), description="New strength value (0-1)")
    salience: float | None = Field(None, **UNIT.schema(), description="New salience value (0-1)")
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
    timeout: float | None = Field(None, **PARALLEL_TIMEOUT_MS.schema(),
                                  description="Total timeout in milliseconds (default: 30000ms, max: 60000ms)")
    context: ContextInput | None = None


class DecomposeProblemInput(SeedModel):
    problem: str = Field(description="Problem to decompose (required)")
    max_depth: float | None = Field(None, **DECOMPOSE_DEPTH.schema(), description="Maximum decomposition depth (default: 3, max: 5)")
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
