from django.urls import path

from apps.memories import views

# No app_name: the navigation includes these in the dashboard URL namespace (dashboard:memory-detail, ...).
urlpatterns = [
    path("search/", views.search, name="search"),
    path("memories/", views.memory_browse, name="memory-list"),
    path("memories/bulk/", views.memory_bulk, name="memory-bulk"),
    path("memories/new/", views.memory_create, name="memory-create"),
    path("memories/<uuid:memory_id>/", views.memory_detail, name="memory-detail"),
    path("memories/<uuid:memory_id>/edit/", views.memory_edit, name="memory-edit"),
    path("memories/<uuid:memory_id>/boost/", views.memory_boost_view, name="memory-boost"),
    path("memories/<uuid:memory_id>/delete/", views.memory_soft_delete, name="memory-delete"),
    path("memories/<uuid:memory_id>/restore/", views.memory_restore_view, name="memory-restore"),
    path("memories/<uuid:memory_id>/destroy/", views.memory_destroy, name="memory-destroy"),
]
