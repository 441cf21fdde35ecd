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


@dataclass
class _Entry:
    item: object
    turn: threading.Event = field(default_factory=threading.Event)
    lead: bool = False
    result: object = None
    error: BaseException | None = None

    def outcome(self):
        if self.error is not None:
            raise self.error
        return self.result


@dataclass
class _Group:
    waiting: list[_Entry] = field(default_factory=list)
    leading: bool = False


class GroupCommit:
    """One transaction for many writers: concurrent writers of one key (a cube) hand their items to
    whichever of them arrived first (the leader), which writes everything waiting with `write` (items ->
    one result each, in order) in its own thread and wakes the others with their results; one still
    waiting then leads the next group. A lone writer writes at once, as if there were no group. Keys never
    share a group, so a write held up in one cube (a lock) holds up no other cube's. When a group's write
    fails, each of its items is written again on its own, so that an error reaches only its own writer."""

    def __init__(self, write: Callable[[list], list]):
        self._write = write
        self._lock = threading.Lock()
        self._groups: dict[object, _Group] = {}

    def submit(self, item, *, key: object = None):
        entry = _Entry(item)
        with self._lock:
            group = self._groups.setdefault(key, _Group())
            group.waiting.append(entry)
            lead, group.leading = not group.leading, True
        if not lead:
            entry.turn.wait()  # until the leader has written it, or hands this writer the lead
            if not entry.lead:
                return entry.outcome()
        return self._lead(entry, key)

    def waiting(self, key: object = None) -> int:
        """How many writers of `key` wait for a leader to take their items."""
        with self._lock:
            group = self._groups.get(key)
            return len(group.waiting) if group else 0

    def _lead(self, own: _Entry, key: object):
        with self._lock:
            group = self._groups[key]
            taken, group.waiting = group.waiting, []
        try:
            self._write_group(taken)
        finally:
            with self._lock:
                successor = group.waiting[0] if group.waiting else None
                group.leading = successor is not None
                if successor is None:
                    del self._groups[key]
            if successor is not None:
                successor.lead = True
                successor.turn.set()
            for entry in taken:
                if entry is not own:
                    entry.turn.set()
        return own.outcome()

    def _write_group(self, group: list[_Entry]) -> None:
        try:
            results = self._write([entry.item for entry in group])
        except Exception as exc:
            if len(group) == 1:
                group[0].error = exc
                return
            for entry in group:
                self._write_group([entry])
            return
        except BaseException as exc:  # the leader is interrupted: the others learn it, and it goes on up
            for entry in group:
                entry.error = exc
            raise
        for entry, result in zip(group, results):
            entry.result = result
