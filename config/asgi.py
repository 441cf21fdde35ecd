"""The ASGI application: MCP under /mcp, Django for every other HTTP request, the live graph's websocket.

Served by uvicorn (`manage.py serve`, lifespan on). Django's sync views run on a fixed pool of threads
(ENGRAM_WEB_THREADS). `/mcp` bypasses Django's middleware: the MCP
edge does its own bearer-token auth. Websockets (/ws/graph/, the live graph; /ws/runs/, notebook cell runs) check
the Origin against ALLOWED_HOSTS and see the session user; the graph's consumer also takes bearer tokens.
"""
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Sets Django up, so it comes before anything that imports models.
django.setup(set_prefix=False)

from apps.core.handlers import PooledASGIHandler  # noqa: E402

# Django's views run on a fixed pool of threads, not a new thread per request, shared with the MCP edge's
# service calls (apps/core/handlers.py, apps/core/threads.py).
django_application = PooledASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from apps.graph.routing import websocket_urlpatterns as graph_sockets  # noqa: E402
from apps.mcp.asgi import McpEdge  # noqa: E402
from apps.reasoning.routing import websocket_urlpatterns as run_sockets  # noqa: E402

mcp_edge = McpEdge()


async def http_application(scope, receive, send):
    if McpEdge.handles(scope["path"]):
        return await mcp_edge(scope, receive, send)
    return await django_application(scope, receive, send)


application = ProtocolTypeRouter({
    "http": http_application,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter([*graph_sockets, *run_sockets]))),
    "lifespan": mcp_edge.lifespan,
})
