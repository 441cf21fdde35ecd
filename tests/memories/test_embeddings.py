"""Query embeddings come from an int8 copy of the model, traced by TorchScript: close to the full
model's, never the same object unless switched off, and exactly what encode() would give."""
import logging

import numpy as np
import pytest

from apps.memories import embeddings

QUESTIONS = ["What did Maria make for her home to remind her of a trip?", "Which editor theme does the user prefer?"]


@pytest.fixture
def fresh_query_model(monkeypatch):
    monkeypatch.setattr(embeddings, "_query_model", None)
    monkeypatch.setattr(embeddings, "_query_encoder", None)


def test_query_vectors_from_the_int8_model_stay_close_to_the_full_model(fresh_query_model, settings):
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


def test_the_full_model_answers_queries_when_int8_is_off(fresh_query_model, settings):
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = False
    assert embeddings.get_query_model() is embeddings.get_model()
    question = QUESTIONS[0]
    assert embeddings.embed_query(question) == pytest.approx(embeddings.embed_texts([question])[0], abs=1e-6)


TEXTS = ["a", "Which editor theme does the user prefer?", "Ünïcödé — 東京 café ☕ naïve",
         "deploy " * 600]  # the last is longer than the model reads: truncated the same way


def test_the_traced_query_encoder_gives_what_encode_gives(fresh_query_model, settings):
    settings.ENGRAM_QUERY_EMBEDDING_INT8 = True
    settings.ENGRAM_QUERY_EMBEDDING_TRACED = True
    model = embeddings.get_query_model()
    encoder = embeddings.get_query_encoder()
    assert getattr(encoder, "__name__", "") == "encode"  # the traced closure, not the encode() fallback
    for text in TEXTS:
        assert embeddings.embed_query(text) == pytest.approx(embeddings._encode(model, [text])[0], abs=1e-5)


def test_untraced_query_embeddings_use_encode(fresh_query_model, settings):
    settings.ENGRAM_QUERY_EMBEDDING_TRACED = False
    model = embeddings.get_query_model()
    assert getattr(embeddings.get_query_encoder(), "__name__", "") == "<lambda>"
    assert embeddings.embed_query(TEXTS[1]) == embeddings._encode(model, [TEXTS[1]])[0]


def test_a_model_that_cannot_be_traced_falls_back_to_encode(fresh_query_model, settings, monkeypatch, caplog):
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


def test_a_traced_model_that_embeds_differently_is_not_used(fresh_query_model, settings, monkeypatch, caplog):
    import torch

    caplog.set_level(logging.WARNING, logger=embeddings.__name__)

    settings.ENGRAM_QUERY_EMBEDDING_TRACED = True

    def random_model(*args, **kwargs):
        return lambda ids, mask: (torch.rand(1, ids.shape[1], 384),)

    monkeypatch.setattr(torch.jit, "trace", random_model)
    assert getattr(embeddings.get_query_encoder(), "__name__", "") == "<lambda>"
    assert "embeds 'x' differently" in caplog.text
