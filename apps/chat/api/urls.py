from django.urls import path

from apps.chat.api.views import ChatSessionDetailView, ChatSessionListView, ChatView

app_name = "chat_api"

urlpatterns = [
    path("chat/", ChatView.as_view(), name="chat"),
    path("chat/sessions/", ChatSessionListView.as_view(), name="session-list"),
    path("chat/sessions/<str:session_id>/", ChatSessionDetailView.as_view(), name="session-detail"),
]
