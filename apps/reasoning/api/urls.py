from django.urls import path

from apps.reasoning.api import views

app_name = "reasoning_api"

# Fixed segments (load/, tags/, capability-graph/) come before the <id>/ paths, which take any string (a bad id
# is a 404 from the services).
urlpatterns = [
    path("reasoning/sessions/", views.ThoughtSessionListView.as_view(), name="session-list"),
    path("reasoning/sessions/<str:session_id>/", views.ThoughtSessionDetailView.as_view(), name="session-detail"),
    path("reasoning/sessions/<str:session_id>/restore/", views.ThoughtSessionRestoreView.as_view(),
         name="session-restore"),
    path("reasoning/sessions/<str:session_id>/export/", views.ThoughtSessionExportView.as_view(),
         name="session-export"),
    path("reasoning/sessions/<str:session_id>/verify/", views.ThoughtSessionVerifyView.as_view(),
         name="session-verify"),
    path("reasoning/thoughts/", views.ThoughtCreateView.as_view(), name="thought-add"),
    path("reasoning/notebooks/", views.NotebookListCreateView.as_view(), name="notebook-list"),
    path("reasoning/notebooks/load/", views.NotebookLoadView.as_view(), name="notebook-load"),
    path("reasoning/notebooks/<str:notebook_id>/", views.NotebookDetailView.as_view(), name="notebook-detail"),
    path("reasoning/notebooks/<str:notebook_id>/restore/", views.NotebookRestoreView.as_view(),
         name="notebook-restore"),
    path("reasoning/notebooks/<str:notebook_id>/export/", views.NotebookExportView.as_view(), name="notebook-export"),
    path("reasoning/notebooks/<str:notebook_id>/dependencies/", views.NotebookDependenciesView.as_view(),
         name="notebook-dependencies"),
    path("reasoning/notebooks/<str:notebook_id>/cells/", views.CellListCreateView.as_view(), name="cell-list"),
    path("reasoning/notebooks/<str:notebook_id>/cells/<str:cell_id>/", views.CellDetailView.as_view(),
         name="cell-detail"),
    path("reasoning/notebooks/<str:notebook_id>/cells/<str:cell_id>/run/", views.CellRunView.as_view(),
         name="cell-run"),
    path("reasoning/models/", views.MentalModelListView.as_view(), name="model-list"),
    path("reasoning/models/tags/", views.MentalModelTagsView.as_view(), name="model-tags"),
    path("reasoning/models/capability-graph/", views.CapabilityGraphView.as_view(), name="capability-graph"),
    path("reasoning/models/<str:name>/", views.MentalModelDetailView.as_view(), name="model-detail"),
    *(path(f"reasoning/analysis/{spec.path}/", views.analysis_view(spec).as_view(), name=f"analysis-{spec.path}")
      for spec in views.ANALYSES),
]
