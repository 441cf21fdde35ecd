from django.urls import path

from apps.cognition.api.dream_views import DreamDetailView, DreamInterruptView, DreamListView
from apps.cognition.api.blind_spot_views import BlindSpotListView, BlindSpotResolveView
from apps.cognition.api.gardener_views import GardenerRunView, GardenerStatusView
from apps.cognition.api.planning_views import (
    BenchmarkDetailView, BenchmarkStartView, CompareView, ReflectView, SearchPlanView,
)
from apps.cognition.api.reasoning_views import CausalExpandView, CausalPathView, CausalQueryView, EntailmentView
from apps.cognition.api.state_views import HomeostasisView, NeuromodulationView, UtlStatusView
from apps.cognition.api.views import (
    AdversarialCheckView, AnnotateView, BoostView, CritiqueView, ForgetView, LineageView, MergeView, NeighborhoodView,
    NodeSearchView, NodeStoreView, QuarantineListView, QuarantineReleaseView, RecentView, RestoreView, ScratchpadView,
    SessionDetailView, SessionListView, SystemLogView, TaskApproveView, TaskListView, TaskRejectView,
    TombstoneListView, TombstoneSearchView, UndoApplyView, UndoListView, UndoPreviewView,
)

app_name = "cognition_api"

# The fixed names under nodes/ (search/, merge/, neighbourhood/, recent/) come before <node_id>/.
urlpatterns = [
    path("cognition/sessions/", SessionListView.as_view(), name="session-list"),
    path("cognition/sessions/<str:session_id>/", SessionDetailView.as_view(), name="session-detail"),
    path("cognition/tasks/", TaskListView.as_view(), name="task-list"),
    path("cognition/tasks/<str:task_id>/approve/", TaskApproveView.as_view(), name="task-approve"),
    path("cognition/tasks/<str:task_id>/reject/", TaskRejectView.as_view(), name="task-reject"),
    path("cognition/nodes/", NodeStoreView.as_view(), name="node-store"),
    path("cognition/nodes/search/", NodeSearchView.as_view(), name="node-search"),
    path("cognition/nodes/merge/", MergeView.as_view(), name="node-merge"),
    path("cognition/nodes/neighbourhood/", NeighborhoodView.as_view(), name="node-neighbourhood"),
    path("cognition/nodes/recent/", RecentView.as_view(), name="node-recent"),
    path("cognition/nodes/<str:node_id>/lineage/", LineageView.as_view(), name="node-lineage"),
    path("cognition/nodes/<str:node_id>/annotations/", AnnotateView.as_view(), name="node-annotate"),
    path("cognition/nodes/<str:node_id>/boost/", BoostView.as_view(), name="node-boost"),
    path("cognition/nodes/<str:node_id>/forget/", ForgetView.as_view(), name="node-forget"),
    path("cognition/nodes/<str:node_id>/restore/", RestoreView.as_view(), name="node-restore"),
    path("cognition/nodes/<str:node_id>/entailment/", EntailmentView.as_view(), name="node-entailment"),
    path("cognition/causal/query/", CausalQueryView.as_view(), name="causal-query"),
    path("cognition/causal/path/", CausalPathView.as_view(), name="causal-path"),
    path("cognition/causal/expand/", CausalExpandView.as_view(), name="causal-expand"),
    path("cognition/tombstones/", TombstoneListView.as_view(), name="tombstone-list"),
    path("cognition/tombstones/search/", TombstoneSearchView.as_view(), name="tombstone-search"),
    path("cognition/undo/", UndoListView.as_view(), name="undo-list"),
    path("cognition/undo/<str:reversal_hash>/preview/", UndoPreviewView.as_view(), name="undo-preview"),
    path("cognition/undo/<str:reversal_hash>/apply/", UndoApplyView.as_view(), name="undo-apply"),
    path("cognition/system-log/", SystemLogView.as_view(), name="system-log"),
    path("cognition/scratchpad/<str:session_id>/<str:agent_id>/", ScratchpadView.as_view(), name="scratchpad"),
    path("cognition/sessions/<str:session_id>/utl/", UtlStatusView.as_view(), name="session-utl"),
    path("cognition/neuromodulation/", NeuromodulationView.as_view(), name="neuromodulation"),
    path("cognition/homeostasis/", HomeostasisView.as_view(), name="homeostasis"),
    path("cognition/adversarial/check/", AdversarialCheckView.as_view(), name="adversarial-check"),
    path("cognition/critique/", CritiqueView.as_view(), name="critique"),
    path("cognition/quarantine/", QuarantineListView.as_view(), name="quarantine-list"),
    path("cognition/quarantine/<str:node_id>/release/", QuarantineReleaseView.as_view(), name="quarantine-release"),
    path("cognition/plans/", SearchPlanView.as_view(), name="search-plan"),
    path("cognition/reflect/", ReflectView.as_view(), name="reflect"),
    path("cognition/retrieval/compare/", CompareView.as_view(), name="retrieval-compare"),
    path("cognition/benchmarks/", BenchmarkStartView.as_view(), name="benchmark-start"),
    path("cognition/benchmarks/<str:run_id>/", BenchmarkDetailView.as_view(), name="benchmark-detail"),
    path("cognition/dreams/", DreamListView.as_view(), name="dream-list"),
    path("cognition/dreams/<str:dream_run_id>/", DreamDetailView.as_view(), name="dream-detail"),
    path("cognition/dreams/<str:dream_run_id>/interrupt/", DreamInterruptView.as_view(), name="dream-interrupt"),
    path("cognition/blind-spots/", BlindSpotListView.as_view(), name="blind-spot-list"),
    path("cognition/blind-spots/<str:blind_spot_id>/resolve/", BlindSpotResolveView.as_view(),
         name="blind-spot-resolve"),
    path("cognition/gardener/", GardenerStatusView.as_view(), name="gardener-status"),
    path("cognition/gardener/run/", GardenerRunView.as_view(), name="gardener-run"),
]
