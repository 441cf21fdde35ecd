from django.urls import path

from apps.graph import views

# No app_name: apps/dashboard/urls.py includes these in its namespace (dashboard:graph).
urlpatterns = [
    path("graph/", views.graph, name="graph"),
]
