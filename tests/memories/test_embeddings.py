"""Embeddings by ONNX Runtime (the default): an int8 model exported from the loaded one, close to the
full model's vectors and neighbours, with torch taking over when onnxruntime is missing or the export
embeds differently. With the torch backend, query embeddings come from an int8 copy of the model,
traced by TorchScript: close to the full model's, never the same object unless switched off, and
exactly what encode() would give."""
import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from apps.memories import embeddings, onnx_encoder

QUESTIONS = ["What did Maria make for her home to remind her of a trip?", "Which editor theme does the user prefer?"]
# LoCoMo-like memories, and a question whose nearest memory is the one at the same index.
MEMORIES = [
    "Maria: I painted a small canvas of the harbour at Lisbon to hang by the door, it reminds me of our trip.",
    "Sam: I switched my editor to the solarized dark theme because the light one hurt my eyes at night.",
    "Caroline: The support group meeting on Tuesday made me want to research adoption agencies.",
    "Melanie: We went camping by the lake with the kids and roasted marshmallows every evening.",
    "Jon: My dance studio finally opened last week and twenty people came to the first class.",
    "Gina: I lost my job at the bank, so I am starting my own clothing store online.",
]
ASKED = [
    "What did Maria make to remember the trip?",
    "Which editor theme does Sam use?",
    "What did Caroline decide to research after the support group?",
    "Where did Melanie go camping?",
    "When did Jon open his dance studio?",
    "What business is Gina starting?",
]


@pytest.fixture
def fresh_query_model(monkeypatch):
    """Every encoder is built again for the test (and the process's own are put back after it)."""
    monkeypatch.setattr(embeddings, "_query_model", None)
    monkeypatch.setattr(embeddings, "_query_encoder", None)
    monkeypatch.setattr(embeddings, "_text_encoder", None)
    monkeypatch.setattr(embeddings, "_onnx_encoders", {})


@pytest.fixture
def torch_backend(fresh_query_model, settings):
    settings.ENGRAM_EMBEDDING_BACKEND = "torch"


def full_model(texts):
    """The full-precision torch model's vectors, as memories were stored before ONNX Runtime."""
    return np.array(embeddings._encode(embeddings.get_model(), texts))


def cosines(a, b):
    return (np.asarray(a) * np.asarray(b)).sum(1)


def test_memory_vectors_from_onnx_int8_agree_with_the_full_model(fresh_query_model, settings):
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"
    settings.ENGRAM_EMBEDDING_INT8 = "int8"
    vectors = np.array(embeddings.embed_texts(MEMORIES + ASKED))
    assert embeddings.get_text_encoder() is embeddings._onnx_encoders["int8"]  # ONNX Runtime ran, not torch
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-5)
    agreement = cosines(vectors, full_model(MEMORIES + ASKED))
    assert agreement.mean() > 0.99 and agreement.min() > 0.97
    # each question's nearest memory is the one the full model finds
    memories, asked = vectors[:len(MEMORIES)], vectors[len(MEMORIES):]
    assert list((asked @ memories.T).argmax(1)) == list(range(len(ASKED)))


def test_query_vectors_from_onnx_int8_are_the_memories_model_and_close_to_the_full_model(fresh_query_model, settings):
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"
    settings.ENGRAM_EMBEDDING_INT8 = "int8"
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = True
    for question in QUESTIONS:
        query = embeddings.embed_query(question)
        assert query == pytest.approx(embeddings.embed_texts([question])[0], abs=1e-6)  # one session for both
        assert float(np.dot(query, full_model([question])[0])) > 0.97
    # questions against memories stored by the full model (a database from before): same nearest memory
    queries = np.array([embeddings.embed_query(question) for question in ASKED])
    assert list((queries @ full_model(MEMORIES).T).argmax(1)) == list(range(len(ASKED)))


