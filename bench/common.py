"""What every benchmark shares: a database of its own, a bench user, timing figures, the machine."""
from __future__ import annotations

import cProfile
import json
import os
import platform
import pstats
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def setup_django(database: str) -> None:
    """Point Django at the benchmark database ``database``, creating and migrating it when missing.

    Must run before anything imports a model. The database stays between runs (a corpus is built once).
    """
    os.environ["ENGRAM_BENCH_DB"] = database
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.bench"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    _ensure_database(database)
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _ensure_database(database: str) -> None:
    with _server_connection() as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')


def fresh_database(database: str) -> None:
    """Drop ``database`` (a benchmark's or a script's own, never Engram's), then make and migrate it again: every run
    starts from an empty database."""
    if not database.startswith(("engram_bench", "engram_screenshots")):
        raise SystemExit(f"{database}: a script drops only its own database (engram_bench* or engram_screenshots).")
    os.environ["ENGRAM_BENCH_DB"] = database
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.bench"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    with _server_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    setup_django(database)


def clone_database(source: str, target: str) -> None:
    """Make ``target`` afresh as a copy of ``source`` (CREATE DATABASE ... TEMPLATE): a run that changes data, such
    as MCP calls that reinforce what they return, works on the copy and leaves ``source`` as it was."""
    if not target.startswith("engram_bench") or target == source:
        raise SystemExit(f"{target}: a script clones only into a benchmark database of its own (engram_bench*).")
    from django.db import connections

    connections.close_all()  # a template database must have no one connected, this process included
    with _server_connection() as conn:
        # What is left are the idle connections of this process's other threads (memory_store_many's workers):
        # the database is the script's own, as for fresh_database's FORCE.
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                     "AND pid <> pg_backend_pid()", [source])
        conn.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')


def drop_database(database: str) -> None:
    """Drop a benchmark's own database (engram_bench*), e.g. a copy made by clone_database."""
    if not database.startswith("engram_bench"):
        raise SystemExit(f"{database}: a script drops only its own database (engram_bench*).")
    with _server_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def _server_connection():
    """An autocommit connection to the server's `postgres` database (CREATE and DROP DATABASE run outside any)."""
    import psycopg
    from django.conf import settings

    if settings.EMBEDDED_DATABASE:  # it starts on Django's first connection; this one comes before
        from apps.core.embedded_postgres import ensure_running

        ensure_running(settings.VAR_DIR)
    params = settings.DATABASES["default"]
    return psycopg.connect(dbname="postgres", user=params["USER"], password=params.get("PASSWORD") or None,
                           host=params["HOST"] or None, port=params.get("PORT") or None, autocommit=True)


def bench_user(username: str):
    """A user of the benchmark database (created on first use), with a personal cube."""
    from apps.accounts.models import User

    user, _ = User.objects.get_or_create(username=username, defaults={"email": f"{username}@bench.invalid"})
    return user


def percentiles(samples_ms: list[float]) -> dict:
    ordered = sorted(samples_ms)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]

    return {"n": len(ordered), "p50": round(at(0.50), 1), "p95": round(at(0.95), 1),
            "mean": round(statistics.fmean(ordered), 1), "max": round(ordered[-1], 1)}


def machine() -> str:
    import torch
    from django.conf import settings

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores ({cpu}), {memory_gib:.0f} GiB RAM, Python {platform.python_version()}, "
            f"torch {torch.__version__} (CPU, ENGRAM_EMBEDDING_THREADS={settings.ENGRAM_EMBEDDING_THREADS}); "
            f"load average now {load_average()}")


def load_average() -> str:
    """The machine is shared: figures taken while other work runs are slower, so each run says how busy."""
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def write_json(path, figures) -> None:
    """--json FILE: the figures a script printed, for other tools (bench/results/ is gitignored)."""
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(figures, indent=2))


def profiled(call, top: int):
    """Run ``call`` under cProfile and print its largest costs, by own time and by cumulative time."""
    profile = cProfile.Profile()
    result = profile.runcall(call)
    for order in ("tottime", "cumulative"):
        print(f"\n--- cProfile, by {order}")
        pstats.Stats(profile).strip_dirs().sort_stats(order).print_stats(top)
    return result
