from django.urls import path

from apps.chat import views

app_name = "chat"
urlpatterns = [
    path("", views.chat_index, name="index"),
    path("new/", views.chat_new, name="new"),
    path("new/stream/", views.chat_stream_view, name="new-stream"),
    path("<str:session_id>/", views.chat_session, name="session"),
    path("<str:session_id>/stream/", views.chat_stream_view, name="session-stream"),
    path("<str:session_id>/clear/", views.chat_clear_view, name="clear"),
]
