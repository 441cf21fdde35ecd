"""The embedding thread that concurrent stores share (apps/memories/batching.py)."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from apps.memories.batching import Coalescer
from apps.memories.embeddings import embed_texts
from apps.memories.sectors import embed_contents

pytestmark = pytest.mark.timeout(60)


def test_writers_waiting_while_the_model_runs_share_its_next_call():
    calls, running, release = [], threading.Event(), threading.Event()

    def encode(texts):
        calls.append(list(texts))
        if len(calls) == 1:
            running.set()
            release.wait(10)
        return [[len(text)] for text in texts]

    coalescer = Coalescer(encode)
    with ThreadPoolExecutor(max_workers=8) as pool:
        first = pool.submit(coalescer.embed, ["a"])
        assert running.wait(10)
        later = [pool.submit(coalescer.embed, ["b" * n, "c" * n]) for n in range(2, 9)]
        while coalescer._jobs.qsize() < len(later):
            threading.Event().wait(0.01)
        release.set()
        assert first.result() == [[1]]
        assert [future.result() for future in later] == [[[n], [n]] for n in range(2, 9)]  # each gets its own
    assert len(calls) == 2 and len(calls[1]) == 14


def test_a_model_error_reaches_every_waiting_writer_and_the_thread_goes_on():
    failing = [True]

    def encode(texts):
        if failing[0]:
            raise ValueError("the model broke")
        return [[0.0] for _ in texts]

    coalescer = Coalescer(encode)
    with pytest.raises(ValueError, match="the model broke"):
        coalescer.embed(["x"])
    failing[0] = False
    assert coalescer.embed(["y", "z"]) == [[0.0], [0.0]]
    assert coalescer.embed([]) == []


def test_concurrent_stores_get_the_vectors_the_model_gives_each_text():
    texts = [f"Memory {n}: the ferry to the island leaves at {n} o'clock" for n in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda text: embed_contents([text])[0], texts))
    expected = embed_texts(texts)
    for result, vector in zip(results, expected):
        assert np.allclose(result.vector, vector, atol=1e-5)


def test_a_large_call_is_cut_into_pieces_that_run_at_once_in_order():
    both_running = threading.Barrier(2, timeout=10)  # one thread at a time would wait out the timeout
    threads = set()

    def encode(texts):
        threads.add(threading.current_thread().name)
        both_running.wait()
        return [[int(text)] for text in texts]

    coalescer = Coalescer(encode, workers=lambda: 2)
    texts = [str(n) for n in range(40)]
    assert coalescer.embed(texts) == [[n] for n in range(40)]
    assert len(threads) == 2


def test_a_small_call_stays_whole():
    calls = []
    coalescer = Coalescer(lambda texts: calls.append(len(texts)) or [[0]] * len(texts), workers=2)
    coalescer.embed(["a"] * 31)  # two pieces would hold fewer than MIN_PIECE texts each
    assert calls == [31]