def test_onnx_fp32_gives_the_full_models_vectors(fresh_query_model, settings):
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"
    settings.ENGRAM_EMBEDDING_INT8 = "fp32"
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = False
    texts = MEMORIES + ["a", "Ünïcödé — 東京 café ☕ naïve", "deploy " * 600]  # the last one truncated alike
    assert embeddings.get_text_encoder() is embeddings._onnx_encoders["fp32"]
    assert np.array(embeddings.embed_texts(texts)) == pytest.approx(full_model(texts), abs=1e-4)
    assert embeddings.embed_query(QUESTIONS[0]) == pytest.approx(full_model(QUESTIONS[:1])[0], abs=1e-4)


def test_without_onnxruntime_torch_embeds_as_before(fresh_query_model, settings, monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger=embeddings.__name__)
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = True
    settings.ENGRAM_QUERY_EMBEDDING_TRACED = True
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime raises ImportError
    assert np.array(embeddings.embed_texts(MEMORIES)) == pytest.approx(full_model(MEMORIES), abs=1e-6)
    assert "so the fp32 file or torch does: onnxruntime is not installed" in caplog.text
    # queries: the torch int8 copy, traced, as with ENGRAM_EMBEDDING_BACKEND=torch
    assert getattr(embeddings.get_query_encoder(), "__name__", "") == "encode"
    assert embeddings.get_query_model() is not embeddings.get_model()


def test_an_export_that_embeds_differently_is_not_used(fresh_query_model, settings, monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger=embeddings.__name__)
    settings.ENGRAM_EMBEDDING_BACKEND = "onnx"

    class RandomSession:
        def run(self, outputs, inputs):
            return [np.random.default_rng(0).standard_normal((inputs["input_ids"].shape[0], 384), dtype=np.float32)]

    monkeypatch.setattr(onnx_encoder, "new_session", lambda *args, **kwargs: RandomSession())
    assert np.array(embeddings.embed_texts(MEMORIES[:2])) == pytest.approx(full_model(MEMORIES[:2]), abs=1e-6)
    # which probe fails first depends on the random rows and the memories' variant's check
    assert "differently from the torch model" in caplog.text


def test_the_export_is_made_once_and_kept(fresh_query_model, settings, monkeypatch):
    source = embeddings._model_path()
    real = onnx_encoder.model_file(source, settings.ENGRAM_EMBEDDING_CACHE_DIR, variant="int8")
    assert real.parent == settings.ENGRAM_EMBEDDING_CACHE_DIR
    assert real.name.startswith(f"{source.parent.name}-{source.name}-")
    assert real.name.endswith(".int8.onnx") and real.with_name(real.name.replace(".int8", "")).exists()

    def refuse(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder, "export_in_child", refuse)
    assert onnx_encoder.model_file(source, settings.ENGRAM_EMBEDDING_CACHE_DIR, variant="int8") == real
    probes = json.loads(onnx_encoder._probes_file(onnx_encoder._fp32_of(real, "int8")).read_text())
    assert probes["probes"] == list(onnx_encoder.PROBES) and len(probes["vectors"][0]) == 384


# Texts whose tokens the tokenizer.json must give exactly as sentence-transformers' own tokenizer does.
TOKENIZED = ["", " ", "x", "  leading and trailing  ", "Tomás' café\tnaïve 東京 ☕", "a\nb\r\nc",
             "\u00a0no-break\u2003em space", "don't stop—ever!!", "deploy " * 600] + MEMORIES


def test_the_tokenizer_file_tokenizes_as_the_model_does():
    model = embeddings.get_model()
    expected = model.preprocess(TOKENIZED)
    got = embeddings.get_tokenizer().features(TOKENIZED)
    assert np.array_equal(got["input_ids"], expected["input_ids"].numpy())
    assert np.array_equal(got["attention_mask"], expected["attention_mask"].numpy())
    own = model.tokenizer(TOKENIZED, truncation=True, max_length=model.get_max_seq_length())["input_ids"]
    assert embeddings.count_tokens(TOKENIZED) == [len(ids) for ids in own]
    assert embeddings.count_tokens(["deploy " * 600]) == [model.get_max_seq_length()]


