"""One model call for many writers: concurrent stores share the embedding of their texts.

Every web or MCP store runs in a thread of its own. Each would run the model for its one text; together
they would queue on two cores, each call paying the model's fixed cost. Here they hand their texts to one
embedding thread, which takes whatever is waiting when it is free and encodes it in one batched call. An
idle process adds no delay (the first text is encoded at once); under load, texts that arrive while the
model runs wait for the next call, which encodes them together.
"""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

# Texts per model call at most: a call of this size keeps one waiting writer's latency near one batch's.
MAX_TEXTS = 64


@dataclass
class _Job:
    texts: list[str]
    future: Future = field(default_factory=Future)


class Coalescer:
    """Runs `encode` (a list of texts -> a list of vectors) in one thread over the texts that callers of
    `embed` handed in meanwhile."""

    def __init__(self, encode: Callable[[list[str]], list], *, max_texts: int = MAX_TEXTS, name: str = "engram-embedding"):
        self._encode, self._max_texts, self._name = encode, max_texts, name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def embed(self, texts: list[str]) -> list:
        """The vectors of `texts`, encoded in the embedding thread, possibly with other callers' texts."""
        if not texts:
            return []
        job = _Job(list(texts))
        self._ensure_thread()
        self._jobs.put(job)
        return job.future.result()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            with self._start_lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        while True:
            jobs = [self._jobs.get()]
            count = len(jobs[0].texts)
            while count < self._max_texts:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
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
