from django.urls import path

from apps.memories.api.views import (
    MemoryBatchStoreView, MemoryDetailView, MemoryLinksView, MemoryListCreateView, MemoryRestoreView, MemoryRetrieveView, MemorySearchView,
)

app_name = "memories_api"

# retrieve/ and search/ come before <memory_id>/, which takes any string (a bad id is a 404 "Memory not found").
urlpatterns = [
    path("memories/", MemoryListCreateView.as_view(), name="memory-list"),
    path("memories/batch/", MemoryBatchStoreView.as_view(), name="memory-batch"),
    path("memories/retrieve/", MemoryRetrieveView.as_view(), name="memory-retrieve"),
    path("memories/search/", MemorySearchView.as_view(), name="memory-search"),
    path("memories/<str:memory_id>/", MemoryDetailView.as_view(), name="memory-detail"),
    path("memories/<str:memory_id>/restore/", MemoryRestoreView.as_view(), name="memory-restore"),
    path("memories/<str:memory_id>/links/", MemoryLinksView.as_view(), name="memory-links"),
]
