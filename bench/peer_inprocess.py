"""mcp-memory-service's batch store, called in-process: bench/peer.py runs this with the peer's own venv.

mcp-memory-service 12.4 has no batch store over HTTP or MCP; `store_batch` (one model call per batch,
one transaction) is reachable only from Python, so this is how its batch rate is measured. Storage
is made by the peer's own factory from its environment (bench/peer.py's `peer_env`). Protocol, one
JSON document per line: this prints {"ready": true} once the model is loaded; then, for each line
read (a list of {"content", "tags"}), it stores them as one batch and prints {"seconds", "stored"}.
Needs only the standard library and mcp_memory_service: it never imports Engram.
"""
import asyncio
import json
import os
import sys
import time

from mcp_memory_service.models.memory import Memory
from mcp_memory_service.storage.factory import create_storage_instance
from mcp_memory_service.utils.hashing import generate_content_hash


def answer(stream, document: dict) -> None:
    stream.write(json.dumps(document) + "\n")
    stream.flush()


async def main() -> None:
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the peer prints goes to stderr, never into the answers
    storage = await create_storage_instance(os.path.join(os.environ["MCP_MEMORY_BASE_DIR"], "sqlite_vec.db"))
    answer(answers, {"ready": True})
    for line in sys.stdin:
        memories = [Memory(content=item["content"], content_hash=generate_content_hash(item["content"]),
                           tags=item["tags"]) for item in json.loads(line)]
        started = time.perf_counter()
        results = await storage.store_batch(memories)
        seconds = time.perf_counter() - started
        answer(answers, {"seconds": seconds, "stored": sum(1 for ok, _ in results if ok)})
    await storage.close()


if __name__ == "__main__":
    asyncio.run(main())
