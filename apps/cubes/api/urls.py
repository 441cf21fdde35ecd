from django.urls import path

from apps.cubes.api.views import CubeDetailView, CubeListView

app_name = "cubes_api"

urlpatterns = [
    path("cubes/", CubeListView.as_view(), name="cube-list"),
    path("cubes/<str:cube_id>/", CubeDetailView.as_view(), name="cube-detail"),
]
