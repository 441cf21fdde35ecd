"""Query embeddings come from an int8 copy of the model: close to the full model's, never the same
object unless switched off, and used by retrieval."""
import numpy as np
import pytest

from apps.memories import embeddings

QUESTIONS = ["What did Maria make for her home to remind her of a trip?", "Which editor theme does the user prefer?"]


@pytest.fixture
def fresh_query_model(monkeypatch):
    monkeypatch.setattr(embeddings, "_query_model", None)


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
