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


def test_writers_arriving_while_one_writes_are_written_together_next():
    from apps.memories.batching import GroupCommit

    writes, writing, release = [], threading.Event(), threading.Event()

    def write(items):
        writes.append(list(items))
        if len(writes) == 1:
            writing.set()
            release.wait(10)
        return [item * 10 for item in items]

    group = GroupCommit(write)
    with ThreadPoolExecutor(max_workers=8) as pool:
        first = pool.submit(group.submit, 1)
        assert writing.wait(10)
        later = [pool.submit(group.submit, n) for n in range(2, 8)]
        while group.waiting() < len(later):
            threading.Event().wait(0.01)
        release.set()
        assert first.result() == 10
        assert [future.result() for future in later] == [n * 10 for n in range(2, 8)]  # each gets its own
    assert writes[0] == [1] and sorted(writes[1]) == list(range(2, 8)) and len(writes) == 2


def test_a_failing_group_is_written_item_by_item_so_only_the_bad_item_fails():
    from apps.memories.batching import GroupCommit

    writes, writing, release = [], threading.Event(), threading.Event()

    def write(items):
        writes.append(list(items))
        if len(writes) == 1:
            writing.set()
            release.wait(10)
        if "bad" in items:
            raise ValueError("refused")
        return [item.upper() for item in items]

    group = GroupCommit(write)
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = pool.submit(group.submit, "first")
        assert writing.wait(10)
        later = {name: pool.submit(group.submit, name) for name in ("a", "bad", "b")}
        while group.waiting() < len(later):
            threading.Event().wait(0.01)
        release.set()
        assert first.result() == "FIRST" and later["a"].result() == "A" and later["b"].result() == "B"
        with pytest.raises(ValueError, match="refused"):
            later["bad"].result()
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

    groups, writing, release = [], threading.Event(), threading.Event()
    real = store._concurrent_stores._write

    def write(items):
        groups.append(len(items))
        if len(groups) == 1:
            writing.set()
            release.wait(10)
        return real(items)

    monkeypatch.setattr(store._concurrent_stores, "_write", write)

    def stored(actor, n):
        try:
            return memory_store(actor=actor, content=f"{actor.username}'s ferry note {n}: the boat to the island leaves "
                                                     f"at {n} o'clock from pier {n % 3}")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:  # within the test database's pool of connections
        first = pool.submit(stored, user, 0)
        assert writing.wait(30)
        writers = [(actor, n) for n in range(1, 4) for actor in (user, other_user)]
        later = [pool.submit(stored, actor, n) for actor, n in writers]
        alice_cube = first_cube(user)
        bobs = [future for future, (actor, _) in zip(later, writers) if actor == other_user]
        for future in bobs:  # bob's cube has a group of its own: alice's held-up write holds none of his
            future.result(timeout=30)
        while store._concurrent_stores.waiting(alice_cube) < 3 and not any(f.done() for f in later):
            threading.Event().wait(0.01)
        release.set()
        results = [first.result(), *(future.result() for future in later)]
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
