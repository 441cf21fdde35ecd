"""The embedding thread that concurrent stores share (apps/memories/batching.py)."""
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pytest

from apps.memories.batching import Coalescer, GroupCommit
from apps.memories import embeddings
from apps.memories.embeddings import embed_texts
from apps.memories.sectors import embed_contents

pytestmark = pytest.mark.timeout(60)


class FirstCallHeld:
    """`function` (of a list), recording each call's list; the first call waits until the others queued."""

    def __init__(self, function):
        self.function, self.calls = function, []
        self.running, self.released = threading.Event(), threading.Event()

    def __call__(self, items):
        self.calls.append(list(items))
        if len(self.calls) == 1:
            self.running.set()
            self.released.wait(10)
        return self.function(items)

    def run(self, pool, first, later, queued):
        """Submits `first` (a callable), and once its call is held the `later` ones; releases it when queued()
        reaches len(later). The futures of first and of later."""
        first_future = pool.submit(first)
        assert self.running.wait(30)
        later_futures = [pool.submit(call) for call in later]
        while queued() < len(later) and not any(future.done() for future in later_futures):
            threading.Event().wait(0.01)
        self.released.set()
        return first_future, later_futures


def test_writers_waiting_while_the_model_runs_share_its_next_call():
    encode = FirstCallHeld(lambda texts: [[len(text)] for text in texts])
    coalescer = Coalescer(encode)
    with ThreadPoolExecutor(max_workers=8) as pool:
        first, later = encode.run(pool, lambda: coalescer.embed(["a"]),
                                  [partial(coalescer.embed, ["b" * n, "c" * n]) for n in range(2, 9)],
                                  coalescer._jobs.qsize)
        assert first.result() == [[1]]
        assert [future.result() for future in later] == [[[n], [n]] for n in range(2, 9)]  # each gets its own
    assert len(encode.calls) == 2 and len(encode.calls[1]) == 14


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


@pytest.mark.parametrize("variant", ["fp32", "int8-partial"])
def test_concurrent_stores_get_the_vectors_the_model_gives_each_text(settings, monkeypatch, variant):
    settings.ENGRAM_EMBEDDING_INT8 = variant
    monkeypatch.setattr(embeddings, "_text_encoder", None)
    texts = [f"Memory {n}: the ferry to the island leaves at {n} o'clock" for n in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda text: embed_contents([text])[0], texts))
    expected = embed_texts(texts)
    for result, vector in zip(results, expected):
        if variant == "fp32":
            assert np.allclose(result.vector, vector, atol=1e-5)
        else:  # int8 activations are scaled per batch: the batch mates move a vector, a little
            assert float(np.dot(result.vector, vector)) > 0.99


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


def test_writers_arriving_while_one_writes_are_written_together_next():
    write = FirstCallHeld(lambda items: [item * 10 for item in items])
    group = GroupCommit(write)
    with ThreadPoolExecutor(max_workers=8) as pool:
        first, later = write.run(pool, partial(group.submit, 1), [partial(group.submit, n) for n in range(2, 8)],
                                 group.waiting)
        assert first.result() == 10
        assert [future.result() for future in later] == [n * 10 for n in range(2, 8)]  # each gets its own
    assert write.calls[0] == [1] and sorted(write.calls[1]) == list(range(2, 8)) and len(write.calls) == 2


def refuse_bad(items):
    if "bad" in items:
        raise ValueError("refused")
    return [item.upper() for item in items]


def test_a_failing_group_is_written_item_by_item_so_only_the_bad_item_fails():
    write = FirstCallHeld(refuse_bad)
    group = GroupCommit(write)
    with ThreadPoolExecutor(max_workers=4) as pool:
        first, (a, bad, b) = write.run(pool, partial(group.submit, "first"),
                                       [partial(group.submit, name) for name in ("a", "bad", "b")], group.waiting)
        assert first.result() == "FIRST" and a.result() == "A" and b.result() == "B"
        with pytest.raises(ValueError, match="refused"):
            bad.result()
    writes = write.calls
    assert sorted(writes[1]) == ["a", "b", "bad"] and sorted(map(tuple, writes[2:])) == [("a",), ("b",), ("bad",)]
    assert group.submit("alone") == "ALONE" and writes[-1] == ["alone"]  # the lead was handed back


def first_cube(actor) -> str:
    from apps.cubes.models import Cube

    return Cube.objects.get(owner=actor, is_personal=True).pk


@pytest.mark.django_db(transaction=True)
def test_concurrent_single_stores_into_a_cube_commit_together_and_other_cubes_do_not_wait(user, other_user, monkeypatch):
    from django.db import connection

    from apps.graph.models import GraphEvent
    from apps.memories.models import Memory, MemoryLink, MemoryVector
    from apps.memories.services import memory_store, store

    write = FirstCallHeld(store._concurrent_stores._write)
    monkeypatch.setattr(store._concurrent_stores, "_write", write)

    def stored(actor, n):
        try:
            return memory_store(actor=actor, content=f"{actor.username}'s ferry note {n}: the boat to the island leaves "
                                                     f"at {n} o'clock from pier {n % 3}")
        finally:
            connection.close()

    def alices_waiting() -> int:  # bob's cube has a group of its own: alice's held-up write holds none of his
        if not all(future.done() for future in bobs):
            return 0
        return 3 * (store._concurrent_stores.waiting(first_cube(user)) >= 3)

    writers = [(actor, n) for n in range(1, 4) for actor in (user, other_user)]
    with ThreadPoolExecutor(max_workers=8) as pool:  # within the test database's pool of connections
        first = pool.submit(stored, user, 0)
        assert write.running.wait(30)
        later = [pool.submit(stored, actor, n) for actor, n in writers]
        bobs = [future for future, (actor, _) in zip(later, writers) if actor == other_user]
        while alices_waiting() < 3:
            threading.Event().wait(0.01)
        write.released.set()
        results = [first.result(), *(future.result() for future in later)]
    groups = [len(call) for call in write.calls]
    assert groups[0] == 1 and groups[-1] == 3  # alice's three that waited were written in one transaction
    ids = [result.memory.pk for result in results]
    assert Memory.objects.filter(pk__in=ids).count() == MemoryVector.objects.filter(memory_id__in=ids).count() == 7
    for result in results:
        links = MemoryLink.objects.filter(source_id=result.memory.pk)
        assert links.count() == result.links_created
        assert all(link.target.owner_id == result.memory.owner_id for link in links)  # never across users
    # one graph event per cube and transaction: alice's first, then her three together
    events = GraphEvent.objects.filter(kind="memories.created")
    assert [len(event.payload["nodes"]) for event in events.filter(cube_id=first_cube(user))] == [1, 3]
    assert sum(len(event.payload["nodes"]) for event in events.filter(cube_id=first_cube(other_user))) == 3
