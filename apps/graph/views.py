"""The live memory graph page (/graph/). The page itself is drawn in the browser (frontend/); this view only
checks the cube asked for and hands the page its configuration."""
from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse

from apps.cubes.selectors import cube_list
from apps.memories.models import Memory, MemoryLink, Sector

# Reversing a <uuid:> URL needs a UUID; the graph page substitutes real ids for it.
UUID_PLACEHOLDER = uuid.UUID(int=0)
GRAPH_FILTERS = ("kind", "sector", "tag", "date_from", "date_to", "min_strength", "limit")
GRAPH_LIMITS = ("500", "2000", "5000", "10000")
GRAPH_DEFAULT_LIMIT = "5000"


@login_required
def graph(request):
    """The live memory graph (frontend/, built into static/graph/): one cube (?cube=) or every readable
    one. The page loads its nodes from the snapshot endpoint and follows /ws/graph/; curation goes
    through the REST endpoints, which call the same services as the rest of the dashboard."""
    cubes = list(cube_list(actor=request.user))
    cube_id = request.GET.get("cube") or ""
    if cube_id and cube_id not in {cube.pk for cube in cubes}:
        # Someone else's cube and one that does not exist get the same answer.
        return render(request, "graph/graph.html", {
            "cubes": cubes, "refused": f"Cube '{cube_id}' not found: there is no cube of that id that you may "
                                       "read. Choose one of your cubes, or all of them.",
        }, status=404)
    limit = request.GET.get("limit") or GRAPH_DEFAULT_LIMIT
    config = {
        "cube": cube_id,
        "cubes": [{"id": cube.pk, "name": cube.name} for cube in cubes],
        "filters": {**{name: request.GET.get(name, "") for name in GRAPH_FILTERS}, "limit": limit},
        "kinds": [{"value": value, "label": label} for value, label in Memory.Kind.choices],
        "sectors": [{"value": value, "label": label} for value, label in Sector.choices],
        "linkTypes": [{"value": value, "label": label} for value, label in MemoryLink.LinkType.choices],
        "urls": {
            "snapshot": reverse("graph_api:graph-snapshot"),
            "memory": reverse("memories_api:memory-detail", args=["MEMORY_ID"]),
            "links": reverse("memories_api:memory-links", args=["MEMORY_ID"]),
            "restore": reverse("memories_api:memory-restore", args=["MEMORY_ID"]),
            "boost": reverse("graph_api:graph-memory-boost", args=["MEMORY_ID"]),
            "linkCreate": reverse("graph_api:graph-link-create"),
            "linkDelete": reverse("graph_api:graph-link-delete", args=["SOURCE_ID", "TARGET_ID"]),
            "page": reverse("dashboard:memory-detail", args=[UUID_PLACEHOLDER]).replace(str(UUID_PLACEHOLDER), "MEMORY_ID"),
            "edit": reverse("dashboard:memory-edit", args=[UUID_PLACEHOLDER]).replace(str(UUID_PLACEHOLDER), "MEMORY_ID"),
            "socket": "/ws/graph/",
            "causalPath": reverse("cognition_api:causal-path"),
            "causalExpand": reverse("cognition_api:causal-expand"),
        },
    }
    return render(request, "graph/graph.html", {
        "cubes": cubes, "cube_id": cube_id, "config": config, "sectors": Sector.choices, "kinds": Memory.Kind.choices,
        "limits": sorted({*GRAPH_LIMITS, limit}, key=lambda value: (not value.isdigit(), int(value) if value.isdigit() else 0)),
        "limit": limit,
    })
