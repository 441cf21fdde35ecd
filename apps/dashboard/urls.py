from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.dashboard import views

# The navigation: sign-in, the home page, and the pages of the memories, tokens, graph and Context Graph, each
# app's own.
app_name = "dashboard"
urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.home, name="home"),
    path("palette/", views.palette, name="palette"),
    path("shortcuts/", views.shortcuts, name="shortcuts"),
    path("", include("apps.memories.urls")),
    path("", include("apps.graph.urls")),
    path("", include("apps.accounts.urls")),
    path("", include("apps.cognition.urls")),
]
