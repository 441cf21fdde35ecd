"""REST shapes of memories. Requests declare types and ranges (for clear 400s and the OpenAPI schema);
the services own every other rule, so REST, MCP and the dashboard refuse the same things."""
import functools

from django.conf import settings
from rest_framework import serializers

from apps.core.aliases import Aliases
from apps.core.api.serializers import (
    AtLeastOneFieldMixin, JSONCharField, JSONFloatField, JSONIntegerField, PageQuerySerializer, StrictSerializer,
)
from apps.core.limits import BATCH_SIZE, OFFSET, PAGE_LIMIT, UNIT
from apps.cubes.api.serializers import CubeIdField
from apps.memories.models import SECTORS, Memory, MemoryLink, Sector
from apps.memories.services.retrieval.scoring import WITH_QUERY
from apps.memories.validation import MAX_CONTEXT_CHARS, MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_LIST_ITEMS, MAX_QUERY_CHARS

SECTOR_HELP = f"One of {', '.join(SECTORS)}."
CONTENT_HELP = f"The memory's text: not empty, at most {settings.ENGRAM_MAX_CONTENT_CHARS} characters."
# Blank and too-long content are judged by the service (apps/memories/validation.py), whose messages name the
# setting; max_length puts the same bound in the schema.
CONTENT_LENGTH = {"allow_blank": True, "trim_whitespace": False, "max_length": settings.ENGRAM_MAX_CONTENT_CHARS,
                  "error_messages": {"max_length": "Content is longer than {max_length} characters, this server's "
                                                   "ENGRAM_MAX_CONTENT_CHARS: shorten it or split it into memories."}}
# The memory services' argument names -> the names of these requests; the rest are the same.
MEMORY_ALIASES = Aliases({"cube_id": "cube", "date_start": "date_range.start", "date_end": "date_range.end"})
SCORE_FIELDS = ["score", "relevance", "dense", "lexical", "recency", "link_weight"]
SEARCH_HIT_FIELDS = [*SCORE_FIELDS, "highlight", "matched_terms"]


class SectorField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", SECTOR_HELP)
        super().__init__(choices=Sector.choices, error_messages={
            "invalid_choice": f'Invalid sector "{{input}}": use one of {", ".join(SECTORS)}.',
        }, **kwargs)


def label_list_field(help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=JSONCharField(max_length=MAX_LABEL_CHARS, allow_blank=True), max_length=MAX_LIST_ITEMS,
        required=False, help_text=f"{help_text} At most {MAX_LIST_ITEMS}, each up to {MAX_LABEL_CHARS} characters.",
    )


def unit_field(help_text: str, **kwargs) -> JSONFloatField:
    return JSONFloatField(**UNIT.drf(), required=False, help_text=f"{help_text} From {UNIT.low:g} to {UNIT.high:g}.",
                          **kwargs)


# --- Responses -----------------------------------------------------------------------------------

class MemorySerializer(serializers.ModelSerializer):
    cube = serializers.CharField(source="cube_id", help_text="The id of the cube the memory belongs to.")

    class Meta:
        model = Memory
        fields = [
            "id", "cube", "kind", "content", "primary_sector", "importance", "salience", "strength", "decay_rate",
            "access_count", "last_accessed_at", "session_id", "agent_id", "keywords", "tags", "category",
            "context", "metadata", "created_at", "updated_at", "deleted_at",
        ]
        read_only_fields = fields


@functools.cache
def shared_memory_serializer() -> MemorySerializer:
    """One MemorySerializer for every hit of every response: building a ModelSerializer's fields (model
    introspection, 21 fields) is most of its cost, and this one reads nothing from a request's context,
    so its bound fields can serve every thread."""
    return MemorySerializer()


class MemoryListItemSerializer(MemorySerializer):
    link_count = serializers.IntegerField(help_text="Links of the memory, both directions.")

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "link_count"]
        read_only_fields = fields


class MemoryBriefSerializer(serializers.ModelSerializer):
    cube = serializers.CharField(source="cube_id")

    class Meta:
        model = Memory
        fields = ["id", "cube", "content", "primary_sector", "deleted_at"]
        read_only_fields = fields


