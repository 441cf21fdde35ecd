from django.urls import path

from apps.projects import views

app_name = "projects"
urlpatterns = [
    path("", views.project_index, name="project-list"),
    path("check/", views.check_edges, name="check-edges"),
    path("exports/", views.export_index, name="export-list"),
    path("exports/<str:name>", views.export_download, name="export-download"),
    path("<uuid:project_id>/", views.project_detail, name="project-detail"),
    path("<uuid:project_id>/edit/", views.project_edit, name="project-edit"),
    path("<uuid:project_id>/delete/", views.project_delete_view, name="project-delete"),
    path("<uuid:project_id>/restore/", views.project_restore_view, name="project-restore"),
    path("<uuid:project_id>/decisions/new/", views.decision_create, name="decision-create"),
    path("<uuid:project_id>/issues/new/", views.issue_create, name="issue-create"),
    path("<uuid:project_id>/edges/new/", views.edge_create, name="edge-create"),
    path("decisions/<uuid:entity_id>/edit/", views.decision_edit, name="decision-edit"),
    path("issues/<uuid:entity_id>/", views.issue_detail, name="issue-detail"),
    path("issues/<uuid:entity_id>/attempts/", views.issue_attempt, name="issue-attempt"),
    path("edges/<uuid:entity_id>/edit/", views.edge_edit, name="edge-edit"),
    path("episodes/<uuid:entity_id>/edit/", views.episode_edit, name="episode-edit"),
]
for segment in views.ENTITY_KINDS:
    urlpatterns += [
        path(f"{segment}/<uuid:entity_id>/delete/", views.entity_delete_view, {"segment": segment},
             name=f"{segment[:-1]}-delete"),
        path(f"{segment}/<uuid:entity_id>/restore/", views.entity_restore_view, {"segment": segment},
             name=f"{segment[:-1]}-restore"),
    ]
