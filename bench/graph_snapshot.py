"""Latency of the graph snapshot (GET /api/v1/graph/snapshot/) on a large corpus: p50/p95.

    .venv/bin/python bench/graph_snapshot.py --db engram_bench_10k  --user bench-corpus   # read only
    .venv/bin/python bench/graph_snapshot.py --db engram_bench_100k --user bench-corpus   # read only
    .venv/bin/python bench/graph_snapshot.py --db engram_bench_graph_100k --seed 100000   # a graph of its own

With --user, the database must exist already (bench/corpus.py builds engram_bench_10k and _100k); it is
only read: no migration, no token, no session (the view is called in process through DRF's
APIRequestFactory with force_authenticate, so the figures are the view's own work: its queries
and the JSON, without HTTP). With --seed N, the script seeds N memories and 3N links into a
database of its own (bench/graph_fps.py's seeding) on first use. Each case runs 2 warm-up calls,
then --repeat timed ones: all cubes and the user's own cube, at the default cap (2000) and the
largest (10000).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import load_average, machine, percentiles, setup_django, write_json  # noqa: E402


def open_read_only(database: str) -> None:
    """Django on an existing benchmark database, without creating or migrating anything."""
    os.environ["ENGRAM_BENCH_DB"] = database
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.bench"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from django.db import connection
    from django.db.utils import OperationalError

    try:
        connection.ensure_connection()
    except OperationalError as exc:
        raise SystemExit(f"Database {database} is not there ({exc}); build it with bench/corpus.py, "
                         "or use --seed for a graph of its own.") from None
    if "graph_graphevent" not in connection.introspection.table_names():
        raise SystemExit(f"Database {database} predates the live graph (no graph_graphevent table): "
                         "migrate it first, or use --seed.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", help="the corpus owner of an existing database (read only)")
    who.add_argument("--seed", type=int, help="seed this many memories (and 3x links) into --db first")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    if args.user:
        open_read_only(args.db)
    else:
        setup_django(args.db)
    from rest_framework.test import APIRequestFactory, force_authenticate

    from apps.accounts.models import User
    from apps.cubes.selectors import cube_list
    from apps.graph.api.views import GraphSnapshotView
    from apps.memories.models import Memory, MemoryLink

    if args.user:
        user = User.objects.get(username=args.user)
    else:
        from bench.common import bench_user
        from bench.graph_fps import seed_graph

        user = bench_user("bench-graph")
        seed_graph(user, nodes=args.seed, edges=args.seed * 3)
    cube = cube_list(actor=user).first()
    memories = Memory.objects.filter(cube__in=cube_list(actor=user), deleted_at__isnull=True).count()
    links = MemoryLink.objects.filter(source__cube__in=cube_list(actor=user)).count()
    view = GraphSnapshotView.as_view()
    factory = APIRequestFactory()

    def call(params: dict) -> dict:
        request = factory.get("/api/v1/graph/snapshot/", params)
        force_authenticate(request, user=user)
        response = view(request)
        if hasattr(response, "render"):  # a DRF Response (errors, and the view before it sent finished JSON)
            response.render()
        assert response.status_code == 200, response.content
        return json.loads(response.content)

    figures = {"database": args.db, "memories": memories, "links": links, "machine": machine(), "cases": {}}
    for label, params in (("all cubes, limit 2000", {}), ("all cubes, limit 10000", {"limit": 10000}),
                          ("one cube, limit 2000", {"cube": cube.pk}),
                          ("one cube, min_strength 0.5, limit 10000", {"cube": cube.pk, "min_strength": 0.5,
                                                                        "limit": 10000})):
        body = {}
        for _ in range(2):
            body = call(params)
        samples = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            call(params)
            samples.append((time.perf_counter() - started) * 1000)
        figures["cases"][label] = {**percentiles(samples), "nodes": body["shown_nodes"], "edges": len(body["edges"]),
                                   "total_nodes": body["total_nodes"]}
        print(label, figures["cases"][label], flush=True)
    figures["load_average_after"] = load_average()
    print(json.dumps(figures, indent=2))
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
