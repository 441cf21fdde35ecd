from django.urls import path

from apps.cubes import views

app_name = "cubes"
urlpatterns = [
    path("", views.cube_index, name="cube-list"),
    path("<str:cube_id>/", views.cube_detail, name="cube-detail"),
    path("<str:cube_id>/edit/", views.cube_edit, name="cube-edit"),
    path("<str:cube_id>/share/", views.cube_share_view, name="cube-share"),
    path("<str:cube_id>/revoke/", views.cube_revoke_view, name="cube-revoke"),
    path("<str:cube_id>/unregister/", views.cube_unregister_view, name="cube-unregister"),
    path("<str:cube_id>/restore/", views.cube_restore_view, name="cube-restore"),
    path("<str:cube_id>/delete/", views.cube_delete_view, name="cube-delete"),
]
