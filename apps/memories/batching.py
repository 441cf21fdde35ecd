"""One model call for many writers: concurrent stores share the embedding of their texts.

Every web or MCP store runs in a thread of its own. Each would run the model for its one text; together
they would queue on two cores, each call paying the model's fixed cost. Here they hand their texts to one
embedding thread, which takes whatever is waiting when it is free and encodes it in one batched call. An
idle process adds no delay (the first text is encoded at once); under load, texts that arrive while the
model runs wait for the next call, which encodes them together.

With several embedding threads (ENGRAM_EMBEDDING_WORKERS, one per core by default), a call of many texts
(an import's batch, a REST batch) is cut into one piece per thread and the pieces run at once: one ONNX
Runtime session serves concurrent runs, each on its caller's thread, so an import embeds on every core.
"""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

# Texts per model call at most: a call of this size keeps one waiting writer's latency near one batch's.
MAX_TEXTS = 64
# A call is cut into pieces for several threads only if each piece gets at least this many texts.
MIN_PIECE = 16


@dataclass
class _Job:
    texts: list[str]
    future: Future = field(default_factory=Future)
    piece: bool = False  # one piece of a cut call: encoded on its own, so that the pieces run at once


class Coalescer:
    """Runs `encode` (a list of texts -> a list of vectors) in one thread over the texts that callers of
    `embed` handed in meanwhile."""

    def __init__(self, encode: Callable[[list[str]], list], *, max_texts: int = MAX_TEXTS, name: str = "engram-embedding",
                 workers: int | Callable[[], int] = 1):
        """`workers`: how many embedding threads, or a function that says so when the first call starts them."""
        self._encode, self._max_texts, self._name, self._workers = encode, max_texts, name, workers
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()

    def embed(self, texts: list[str]) -> list:
        """The vectors of `texts`, encoded by the embedding threads, possibly with other callers' texts."""
        if not texts:
            return []
        self._ensure_threads()
        pieces = min(len(self._threads), len(texts) // MIN_PIECE) or 1
        size = -(-len(texts) // pieces)
        jobs = [_Job(list(texts[start:start + size]), piece=pieces > 1) for start in range(0, len(texts), size)]
        for job in jobs:
            self._jobs.put(job)
        return [vector for job in jobs for vector in job.future.result()]

    def _ensure_threads(self) -> None:
        if not self._threads or not all(thread.is_alive() for thread in self._threads):
            with self._start_lock:
                wanted = self._workers() if callable(self._workers) else self._workers
                self._threads = [thread for thread in self._threads if thread.is_alive()]
                while len(self._threads) < max(1, wanted):
                    thread = threading.Thread(target=self._run, name=f"{self._name}-{len(self._threads)}", daemon=True)
                    thread.start()
                    self._threads.append(thread)

    def _run(self) -> None:
        while True:
            jobs = [self._jobs.get()]
            count = len(jobs[0].texts)
            while count < self._max_texts and not jobs[0].piece:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job.piece:  # for another thread
                    self._jobs.put(job)
                    break
                jobs.append(job)
                count += len(job.texts)
            try:
                vectors = self._encode([text for job in jobs for text in job.texts])
            except BaseException as exc:  # each waiting caller gets the model's error, and the thread goes on
                for job in jobs:
                    job.future.set_exception(exc)
                continue
            start = 0
            for job in jobs:
                job.future.set_result(vectors[start:start + len(job.texts)])
                start += len(job.texts)
