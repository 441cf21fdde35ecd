from django.urls import path

from apps.reasoning import views

app_name = "reasoning"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("sessions/<uuid:session_id>/", views.session_detail, name="session-detail"),
    path("sessions/<uuid:session_id>/export/", views.session_export_view, name="session-export"),
    path("sessions/<uuid:session_id>/delete/", views.session_delete_view, name="session-delete"),
    path("sessions/<uuid:session_id>/restore/", views.session_restore_view, name="session-restore"),
    path("notebooks/", views.notebook_index, name="notebook-list"),
    path("notebooks/load/", views.notebook_load_view, name="notebook-load"),
    path("notebooks/<uuid:notebook_id>/", views.notebook_detail, name="notebook-detail"),
    path("notebooks/<uuid:notebook_id>/cells/", views.cell_add_view, name="cell-add"),
    path("notebooks/<uuid:notebook_id>/cells/<uuid:cell_id>/", views.cell_edit_view, name="cell-edit"),
    path("notebooks/<uuid:notebook_id>/cells/<uuid:cell_id>/run/", views.cell_run_view, name="cell-run"),
    path("runs/<uuid:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<uuid:run_id>/status/", views.run_status, name="run-status"),
    path("runs/<uuid:run_id>/cancel/", views.run_cancel_view, name="run-cancel"),
    path("notebooks/<uuid:notebook_id>/dependencies/", views.notebook_deps_view, name="notebook-deps"),
    path("notebooks/<uuid:notebook_id>/export/", views.notebook_export_view, name="notebook-export"),
    path("notebooks/<uuid:notebook_id>/delete/", views.notebook_delete_view, name="notebook-delete"),
    path("notebooks/<uuid:notebook_id>/restore/", views.notebook_restore_view, name="notebook-restore"),
    path("models/", views.model_index, name="model-list"),
    path("models/<slug:name>/", views.model_detail, name="model-detail"),
    path("workbench/", views.workbench, name="workbench"),
]
