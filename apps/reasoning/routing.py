from django.urls import path

from apps.reasoning.consumers import CellRunConsumer

websocket_urlpatterns = [
    path("ws/runs/", CellRunConsumer.as_asgi()),
]
