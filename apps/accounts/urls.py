from django.urls import path

from apps.accounts import views

# No app_name: the navigation includes these in the dashboard URL namespace (dashboard:tokens, ...).
urlpatterns = [
    path("tokens/", views.token_index, name="tokens"),
    path("tokens/new/", views.token_new, name="token-create"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke_view, name="token-revoke"),
]
