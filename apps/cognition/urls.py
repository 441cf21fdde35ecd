from django.urls import path

from apps.cognition import views
from apps.cognition.pages import benchmarks, insight

# No app_name: the navigation includes these in the dashboard URL namespace (dashboard:cognition-inbox, ...).
urlpatterns = [
    path("cognition/", views.pulse, name="cognition-pulse"),
    path("cognition/sessions/<uuid:session_id>/", views.session, name="cognition-session"),
    path("cognition/inbox/", views.inbox, name="cognition-inbox"),
    path("cognition/inbox/<uuid:task_id>/approve/", views.task_approve_view, name="cognition-task-approve"),
    path("cognition/inbox/<uuid:task_id>/reject/", views.task_reject_view, name="cognition-task-reject"),
    path("cognition/undo/", views.undo, name="cognition-undo"),
    path("cognition/undo/preview/", views.undo_preview, name="cognition-undo-preview"),
    path("cognition/undo/execute/", views.undo_execute, name="cognition-undo-execute"),
    path("cognition/trash/", views.trash, name="cognition-trash"),
    path("cognition/trash/<uuid:node_id>/restore/", views.trash_restore, name="cognition-restore"),
    path("cognition/scratchpad/", views.scratchpad, name="cognition-scratchpad"),
    path("cognition/scratchpad/clear/", views.scratchpad_clear_view, name="cognition-scratchpad-clear"),
    path("cognition/dreams/", views.dreams, name="cognition-dreams"),
    path("cognition/dreams/trigger/", views.dream_trigger_view, name="cognition-dream-trigger"),
    path("cognition/dreams/<uuid:run_id>/interrupt/", views.dream_interrupt_view, name="cognition-dream-interrupt"),
    path("cognition/dreams/<uuid:run_id>/undo/preview/", views.dream_undo_preview, name="cognition-dream-undo-preview"),
    path("cognition/dreams/<uuid:run_id>/undo/", views.dream_undo, name="cognition-dream-undo"),
    path("cognition/blind-spots/", insight.blind_spots, name="cognition-blind-spots"),
    path("cognition/blind-spots/<uuid:blind_spot_id>/resolve/", insight.blind_spot_resolve_view,
         name="cognition-blind-spot-resolve"),
    path("cognition/homeostasis/", insight.homeostasis, name="cognition-homeostasis"),
    path("cognition/neuromodulation/", insight.neuromodulation, name="cognition-neuromodulation"),
    path("cognition/adversarial/", insight.adversarial, name="cognition-adversarial"),
    path("cognition/quarantine/<uuid:node_id>/release/", insight.quarantine_release_view,
         name="cognition-quarantine-release"),
    path("cognition/benchmarks/", benchmarks.benchmarks, name="cognition-benchmarks"),
    path("cognition/benchmarks/start/", benchmarks.benchmark_start, name="cognition-benchmark-start"),
    path("cognition/benchmarks/<uuid:run_id>/", benchmarks.benchmark, name="cognition-benchmark"),
    path("cognition/gardener/", views.gardener, name="cognition-gardener"),
    path("cognition/gardener/run/", views.gardener_run_view, name="cognition-gardener-run"),
]
