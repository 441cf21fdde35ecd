"""REST shapes of reasoning: thought sessions and thoughts, notebooks and cells, mental models, and the eight
analyses.

Requests are snake_case like the rest of the API and strict (unknown keys and wrong JSON types are refused,
naming the field). The services own every other rule, so REST, MCP and the dashboard refuse the same things.
The analyses answer with the ThoughtMCP seed's own data objects (camelCase), the same objects its MCP tools
return, so that a client can move between the two edges without translating.
"""
from rest_framework import serializers

from apps.core.aliases import Aliases
from apps.core.api.serializers import (
    JSONBooleanField, JSONCharField, JSONIntegerField, PageQuerySerializer, StrictSerializer,
)
from apps.core.limits import CELL_POSITION, DECOMPOSE_DEPTH, PARALLEL_TIMEOUT_MS, THOUGHT_NUMBER
from apps.reasoning.analysis.frameworks import FRAMEWORKS
from apps.reasoning.analysis.think import MODES
from apps.reasoning.models import Cell, Notebook, Thought, ThoughtSession
from apps.reasoning.notebook_templates import TEMPLATES

MAX_TITLE_CHARS = 300
MAX_TAG_CHARS = 100
MAX_TAGS = 20
MAX_TEXT_CHARS = 20000
THINK_MODES = list(MODES)
FRAMEWORK_IDS = list(FRAMEWORKS)


def _texts() -> serializers.ListField:
    return serializers.ListField(child=JSONCharField(max_length=MAX_TEXT_CHARS), required=False, max_length=100)


# --- Thought sessions ----------------------------------------------------------------------------

class DeletedQuerySerializer(PageQuerySerializer):
    deleted = serializers.ChoiceField(choices=["exclude", "include"], default="exclude",
                                      help_text="include: soft-deleted ones too.")


class SessionListQuerySerializer(DeletedQuerySerializer):
    q = serializers.CharField(required=False, max_length=MAX_TITLE_CHARS, help_text="Words of the title.")
    tag = serializers.CharField(required=False, max_length=MAX_TAG_CHARS, help_text="Only sessions with this tag.")


class ThoughtSessionSerializer(serializers.ModelSerializer):
    thought_count = serializers.IntegerField(read_only=True, help_text="Thoughts in the session.")

    class Meta:
        model = ThoughtSession
        fields = ["id", "title", "tags", "thought_count", "created_at", "updated_at", "completed_at", "deleted_at"]


class ThoughtSerializer(serializers.ModelSerializer):
    class Meta:
        model = Thought
        fields = ["id", "thought_number", "total_thoughts", "thought", "next_thought_needed", "is_revision",
                  "revises_thought", "branch_from_thought", "branch_id", "needs_more_thoughts", "agent_id",
                  "content_hash", "parent_hash", "created_at", "node"]


class ThoughtSessionDetailSerializer(serializers.Serializer):
    session = ThoughtSessionSerializer()
    thoughts = ThoughtSerializer(many=True)


class ThoughtCreateSerializer(StrictSerializer):
    """Thoughtbox's thought, in snake_case. Without ``session_id`` the thought goes to your current session
    over REST, and thought 1 (or any thought when you have none) starts a new one."""

    session_id = serializers.UUIDField(required=False, help_text="Add to this session of yours.")
    thought = JSONCharField(max_length=MAX_TEXT_CHARS, help_text="The thinking step.")
    thought_number = JSONIntegerField(**THOUGHT_NUMBER.drf(), help_text="Position in the sequence, from 1.")
    total_thoughts = JSONIntegerField(**THOUGHT_NUMBER.drf(), help_text="Estimated total thoughts.")
    next_thought_needed = JSONBooleanField(help_text="Whether another thought follows.")
    is_revision = JSONBooleanField(required=False, default=False)
    revises_thought = JSONIntegerField(required=False, **THOUGHT_NUMBER.drf(), help_text="The thought number revised.")
    branch_from_thought = JSONIntegerField(required=False, **THOUGHT_NUMBER.drf(),
                                           help_text="The thought number forked from.")
    branch_id = JSONCharField(required=False, max_length=100, help_text="The branch's name.")
    needs_more_thoughts = JSONBooleanField(required=False, default=False)
    session_title = JSONCharField(required=False, max_length=MAX_TITLE_CHARS,
                                  help_text="Title of a session this thought creates.")
    session_tags = serializers.ListField(child=JSONCharField(max_length=MAX_TAG_CHARS), required=False,
                                         max_length=MAX_TAGS, help_text="Tags of a session this thought creates.")


class ThoughtAddedSerializer(serializers.Serializer):
    session = ThoughtSessionSerializer()
    thought = ThoughtSerializer()
    session_created = serializers.BooleanField()
    history_length = serializers.IntegerField(help_text="Thoughts in the session now.")
    branches = serializers.ListField(child=serializers.CharField())
    is_final = serializers.BooleanField(help_text="This thought said no further thought is needed.")


class ChainBreakSerializer(serializers.Serializer):
    thoughtId = serializers.CharField()  # noqa: N815 (the export format's names)
    thoughtNumber = serializers.IntegerField()  # noqa: N815
    reason = serializers.CharField()


class ChainVerificationSerializer(serializers.Serializer):
    valid = serializers.BooleanField(help_text="Every hash and parent link recomputes.")
    checked = serializers.IntegerField(help_text="Thoughts checked.")
    broken = ChainBreakSerializer(many=True)


# --- Notebooks -----------------------------------------------------------------------------------

