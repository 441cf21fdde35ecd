from django.urls import path

from apps.graph import views

# No app_name: the navigation includes these in the dashboard URL namespace (dashboard:graph).
urlpatterns = [
    path("graph/", views.graph, name="graph"),
]
