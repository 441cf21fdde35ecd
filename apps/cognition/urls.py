from django.urls import path

from apps.cognition import views

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
    path("cognition/gardener/", views.gardener, name="cognition-gardener"),
    path("cognition/gardener/run/", views.gardener_run_view, name="cognition-gardener-run"),
]
