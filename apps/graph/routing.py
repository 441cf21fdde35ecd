from django.urls import path

from apps.graph.consumers import GraphConsumer

websocket_urlpatterns = [
    path("ws/graph/", GraphConsumer.as_asgi()),
]
