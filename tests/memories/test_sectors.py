"""Sector vectors derived from the one stored content vector (apps/memories/sectors.py)."""
from datetime import datetime, timezone

import numpy as np
import pytest

from apps.memories.embeddings import embed_texts, sector_texts
from apps.memories.models import SECTORS, MemoryVector
from apps.memories.sectors import PROBES, sector_offsets, token_counts
from apps.memories.text import valence_arousal
from apps.memories.vectors import nearest_exactly

def sector_vectors(offsets, vector, tokens: int) -> dict:
    """The definition the SQL and the pair cosines must agree with: sector(v) = unit(v + a / n)."""
    shifted = np.asarray(vector, dtype=np.float64) + offsets.matrix / max(tokens, 1)
    return dict(zip(SECTORS, shifted / np.linalg.norm(shifted, axis=1, keepdims=True)))


# Not among the probes the offsets are measured on.
UNSEEN = [
    "Maria booked a cabin by the lake for the family reunion in July.",
    "Run the linter before pushing, or the CI job rejects the branch.",
    "I was furious when the package arrived broken for the third time.",
]


def test_derived_sector_vectors_are_nearer_the_prefixed_texts_than_the_content_is():
    assert not set(UNSEEN) & set(PROBES)
    offsets = sector_offsets()
    for index, content in enumerate(UNSEEN):
        valence, arousal = valence_arousal(content)
        texts = sector_texts(content=content, created_at=datetime(2025, 6, index + 1, 14, 5, tzinfo=timezone.utc),
                             session_id="trip-planning", valence=valence, arousal=arousal)
        real = dict(zip(SECTORS, np.array(embed_texts([texts[sector] for sector in SECTORS]))))
        derived = sector_vectors(offsets, real["semantic"], token_counts([content])[0])
        for sector in SECTORS:
            assert np.linalg.norm(derived[sector]) == pytest.approx(1.0, abs=1e-5)
            if sector != "semantic":
                assert derived[sector] @ real[sector] > real["semantic"] @ real[sector], (content, sector)
                assert derived[sector] @ real[sector] > 0.8, (content, sector)


@pytest.mark.django_db
@pytest.mark.parametrize("sectors", [SECTORS, ["semantic"], ["episodic", "reflective"]])
def test_postgresql_ranks_by_the_best_derived_sector_as_numpy_does(user, store, sectors):
    memories = [store(user, content) for content in UNSEEN]
    query = np.array(embed_texts(["a broken delivery made me angry"])[0])
    stored = {row.memory_id: (np.array(row.embedding, dtype=np.float32), row.tokens)
              for row in MemoryVector.objects.filter(memory__in=memories)}
    assert sorted(tokens for _, tokens in stored.values()) == sorted(token_counts(UNSEEN))
    expected = {memory_id: 1 - max(sector_vectors(sector_offsets(), vector, tokens)[sector] @ query for sector in sectors)
                for memory_id, (vector, tokens) in stored.items()}
    got = nearest_exactly(list(stored), query, sectors, limit=10)
    assert [memory_id for memory_id, _ in got] == sorted(expected, key=expected.get)
    for memory_id, distance in got:
        assert distance == pytest.approx(expected[memory_id], abs=2e-3)  # the query travels as half precision


def test_pair_cosines_from_dot_products_match_the_derived_vectors():
    from apps.memories.sectors import mean_pair_cosine

    offsets = sector_offsets()
    vectors = np.array(embed_texts(UNSEEN), dtype=np.float64)
    tokens = token_counts(UNSEEN)
    matrix = offsets.matrix.astype(np.float64)
    own, others = vectors[0], vectors[1:]
    got = mean_pair_cosine(dot=others @ own, own_shift=matrix @ own, own_tokens=tokens[0], their_shift=others @ matrix.T,
                           their_tokens=np.array(tokens[1:]), shift_norms=(matrix ** 2).sum(axis=1))
    mine = np.array(list(sector_vectors(offsets, own, tokens[0]).values()))
    expected = [np.mean(np.sum(mine * np.array(list(sector_vectors(offsets, other, n).values())), axis=1))
                for other, n in zip(others, tokens[1:])]
    assert got == pytest.approx(expected, abs=1e-5)
