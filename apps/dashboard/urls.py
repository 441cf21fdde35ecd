from django.contrib.auth import views as auth_views
from django.urls import path

from apps.dashboard import views

app_name = "dashboard"
urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.home, name="home"),
    path("search/", views.search, name="search"),
    path("graph/", views.graph, name="graph"),
    path("memories/", views.memory_browse, name="memory-list"),
    path("memories/new/", views.memory_create, name="memory-create"),
    path("memories/<uuid:memory_id>/", views.memory_detail, name="memory-detail"),
    path("memories/<uuid:memory_id>/edit/", views.memory_edit, name="memory-edit"),
    path("memories/<uuid:memory_id>/boost/", views.memory_boost_view, name="memory-boost"),
    path("memories/<uuid:memory_id>/delete/", views.memory_soft_delete, name="memory-delete"),
    path("memories/<uuid:memory_id>/restore/", views.memory_restore_view, name="memory-restore"),
    path("memories/<uuid:memory_id>/destroy/", views.memory_destroy, name="memory-destroy"),
    path("tokens/", views.token_index, name="tokens"),
    path("tokens/new/", views.token_new, name="token-create"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke_view, name="token-revoke"),
]
