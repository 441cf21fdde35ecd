"""REST shapes of Mind: projects, sessions, decisions, issues, sharp edges, episodes, checks and exports.

As for memories, requests declare types and sizes (for clear 400s and the OpenAPI schema) with the limits
of apps.projects.validation; the services own every other rule (choices of a pattern, regexes that must
compile, unique names, access), so REST, MCP and the dashboard refuse the same things.
"""
from drf_spectacular.utils import OpenApiTypes, extend_schema_field
from rest_framework import serializers

from apps.core.aliases import Aliases
from apps.core.api.serializers import (
    AtLeastOneFieldMixin, JSONBooleanField, JSONCharField, JSONFloatField, JSONIntegerField, PageQuerySerializer,
    StrictSerializer,
)
from apps.core.limits import CONTEXT_LIMIT, UNIT
from apps.cubes.api.serializers import CubeIdField
from apps.memories.validation import MAX_QUERY_CHARS
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.patterns import MAX_DESCRIPTION_CHARS, MAX_GLOB_CHARS, MAX_PATTERN_CHARS, MAX_PATTERNS
from apps.projects.services.check import MAX_CODE_CHARS
from apps.core.validation import MAX_TITLE_CHARS
from apps.projects.validation import (
    MAX_ITEM_CHARS, MAX_ITEMS, MAX_MOOD_CHARS, MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_PHRASE_CHARS, MAX_TEXT_CHARS,
)

# The Mind services' argument names -> the names of these requests and filters; the rest are the same.
PROJECT_ALIASES = Aliases({"project_id": "project", "cube_id": "cube"})
MAX_ID_CHARS = 100
WARNING_SEVERITIES = ["high", "medium", "low"]
EXPORT_FORMATS = ["json", "markdown"]
CONTEXT_TYPES = ["decisions", "issues", "edges", "episodes"]


def named_choice_field(component: str, choices: list[tuple[str, str]]) -> type[serializers.ChoiceField]:
    """A ChoiceField documented as the enum component ``component``. Mind has several fields named
    ``status`` and ``severity`` with different choices; drf-spectacular could only name those enums with
    a warning, so each choice set carries its own name here."""
    values = [value for value, _ in choices]

    @extend_schema_field({"type": "string", "enum": values}, component_name=component)
    class NamedChoiceField(serializers.ChoiceField):
        def __init__(self, **kwargs):
            super().__init__(choices=choices, error_messages={
                "invalid_choice": f'"{{input}}" is not a valid choice: use one of {", ".join(values)}.',
            }, **kwargs)

    NamedChoiceField.__name__ = f"{component}Field"
    return NamedChoiceField


ProjectStatusField = named_choice_field("ProjectStatusEnum", Project.Status.choices)
DecisionStatusField = named_choice_field("DecisionStatusEnum", Decision.Status.choices)
IssueStatusField = named_choice_field("IssueStatusEnum", Issue.Status.choices)
IssueSeverityField = named_choice_field("IssueSeverityEnum", Issue.Severity.choices)
PatternTypeField = named_choice_field("PatternTypeEnum", SharpEdge.PatternType.choices)
WarningSeverityField = named_choice_field("WarningSeverityEnum", [(value, value) for value in WARNING_SEVERITIES])


