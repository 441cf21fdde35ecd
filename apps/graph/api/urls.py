from django.urls import path

from apps.graph.api.views import GraphSnapshotView, LinkCreateView, LinkDeleteView, MemoryBoostView, NeighbourhoodView

app_name = "graph_api"

urlpatterns = [
    path("graph/snapshot/", GraphSnapshotView.as_view(), name="graph-snapshot"),
    # The memory page's local graph.
    path("graph/memories/<str:memory_id>/neighbourhood/", NeighbourhoodView.as_view(),
         name="graph-memory-neighbourhood"),
    # Curation from the graph page; the rest (update, delete, restore) is under /api/v1/memories/.
    path("graph/memories/<str:memory_id>/boost/", MemoryBoostView.as_view(), name="graph-memory-boost"),
    path("graph/links/", LinkCreateView.as_view(), name="graph-link-create"),
    path("graph/links/<str:source>/<str:target>/", LinkDeleteView.as_view(), name="graph-link-delete"),
]