class NotebookCreateSerializer(StrictSerializer):
    title = JSONCharField(max_length=MAX_TITLE_CHARS)
    language = serializers.ChoiceField(choices=Notebook.Language.choices, default=Notebook.Language.JAVASCRIPT)
    template = serializers.ChoiceField(
        choices=list(TEMPLATES), required=False, allow_blank=True, help_text="Starting cells from a template.",
        error_messages={"invalid_choice": f"Unknown template '{{input}}'; the templates are: {', '.join(TEMPLATES)}."})


class NotebookLoadSerializer(StrictSerializer):
    text = JSONCharField(max_length=1_000_000, help_text="A notebook in the .src.md format.")


class NotebookSerializer(serializers.ModelSerializer):
    cell_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Notebook
        fields = ["id", "title", "language", "template", "dependencies", "cell_count", "created_at", "updated_at",
                  "deleted_at"]


class CellSerializer(serializers.ModelSerializer):
    class Meta:
        model = Cell
        fields = ["id", "position", "cell_type", "content", "filename", "status", "stdout", "stderr", "exit_code",
                  "duration_ms", "executed_at", "created_at", "updated_at"]


class NotebookDetailSerializer(serializers.Serializer):
    notebook = NotebookSerializer()
    cells = CellSerializer(many=True)


class CellCreateSerializer(StrictSerializer):
    cell_type = serializers.ChoiceField(choices=Cell.CellType.choices)
    content = JSONCharField(max_length=MAX_TEXT_CHARS * 5, allow_blank=True)
    filename = JSONCharField(required=False, max_length=200, help_text="Required for code cells, e.g. main.ts.")
    position = JSONIntegerField(required=False, **CELL_POSITION.drf(),
                                help_text="Where to insert it, 0 (first) to the number of cells (default: at the end).")


class CellUpdateSerializer(StrictSerializer):
    content = JSONCharField(required=False, max_length=MAX_TEXT_CHARS * 5, allow_blank=True)
    filename = JSONCharField(required=False, max_length=200)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give content, filename or both.")
        return attrs


class DependenciesSerializer(StrictSerializer):
    dependencies = serializers.ListField(child=JSONCharField(max_length=214), min_length=1, max_length=50,
                                         help_text='npm packages, optionally with a version: ["lodash@4"].')


class NotebookExportSerializer(serializers.Serializer):
    filename = serializers.CharField()
    text = serializers.CharField(help_text="The notebook in the .src.md format.")


# --- Mental models -------------------------------------------------------------------------------

class ModelListQuerySerializer(StrictSerializer):
    tag = serializers.CharField(required=False, max_length=MAX_TAG_CHARS, help_text="Only models with this tag.")


# --- Analyses ------------------------------------------------------------------------------------

# The reasoning services' argument names -> the names of these requests; the rest are the same.
REASONING_ALIASES = Aliases({"timeout_ms": "timeout"})


class ProblemContextSerializer(StrictSerializer):
    background = JSONCharField(required=False, max_length=MAX_TEXT_CHARS, allow_blank=True)
    constraints = _texts()
    goals = _texts()


class ThinkSerializer(StrictSerializer):
    problem = JSONCharField(max_length=MAX_TEXT_CHARS)
    mode = serializers.ChoiceField(choices=THINK_MODES)
    context = ProblemContextSerializer(required=False)


class AnalyzeSystematicallySerializer(StrictSerializer):
    problem = JSONCharField(max_length=MAX_TEXT_CHARS)
    preferred_framework = serializers.ChoiceField(choices=FRAMEWORK_IDS, required=False)
    context = ProblemContextSerializer(required=False)


class ThinkParallelSerializer(StrictSerializer):
    problem = JSONCharField(max_length=MAX_TEXT_CHARS)
    timeout = JSONIntegerField(required=False, **PARALLEL_TIMEOUT_MS.drf(), default=PARALLEL_TIMEOUT_MS.default,
                               help_text="Total timeout in milliseconds.")
    context = ProblemContextSerializer(required=False)


class DecomposeSerializer(StrictSerializer):
    problem = JSONCharField(max_length=MAX_TEXT_CHARS)
    max_depth = JSONIntegerField(required=False, **DECOMPOSE_DEPTH.drf(), default=DECOMPOSE_DEPTH.default)
    context = ProblemContextSerializer(required=False)


class AssessConfidenceSerializer(StrictSerializer):
    reasoning = JSONCharField(max_length=MAX_TEXT_CHARS)
    evidence = _texts()
    context = JSONCharField(required=False, max_length=MAX_TEXT_CHARS, allow_blank=True)


class DetectBiasSerializer(StrictSerializer):
    reasoning = JSONCharField(max_length=MAX_TEXT_CHARS)
    context = JSONCharField(required=False, max_length=MAX_TEXT_CHARS, allow_blank=True)
    monitor_continuously = JSONBooleanField(required=False, default=False)


class DetectEmotionSerializer(StrictSerializer):
    text = JSONCharField(max_length=MAX_TEXT_CHARS)
    include_discrete = JSONBooleanField(required=False, default=True)
    context = JSONCharField(required=False, max_length=MAX_TEXT_CHARS, allow_blank=True)


class AnalyzeReasoningSerializer(StrictSerializer):
    reasoning = JSONCharField(max_length=MAX_TEXT_CHARS)
    context = JSONCharField(required=False, max_length=MAX_TEXT_CHARS, allow_blank=True)
    include_confidence = JSONBooleanField(required=False, default=True)
    include_bias = JSONBooleanField(required=False, default=True)
    include_emotion = JSONBooleanField(required=False, default=False)