class MemoryLinkSerializer(serializers.ModelSerializer):
    source = MemoryBriefSerializer()
    target = MemoryBriefSerializer()

    class Meta:
        model = MemoryLink
        fields = ["id", "link_type", "weight", "traversal_count", "created_at", "source", "target"]
        read_only_fields = fields


class ScoredMemorySerializer(MemorySerializer):
    """A memory with the scores retrieval gave it (a memories.services.retrieval.ScoredMemory)."""

    score = serializers.FloatField(help_text=f"{WITH_QUERY}.")
    relevance = serializers.FloatField(help_text="Fused dense and lexical similarity to the text, plus its boosts "
                                       "(docs/retrieval.md): a speaker label or a date the text names; with retrieve, "
                                       "a best hit's words and session neighbours.")
    dense = serializers.FloatField(help_text="Best cosine similarity over the requested sectors.")
    lexical = serializers.FloatField(help_text="Full-text rank, relative to the best match of this query.")
    recency = serializers.FloatField()
    link_weight = serializers.FloatField(help_text="Mean weight of the memory's links.")

    score_fields = SCORE_FIELDS

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, *SCORE_FIELDS]
        read_only_fields = fields

    def to_representation(self, item):
        data = shared_memory_serializer().to_representation(item.memory)
        data.update({name: getattr(item, name) for name in self.score_fields})
        return data


class SearchHitSerializer(ScoredMemorySerializer):
    highlight = serializers.CharField(help_text="The content, HTML-escaped, with <b> around the matches.")
    matched_terms = serializers.ListField(child=serializers.CharField())

    score_fields = SEARCH_HIT_FIELDS

    class Meta(ScoredMemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, *SEARCH_HIT_FIELDS]
        read_only_fields = fields


class RetrieveResponseSerializer(serializers.Serializer):
    results = ScoredMemorySerializer(many=True)
    total_count = serializers.IntegerField(help_text="Memories matching the filters, before limit and offset.")


class SearchResponseSerializer(RetrieveResponseSerializer):
    results = SearchHitSerializer(many=True)
    search_type = serializers.ChoiceField(
        choices=["full-text", "hybrid", "metadata"],
        help_text="full-text for boolean queries (AND, OR, NOT, quotes), hybrid for plain words, "
                  "metadata without text.",
    )
    total_count_exact = serializers.BooleanField(
        help_text="false when more than 2,500 memories match: total_count is then PostgreSQL's estimate "
                  "(counting every match of common words would cost most of a search's time).",
    )
    did_you_mean = serializers.CharField(
        allow_null=True,
        help_text="The query with each word no memory holds replaced by the nearest word of your own memories "
                  "(plain-word searches include those matches already; boolean ones do not); null when every "
                  "word was found.",
    )


# --- Requests ------------------------------------------------------------------------------------

class MemoryFieldsSerializer(StrictSerializer):
    """The fields that storing and updating share."""

    content = JSONCharField(required=False, **CONTENT_LENGTH, help_text=CONTENT_HELP)
    primary_sector = SectorField(required=False)
    keywords = label_list_field("Keywords; extracted from the content when left out.")
    tags = label_list_field("Tags.")
    category = JSONCharField(max_length=MAX_LABEL_CHARS, required=False, allow_blank=True)
    context = JSONCharField(max_length=MAX_CONTEXT_CHARS, required=False, allow_blank=True)
    importance = unit_field("How much the memory matters.")
    metadata = serializers.DictField(required=False, help_text="Free JSON object, kept as given.")


class MemoryStoreSerializer(MemoryFieldsSerializer):
    content = JSONCharField(**CONTENT_LENGTH, help_text=CONTENT_HELP)
    primary_sector = SectorField(default="semantic")
    cube = CubeIdField(required=False, help_text="A cube you may write to; your personal cube when left out.")
    session_id = JSONCharField(max_length=MAX_ID_CHARS, required=False, allow_blank=True)
    agent_id = JSONCharField(max_length=MAX_ID_CHARS, required=False, allow_blank=True)