@extend_schema_field(OpenApiTypes.UUID)
class EntityIdField(JSONCharField):
    """The id of a project or an entity. The services judge it: a malformed or unknown id is "not found"."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", MAX_ID_CHARS)
        super().__init__(**kwargs)


def text_field(max_chars: int, help_text: str = "", **kwargs) -> JSONCharField:
    return JSONCharField(max_length=max_chars, allow_blank=True, required=False,
                         help_text=f"{help_text} At most {max_chars} characters.".strip(), **kwargs)


def title_field(max_chars: int = MAX_TITLE_CHARS, help_text: str = "", **kwargs) -> JSONCharField:
    help_text = f"{help_text} Not empty, at most {max_chars} characters.".strip()
    return JSONCharField(max_length=max_chars, help_text=help_text, **kwargs)


def text_list_field(help_text: str, item_chars: int = MAX_ITEM_CHARS) -> serializers.ListField:
    return serializers.ListField(
        child=JSONCharField(max_length=item_chars, allow_blank=True), max_length=MAX_ITEMS, required=False,
        help_text=f"{help_text} At most {MAX_ITEMS} items, each up to {item_chars} characters.",
    )


def trigger_phrases_field() -> serializers.ListField:
    return text_list_field("Phrases that should bring this back when a query contains them.", MAX_PHRASE_CHARS)


# --- Responses -----------------------------------------------------------------------------------

class ProjectSerializer(serializers.ModelSerializer):
    cube = serializers.CharField(source="cube_id", help_text="The cube the project and its entities belong to.")
    status = ProjectStatusField()

    class Meta:
        model = Project
        fields = [
            "id", "name", "cube", "stack", "repo_path", "current_goal", "blocked_by", "open_threads", "status",
            "last_session_at", "last_session_summary", "last_session_next_steps", "created_at", "updated_at",
            "deleted_at",
        ]
        read_only_fields = fields


class ProjectListItemSerializer(ProjectSerializer):
    open_issue_count = serializers.IntegerField(help_text="Live issues that are neither resolved nor won't fix.")

    class Meta(ProjectSerializer.Meta):
        fields = [*ProjectSerializer.Meta.fields, "open_issue_count"]
        read_only_fields = fields


class SessionSerializer(serializers.ModelSerializer):
    project = serializers.UUIDField(source="project_id")
    is_active = serializers.BooleanField(help_text="true until the session is ended.")

    class Meta:
        model = Session
        fields = ["id", "project", "started_at", "ended_at", "is_active", "summary", "progress", "still_open",
                  "next_steps", "mood", "issue_updates", "created_at"]
        read_only_fields = fields


class EntitySerializer(serializers.ModelSerializer):
    """What the four entity kinds share: their project, cube, memory-graph node and access counts."""

    project = serializers.UUIDField(source="project_id", allow_null=True)
    cube = serializers.CharField(source="cube_id")
    node = serializers.UUIDField(source="node_id", allow_null=True,
                                 help_text="The entity's memory in the graph (kind decision, issue, ...).")
    session = serializers.UUIDField(source="session_id", allow_null=True, help_text="The session that made it.")

    SHARED_FIELDS = ["id", "project", "cube", "node", "session", "access_count", "last_accessed_at", "created_at",
                     "updated_at", "deleted_at"]


class DecisionSerializer(EntitySerializer):
    status = DecisionStatusField()
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)

    class Meta:
        model = Decision
        fields = [*EntitySerializer.SHARED_FIELDS, "title", "description", "context", "reasoning", "alternatives",
                  "confidence", "revisit_if", "trigger_phrases", "status", "superseded_by"]
        read_only_fields = fields


class IssueSerializer(EntitySerializer):
    status = IssueStatusField()
    severity = IssueSeverityField()

    class Meta:
        model = Issue
        fields = [*EntitySerializer.SHARED_FIELDS, "title", "description", "severity", "status", "symptoms",
                  "attempts", "current_theory", "blocked_by", "resolution", "trigger_phrases", "resolved_at"]
        read_only_fields = fields


class SharpEdgeSerializer(EntitySerializer):
    is_global = serializers.BooleanField(help_text="No project: checked for every project of its owner.")

    class Meta:
        model = SharpEdge
        fields = [*EntitySerializer.SHARED_FIELDS, "title", "description", "workaround", "detection_patterns",
                  "symptoms", "root_cause", "share_with_community", "is_global"]
        read_only_fields = fields


class EpisodeSerializer(EntitySerializer):
    class Meta:
        model = Episode
        fields = [*EntitySerializer.SHARED_FIELDS, "title", "narrative", "mood_arc", "lessons", "breakthroughs",
                  "frustrations"]
        read_only_fields = fields


class DecisionAddedSerializer(serializers.Serializer):
    decision = DecisionSerializer()
    superseded = DecisionSerializer(allow_null=True, help_text="The earlier decision this one replaces, if any.")


class DetectionPatternOutSerializer(serializers.Serializer):
    type = PatternTypeField()
    pattern = serializers.CharField()
    description = serializers.CharField()
    file_glob = serializers.CharField(required=False)


class EdgeWarningSerializer(serializers.Serializer):
    edge = SharpEdgeSerializer()
    matched_pattern = DetectionPatternOutSerializer()
    severity = WarningSeverityField()
    recommendation = serializers.CharField()


class EdgeCheckResultSerializer(serializers.Serializer):
    warnings = EdgeWarningSerializer(many=True)


class ContextResultSerializer(serializers.Serializer):
    decisions = DecisionSerializer(many=True)
    issues = IssueSerializer(many=True)
    edges = SharpEdgeSerializer(many=True)
    episodes = EpisodeSerializer(many=True)


class ExportCountsSerializer(serializers.Serializer):
    projects = serializers.IntegerField()
    decisions = serializers.IntegerField()
    issues = serializers.IntegerField()
    edges = serializers.IntegerField()
    episodes = serializers.IntegerField()
    sessions = serializers.IntegerField()


class ExportFileSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The file name; GET /api/v1/exports/<name>/ downloads it.")
    size = serializers.IntegerField(help_text="Bytes.")
    created_at = serializers.DateTimeField()
    download_url = serializers.CharField()


class ExportCreatedSerializer(serializers.Serializer):
    name = serializers.CharField()
    path = serializers.CharField(help_text="Where the file was written on the server.")
    download_url = serializers.CharField()
    entities = ExportCountsSerializer(help_text="How many of each kind the file holds.")


# --- Requests ------------------------------------------------------------------------------------

class ProjectCreateSerializer(StrictSerializer):
    name = title_field(MAX_NAME_CHARS, help_text="Unique among your live projects, ignoring case.")
    cube = CubeIdField(required=False, help_text="A cube you may write to; your personal cube when left out.")
    stack = text_list_field("Technologies the project uses.")
    repo_path = text_field(MAX_PATH_CHARS, "The repository's path, to find the project from it.")
    current_goal = text_field(MAX_TEXT_CHARS)
    status = ProjectStatusField(required=False)


class ProjectUpdateSerializer(AtLeastOneFieldMixin, StrictSerializer):
    name = title_field(MAX_NAME_CHARS, required=False)
    current_goal = text_field(MAX_TEXT_CHARS)
    blocked_by = text_list_field("What blocks the project; replaces the list.")
    open_threads = text_list_field("Unfinished threads; replaces the list.")
    stack = text_list_field("Replaces the stack.")
    add_to_stack = text_list_field("Added to the stack (repeats are ignored).")
    repo_path = text_field(MAX_PATH_CHARS)
    status = ProjectStatusField(required=False)


class AlternativeSerializer(StrictSerializer):
    option = JSONCharField(max_length=MAX_ITEM_CHARS)
    rejected_because = text_field(MAX_ITEM_CHARS)


class DecisionFieldsSerializer(StrictSerializer):
    """The fields that adding and updating a decision share."""

    description = text_field(MAX_TEXT_CHARS, "Full explanation.")
    context = text_field(MAX_TEXT_CHARS, "What situation led to this.")
    reasoning = text_field(MAX_TEXT_CHARS, "Why this choice.")
    alternatives = serializers.ListField(child=AlternativeSerializer(), max_length=MAX_ITEMS, required=False,
                                         help_text="Options considered and why each was rejected.")
    confidence = JSONFloatField(**UNIT.drf(), required=False, help_text="0 to 1 (default 0.7).")
    revisit_if = text_field(MAX_TEXT_CHARS, "The condition under which to reconsider.")
    trigger_phrases = trigger_phrases_field()


class DecisionCreateSerializer(DecisionFieldsSerializer):
    project = EntityIdField(help_text="The project the decision belongs to.")
    title = title_field()


class DecisionUpdateSerializer(AtLeastOneFieldMixin, DecisionFieldsSerializer):
    title = title_field(required=False)
    status = DecisionStatusField(required=False)


class IssueCreateSerializer(StrictSerializer):
    project = EntityIdField(help_text="The project the issue belongs to.")
    title = title_field()
    description = text_field(MAX_TEXT_CHARS)
    severity = IssueSeverityField(required=False, help_text="major when left out.")
    symptoms = text_list_field("Error messages and behaviours.")
    trigger_phrases = trigger_phrases_field()


class IssueUpdateSerializer(AtLeastOneFieldMixin, StrictSerializer):
    title = title_field(required=False)
    description = text_field(MAX_TEXT_CHARS)
    severity = IssueSeverityField(required=False)
    status = IssueStatusField(required=False)
    current_theory = text_field(MAX_TEXT_CHARS)
    blocked_by = text_field(MAX_TEXT_CHARS)
    resolution = text_field(MAX_TEXT_CHARS)


class AttemptSerializer(StrictSerializer):
    what = JSONCharField(max_length=MAX_TEXT_CHARS, help_text="What was tried.")
    result = JSONCharField(max_length=MAX_TEXT_CHARS, help_text="What happened.")
    learned = text_field(MAX_TEXT_CHARS, "What it taught.")


class DetectionPatternSerializer(StrictSerializer):
    type = PatternTypeField(help_text="code: a case-insensitive regex over the code; context and intent: keywords.")
    pattern = JSONCharField(max_length=MAX_PATTERN_CHARS, help_text="Must compile (the regex module's syntax).")
    description = text_field(MAX_DESCRIPTION_CHARS)
    file_glob = text_field(MAX_GLOB_CHARS, "Code patterns only: limit to files matching this glob (e.g. *.ts).")


class EdgeFieldsSerializer(StrictSerializer):
    """The fields that adding and updating a sharp edge share."""

    description = text_field(MAX_TEXT_CHARS)
    workaround = text_field(MAX_TEXT_CHARS)
    detection_patterns = serializers.ListField(
        child=DetectionPatternSerializer(), max_length=MAX_PATTERNS, required=False,
        help_text="How check-edges recognises the edge in code, context or intent.",
    )
    symptoms = text_list_field("Error messages and behaviours.")
    root_cause = text_field(MAX_TEXT_CHARS)
    share_with_community = JSONBooleanField(required=False)


class EdgeCreateSerializer(EdgeFieldsSerializer):
    project = EntityIdField(required=False, allow_null=True, help_text="Leave out (or null) for a global edge.")
    title = title_field()


class EdgeUpdateSerializer(AtLeastOneFieldMixin, EdgeFieldsSerializer):
    title = title_field(required=False)


class EpisodeUpdateSerializer(AtLeastOneFieldMixin, StrictSerializer):
    title = title_field(required=False)
    narrative = text_field(MAX_TEXT_CHARS)
    mood_arc = text_list_field("How the mood went, in order.", item_chars=MAX_MOOD_CHARS)
    lessons = text_list_field("What the session taught.")
    breakthroughs = text_list_field("What suddenly worked.")
    frustrations = text_list_field("What kept failing.")


class CheckContextSerializer(StrictSerializer):
    runtime = text_field(MAX_ITEM_CHARS, 'e.g. "edge", "serverless", "node".')
    framework = text_field(MAX_ITEM_CHARS, 'e.g. "nextjs", "remix".')
    file_path = text_field(MAX_PATH_CHARS, "The file being written; code patterns with a file_glob need it to match.")


class EdgeCheckSerializer(StrictSerializer):
    code = text_field(MAX_CODE_CHARS, "Code being written.")
    intent = text_field(MAX_TEXT_CHARS, "What you are trying to do.")
    context = CheckContextSerializer(required=False)
    project = EntityIdField(required=False, help_text="Check one project's edges (and global ones); all when left out.")

    def validate(self, attrs):
        if not any(attrs.get(name) for name in ("code", "intent", "context")):
            raise serializers.ValidationError("Give code, intent or context to check.")
        return attrs


class ContextQuerySerializer(StrictSerializer):
    query = JSONCharField(max_length=MAX_QUERY_CHARS, help_text="Natural language, e.g. \"why did we choose X\".")
    types = serializers.ListField(
        child=serializers.ChoiceField(choices=CONTEXT_TYPES), allow_empty=False, required=False,
        help_text="Only these kinds; all four when left out.",
    )
    project = EntityIdField(required=False, help_text="Scope to one project; all your projects when left out.")
    include_global = JSONBooleanField(default=True, help_text="Include global sharp edges.")
    limit = JSONIntegerField(**CONTEXT_LIMIT.drf(), default=CONTEXT_LIMIT.default, help_text="Per kind.")


class ExportCreateSerializer(StrictSerializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS, default="json")
    project = EntityIdField(required=False, help_text="One project; all of yours when left out.")
    include_sessions = JSONBooleanField(default=False)


class DeletedQueryMixin(serializers.Serializer):
    deleted = serializers.ChoiceField(
        choices=["exclude", "include", "only"], default="exclude",
        help_text="Soft-deleted ones: exclude (default), include, or only them.",
    )


class ProjectListQuerySerializer(DeletedQueryMixin, PageQuerySerializer):
    status = ProjectStatusField(required=False)


class EntityListQuerySerializer(DeletedQueryMixin, PageQuerySerializer):
    project = EntityIdField(required=False, help_text="Only this project's.")


class DecisionListQuerySerializer(EntityListQuerySerializer):
    status = DecisionStatusField(required=False)


class IssueListQuerySerializer(EntityListQuerySerializer):
    status = IssueStatusField(required=False)
    severity = IssueSeverityField(required=False)
