"""Writes of Mind, one module an area; import them from here.

projects, entities and nodes keep the records and their memory-graph nodes; check, context, export and
sessions read them to warn, rank, export and brief.
"""
from apps.projects.services.check import EdgeWarning, edges_check  # noqa: F401
from apps.projects.services.context import ContextResult, context_get  # noqa: F401
from apps.projects.services.entities import (  # noqa: F401
    DecisionAdded, decision_add, decision_update, edge_add, edge_update, entity_delete, entity_purge, entity_restore,
    episode_create, episode_update, issue_add, issue_update,
)
from apps.projects.services.export import (  # noqa: F401
    ExportFile, ExportResult, export_list, export_path, project_export,
)
from apps.projects.services.nodes import node_create, node_delete, node_purge, node_sync, node_text  # noqa: F401
from apps.projects.services.projects import (  # noqa: F401
    project_create, project_delete, project_get_writable, project_purge, project_restore, project_update,
)
from apps.projects.services.sessions import (  # noqa: F401
    Briefing, SessionEnded, SessionStarted, project_primer, session_current, session_end, session_start,
)
