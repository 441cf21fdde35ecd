from django.urls import path

from apps.cubes.api.views import (
    AccessCheckView, CubeDetailView, CubeListView, CubeMembersView, CubeMemberView, CubeRestoreView,
)

app_name = "cubes_api"

urlpatterns = [
    path("cubes/", CubeListView.as_view(), name="cube-list"),
    path("cubes/<str:cube_id>/", CubeDetailView.as_view(), name="cube-detail"),
    path("cubes/<str:cube_id>/restore/", CubeRestoreView.as_view(), name="cube-restore"),
    path("cubes/<str:cube_id>/members/", CubeMembersView.as_view(), name="cube-members"),
    path("cubes/<str:cube_id>/members/<str:user>/", CubeMemberView.as_view(), name="cube-member"),
    path("access/check/", AccessCheckView.as_view(), name="access-check"),
]
