from django.urls import path

from apps.accounts.api import schema  # noqa: F401  (registers the bearer-token scheme with drf-spectacular)
from apps.accounts.api.views import TokenListCreateView, TokenRevokeView

app_name = "accounts_api"

urlpatterns = [
    path("tokens/", TokenListCreateView.as_view(), name="token-list"),
    path("tokens/<str:token_id>/", TokenRevokeView.as_view(), name="token-revoke"),
]
