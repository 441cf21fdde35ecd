"""The home page: counts, recent memories and how to connect an agent. The other pages live with their app
(apps/<app>/views.py); apps/dashboard/urls.py puts them together under one navigation."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from apps.core.pages import MCP_PATH
from apps.cubes.selectors import cube_list
from apps.memories.selectors import memory_counts, memory_list

RECENT_MEMORIES = 10


@login_required
def home(request):
    counts = memory_counts(actor=request.user)
    return render(request, "dashboard/home.html", {
        "counts": counts,
        "cube_count": cube_list(actor=request.user).count(),
        "recent": memory_list(actor=request.user)[:RECENT_MEMORIES],
        "is_new": counts["total"] == 0 and counts["deleted"] == 0,
        "mcp_url": request.build_absolute_uri(MCP_PATH),
    })