def test_a_long_text_is_cut_into_the_windows_the_model_reads(monkeypatch):
    long_text = " ".join(f"Station {n} logged a passing ship at dusk." for n in range(400))
    texts = [long_text, "Sam switched his editor theme.", "deploy " * 600]
    windows = embeddings.token_windows(texts)
    assert [(piece.lower(), count) for piece, count in windows[1]] == [
        ("sam switched his editor theme.", embeddings.count_tokens([texts[1]])[0])]
    assert len(windows[0]) > 5 and len(windows[2]) > 1
    for pieces in windows:
        # Every window but the last is full, and each piece is read whole: its own count is its window's.
        assert [count for _, count in pieces[:-1]] == [256] * (len(pieces) - 1)
        assert all(abs(own - count) <= 1 for own, (_, count) in
                   zip(embeddings.count_tokens([piece for piece, _ in pieces]), pieces))
    # Without a tokenizer file, the model's own tokenizer cuts the same windows.
    monkeypatch.setattr(embeddings, "get_tokenizer", lambda: (_ for _ in ()).throw(onnx_encoder.OnnxUnavailable("x")))
    fallback = embeddings.token_windows(texts)
    def lowered(found):
        return [[(piece.lower(), count) for piece, count in pieces] for pieces in found]

    assert lowered(fallback) == lowered(windows)


EMBEDS_WITHOUT_TORCH = """
import json, sys
import django
django.setup()
from apps.memories import embeddings
vectors = embeddings.embed_texts(["Sam switched his editor theme.", "Maria painted the harbour."])
query = embeddings.embed_query("Which theme does Sam use?")
print(json.dumps({"modules": sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules),
                  "dims": [len(vectors[0]), len(query)], "tokens": embeddings.count_tokens(["Sam"]),
                  "status": embeddings.model_status()}))
"""


