from django.urls import path

from apps.chat import views

app_name = "chat"
urlpatterns = [
    path("", views.chat_index, name="index"),
    path("new/", views.chat_new, name="new"),
    path("<str:session_id>/", views.chat_session, name="session"),
    path("<str:session_id>/clear/", views.chat_clear_view, name="clear"),
]