class MemoryBatchItemSerializer(MemoryFieldsSerializer):
    """One memory of a batch store: the fields of a single store but the cube, which is the batch's."""

    content = JSONCharField(**CONTENT_LENGTH, help_text=CONTENT_HELP)
    primary_sector = SectorField(default="semantic")
    session_id = JSONCharField(max_length=MAX_ID_CHARS, required=False, allow_blank=True)
    agent_id = JSONCharField(max_length=MAX_ID_CHARS, required=False, allow_blank=True)


class MemoryBatchStoreSerializer(StrictSerializer):
    cube = CubeIdField(required=False, help_text="A cube you may write to; your personal cube when left out.")
    memories = serializers.ListField(
        child=MemoryBatchItemSerializer(), min_length=BATCH_SIZE.low, max_length=BATCH_SIZE.high,
        help_text=f"The memories to store ({BATCH_SIZE}), all or none.",
        error_messages={"min_length": f"Send {BATCH_SIZE} memories.", "max_length": f"Send {BATCH_SIZE} memories."},
    )


class MemoryBatchResponseSerializer(serializers.Serializer):
    memories = MemorySerializer(many=True, help_text="The stored memories, in the order sent.")
    links_created = serializers.ListField(child=serializers.IntegerField(), help_text="Links each memory got.")


class MemoryUpdateSerializer(AtLeastOneFieldMixin, MemoryFieldsSerializer):
    salience = unit_field("How much the memory stands out.")
    strength = unit_field("How firmly the memory is held; decays over time, access reinforces it.")


class DateRangeSerializer(StrictSerializer):
    start = serializers.DateTimeField(required=False, allow_null=True, help_text="ISO 8601; created at or after.")
    end = serializers.DateTimeField(required=False, allow_null=True, help_text="ISO 8601; created at or before.")


class MemoryQuerySerializer(StrictSerializer):
    """The body of retrieve and search."""

    text = JSONCharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=MAX_QUERY_CHARS,
        help_text="What to look for. Search also understands AND, OR, NOT, -word and \"quoted phrases\".",
    )
    sectors = serializers.ListField(child=SectorField(), allow_empty=False, required=False,
                                    help_text="Sectors whose vectors are compared; all when left out.")
    primary_sector = SectorField(required=False, help_text="Only memories of this primary sector.")
    min_strength = unit_field("Only memories at least this strong.")
    min_salience = unit_field("Only memories at least this salient.")
    date_range = DateRangeSerializer(required=False, help_text="Only memories created in this range.")
    keywords = label_list_field("Only memories with any of these keywords.")
    tags = label_list_field("Only memories with all of these tags.")
    category = JSONCharField(max_length=MAX_LABEL_CHARS, required=False, allow_blank=True)
    cube = CubeIdField(required=False, help_text="Only memories of this cube.")
    session_id = JSONCharField(max_length=MAX_ID_CHARS, required=False, allow_blank=True)
    limit = JSONIntegerField(**PAGE_LIMIT.drf(), default=PAGE_LIMIT.default)
    offset = JSONIntegerField(**OFFSET.drf(), default=OFFSET.default)


class MemoryListQuerySerializer(PageQuerySerializer):
    cube = CubeIdField(required=False, help_text="Only memories of this cube.")
    deleted = serializers.ChoiceField(
        choices=["exclude", "include", "only"], default="exclude",
        help_text="Soft-deleted memories: exclude (default), include, or only them.",
    )
    sector = SectorField(required=False, help_text="Only memories of this primary sector.")


class MemoryDeleteQuerySerializer(StrictSerializer):
    hard = serializers.BooleanField(
        default=False, help_text="true removes the memory with its vectors and links for good; "
                                 "by default it is soft-deleted and can be restored.",
    )


class MemoryLinksQuerySerializer(PageQuerySerializer):
    direction = serializers.ChoiceField(choices=["both", "outgoing", "incoming"], default="both")