def test_a_process_that_embeds_with_onnx_never_imports_torch(settings):
    embeddings._onnx_encoder("int8")  # exported beforehand, as in any process after the first
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
                   "ENGRAM_EMBEDDING_CACHE_DIR": str(settings.ENGRAM_EMBEDDING_CACHE_DIR),
                   "ENGRAM_EMBEDDING_BACKEND": "onnx"}
    done = subprocess.run([sys.executable, "-c", EMBEDS_WITHOUT_TORCH], cwd=settings.BASE_DIR, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["modules"] == []
    assert report["dims"] == [384, 384] and report["tokens"] == [3]
    assert report["status"] == {"ok": True, "model": settings.ENGRAM_EMBEDDING_MODEL, "dimensions": 384,
                                "detail": "loaded (ONNX Runtime)"}


def test_an_export_that_fails_in_its_process_says_why(tmp_path):
    source = embeddings._model_path()
    broken = tmp_path / "model"
    shutil.copytree(source, broken)
    (broken / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(onnx_encoder.OnnxUnavailable, match="the export failed: .+"):
        onnx_encoder.model_file(broken, tmp_path / "cache")
    assert not any((tmp_path / "cache").glob("*.onnx"))  # nothing half-written is left to be used


def test_only_a_plain_mean_pooled_folder_with_a_tokenizer_file_is_run_by_onnx(tmp_path):
    source = embeddings._model_path()
    folder = onnx_encoder.read_folder(source)
    assert folder.max_seq_length == 256 and folder.tokenizer_file.name == "tokenizer.json"
    copy = tmp_path / "model"
    shutil.copytree(source, copy)
    pooling = json.loads((copy / "1_Pooling" / "config.json").read_text())
    (copy / "1_Pooling" / "config.json").write_text(json.dumps({**pooling, "pooling_mode_mean_tokens": False,
                                                                 "pooling_mode_cls_token": True}))
    with pytest.raises(onnx_encoder.OnnxUnavailable, match="only mean-pooled transformers"):
        onnx_encoder.read_folder(copy)
    (copy / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (copy / "tokenizer.json").unlink()
    with pytest.raises(onnx_encoder.OnnxUnavailable, match="has no tokenizer.json"):
        onnx_encoder.read_folder(copy)


def test_the_cache_key_follows_the_models_files(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    first = onnx_encoder._key(folder)
    assert onnx_encoder._key(folder) == first
    (folder / "model.safetensors").write_bytes(b"weights")
    assert onnx_encoder._key(folder) != first


def test_the_backend_setting_names_its_choices(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from config.env import env_choice

    monkeypatch.setenv("ENGRAM_EMBEDDING_BACKEND", "tensorflow")
    with pytest.raises(ImproperlyConfigured, match="ENGRAM_EMBEDDING_BACKEND='tensorflow' is not one of: onnx, torch"):
        env_choice("ENGRAM_EMBEDDING_BACKEND", "onnx", ("onnx", "torch"))
    monkeypatch.setenv("ENGRAM_EMBEDDING_BACKEND", "Torch")
    assert env_choice("ENGRAM_EMBEDDING_BACKEND", "onnx", ("onnx", "torch")) == "torch"


def test_query_vectors_from_the_int8_model_stay_close_to_the_full_model(torch_backend, settings):
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = True
    assert embeddings.get_query_model() is not embeddings.get_model()
    for question in QUESTIONS:
        full = np.array(embeddings.embed_texts([question])[0])
        quick = np.array(embeddings.embed_query(question))
        assert np.linalg.norm(quick) == pytest.approx(1.0, abs=1e-5)
        assert float(full @ quick) > 0.9
    # the two questions stay far apart in both models: quantisation keeps meaning, not just length
    a, b = (np.array(embeddings.embed_query(q)) for q in QUESTIONS)
    assert float(a @ b) < 0.5


def test_the_full_model_answers_queries_when_int8_is_off(torch_backend, settings):
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = False
    assert embeddings.get_query_model() is embeddings.get_model()
    question = QUESTIONS[0]
    assert embeddings.embed_query(question) == pytest.approx(embeddings.embed_texts([question])[0], abs=1e-6)


TEXTS = ["a", "Which editor theme does the user prefer?", "Ünïcödé — 東京 café ☕ naïve",
         "deploy " * 600]  # the last is longer than the model reads: truncated the same way


def test_the_traced_query_encoder_gives_what_encode_gives(torch_backend, settings):
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = True
    settings.ENGRAM_QUERY_EMBEDDING_TRACED = True
    model = embeddings.get_query_model()
    encoder = embeddings.get_query_encoder()
    assert getattr(encoder, "__name__", "") == "encode"  # the traced closure, not the encode() fallback
    for text in TEXTS:
        assert embeddings.embed_query(text) == pytest.approx(embeddings._encode(model, [text])[0], abs=1e-5)


def test_untraced_query_embeddings_use_encode(torch_backend, settings):
    settings.ENGRAM_QUERY_EMBEDDING_TRACED = False
    model = embeddings.get_query_model()
    assert getattr(embeddings.get_query_encoder(), "__name__", "") == "<lambda>"
    assert embeddings.embed_query(TEXTS[1]) == embeddings._encode(model, [TEXTS[1]])[0]


def test_a_model_that_cannot_be_traced_falls_back_to_encode(torch_backend, settings, monkeypatch, caplog):
    import torch

    caplog.set_level(logging.WARNING, logger=embeddings.__name__)  # whatever level an earlier test left the root at

    settings.ENGRAM_QUERY_EMBEDDING_TRACED = True

    def refuse(*args, **kwargs):
        raise RuntimeError("this model cannot be traced")

    monkeypatch.setattr(torch.jit, "trace", refuse)
    model = embeddings.get_query_model()
    assert getattr(embeddings.get_query_encoder(), "__name__", "") == "<lambda>"
    assert "could not be traced (this model cannot be traced)" in caplog.text
    assert embeddings.embed_query(TEXTS[1]) == embeddings._encode(model, [TEXTS[1]])[0]


def test_a_traced_model_that_embeds_differently_is_not_used(torch_backend, settings, monkeypatch, caplog):
    import torch

    caplog.set_level(logging.WARNING, logger=embeddings.__name__)

    settings.ENGRAM_QUERY_EMBEDDING_TRACED = True

    def random_model(*args, **kwargs):
        return lambda ids, mask: (torch.rand(1, ids.shape[1], 384),)

    monkeypatch.setattr(torch.jit, "trace", random_model)
    assert getattr(embeddings.get_query_encoder(), "__name__", "") == "<lambda>"
    assert "embeds 'x' differently" in caplog.text
