from django.urls import path

from apps.projects.api.views import (
    ContextView, DecisionDetailView, DecisionListCreateView, DecisionRestoreView, EdgeCheckView, EdgeDetailView,
    EdgeListCreateView, EdgeRestoreView, EpisodeDetailView, EpisodeListView, EpisodeRestoreView, ExportDownloadView,
    ExportListCreateView, IssueAttemptsView, IssueDetailView, IssueListCreateView, IssueRestoreView,
    ProjectDetailView, ProjectListCreateView, ProjectRestoreView, ProjectSessionsView,
)

app_name = "projects_api"

# projects/context/ and sharp-edges/check/ come before the <id>/ paths, which take any string (a bad id is a
# 404 from the selectors).
urlpatterns = [
    path("projects/", ProjectListCreateView.as_view(), name="project-list"),
    path("projects/context/", ContextView.as_view(), name="context"),
    path("projects/<str:project_id>/", ProjectDetailView.as_view(), name="project-detail"),
    path("projects/<str:project_id>/restore/", ProjectRestoreView.as_view(), name="project-restore"),
    path("projects/<str:project_id>/sessions/", ProjectSessionsView.as_view(), name="project-sessions"),
    path("decisions/", DecisionListCreateView.as_view(), name="decision-list"),
    path("decisions/<str:decision_id>/", DecisionDetailView.as_view(), name="decision-detail"),
    path("decisions/<str:decision_id>/restore/", DecisionRestoreView.as_view(), name="decision-restore"),
    path("issues/", IssueListCreateView.as_view(), name="issue-list"),
    path("issues/<str:issue_id>/", IssueDetailView.as_view(), name="issue-detail"),
    path("issues/<str:issue_id>/restore/", IssueRestoreView.as_view(), name="issue-restore"),
    path("issues/<str:issue_id>/attempts/", IssueAttemptsView.as_view(), name="issue-attempts"),
    path("sharp-edges/", EdgeListCreateView.as_view(), name="edge-list"),
    path("sharp-edges/check/", EdgeCheckView.as_view(), name="edge-check"),
    path("sharp-edges/<str:edge_id>/", EdgeDetailView.as_view(), name="edge-detail"),
    path("sharp-edges/<str:edge_id>/restore/", EdgeRestoreView.as_view(), name="edge-restore"),
    path("episodes/", EpisodeListView.as_view(), name="episode-list"),
    path("episodes/<str:episode_id>/", EpisodeDetailView.as_view(), name="episode-detail"),
    path("episodes/<str:episode_id>/restore/", EpisodeRestoreView.as_view(), name="episode-restore"),
    path("exports/", ExportListCreateView.as_view(), name="export-list"),
    path("exports/<str:name>/", ExportDownloadView.as_view(), name="export-download"),
]
