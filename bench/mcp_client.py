"""Recall through the MCP path agents use: ThoughtMCP's retrieve_memories on a real server, for recall benchmarks.

    with mcp_retriever(database, users) as retrieve:
        ids = retrieve(user, "Where does Maya live now?", 10)    # memory ids (str), best first
        turns = labelled(retrieve, users)(user, "Where does Maya live now?", 10)   # their metadata's dia_id

A real uvicorn server of this checkout (bench/perf.py's rest_server) answers one stateless JSON-RPC tools/call per
question over streamable HTTP (bench/perf.py's mcp_call), with a bearer token of each bench user's own (read scope),
exactly as an MCP client sends it. The tool reinforces what it returns, as it does for agents; so by default the
server runs on a fresh copy of the database (``<database>_mcp``), dropped afterwards, and the figures of a later run
start from the same data. The tokens are deleted on the way out.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import clone_database, drop_database  # noqa: E402
from bench.perf import mcp_call, rest_server  # noqa: E402

TOKEN_NAME = "bench-mcp-recall"


@contextmanager
def mcp_retriever(database: str, users, *, copy: bool = True):
    """Yield ``retrieve(user, query, limit) -> [memory id]`` answered by retrieve_memories for any of ``users``.

    Must run after setup_django(database). ``copy=False`` serves ``database`` itself (its memories get reinforced).
    """
    from apps.accounts.models import ApiToken
    from apps.accounts.services import token_create

    users = list(users)
    tokens = {user.pk: token_create(actor=user, name=TOKEN_NAME, scopes=["read"]).raw for user in users}
    served = f"{database}_mcp" if copy else database
    try:
        if copy:
            clone_database(database, served)
        with rest_server(served, next(iter(tokens.values()))) as client:
            def retrieve(user, query: str, limit: int) -> list[str]:
                call = mcp_call(client, "retrieve_memories", str(user.pk), limit=limit, token=tokens[user.pk])
                return [memory["id"] for memory in call(query)["data"]["memories"]]

            yield retrieve
    finally:
        ApiToken.objects.filter(name=TOKEN_NAME, user__in=users).delete()
        if copy:
            drop_database(served)


def labelled(retrieve, users, key: str = "dia_id"):
    """``retrieve`` answering with each memory's ``metadata[key]`` instead of its id: the turn ids that LoCoMo's and
    the multi-session set's evidence lists name, read once for all of ``users``' memories."""
    from apps.memories.models import Memory

    labels = {str(pk): label for pk, label in
              Memory.objects.filter(owner__in=list(users)).values_list("pk", f"metadata__{key}")}
    return lambda user, query, limit: [labels[pk] for pk in retrieve(user, query, limit)]
