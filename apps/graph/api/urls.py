from django.urls import path

from apps.graph.api.views import GraphSnapshotView

app_name = "graph_api"

urlpatterns = [
    path("graph/snapshot/", GraphSnapshotView.as_view(), name="graph-snapshot"),
]
