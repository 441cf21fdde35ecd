"""halfvec_text sends the halfvec that pgvector-python's text gave, and the field writes with it."""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from pgvector import HalfVector

from apps.core.halfvec import HalfVectorField, halfvec_text

pytestmark = pytest.mark.timeout(120)


def _vectors():
    rng = np.random.default_rng(7)
    # Model-like unit vectors, then magnitudes from float16's subnormals to near its largest finite value.
    yield from (rng.standard_normal(384) / 20 for _ in range(20))
    for scale in (1e-7, 1e-5, 1e-3, 1.0, 1e3, 3e4):
        yield np.clip(rng.standard_normal(384) * scale / 3, -65504, 65504)
    yield np.array([0.0, -0.0, 65504.0, -65504.0, 6e-8, 2 ** -14, 0.1, 1 / 3])


@pytest.mark.django_db
def test_postgresql_reads_the_same_halfvec_as_from_pgvector_text():
    vectors = list(_vectors())
    with connection.cursor() as cursor:
        cursor.execute("SELECT a::halfvec = b::halfvec, (a::halfvec)::text FROM unnest(%s::text[], %s::text[]) AS t(a, b)",
                       [[halfvec_text(v) for v in vectors], [HalfVector(v).to_text() for v in vectors]])
        rows = cursor.fetchall()
    assert [equal for equal, _ in rows] == [True] * len(vectors)


def test_halfvec_text_is_shorter_and_refuses_what_a_halfvec_cannot_hold():
    vector = np.random.default_rng(1).standard_normal(384) / 20
    assert len(halfvec_text(vector)) < 0.8 * len(HalfVector(vector).to_text())
    assert halfvec_text([0.5, -2.0, 0.0]) == "[0.5,-2,0]"
    with pytest.raises(ValueError, match="finite"):
        halfvec_text([1e6, 0.0])
    with pytest.raises(ValueError, match="finite"):
        halfvec_text([float("nan")])
    with pytest.raises(ValueError, match="one dimension"):
        halfvec_text([[0.1, 0.2]])


def test_the_field_writes_lists_and_arrays_with_halfvec_text_and_leaves_the_rest_to_pgvector():
    field = HalfVectorField(dimensions=3)
    assert field.get_prep_value([0.25, 0.5, 1.0]) == field.get_prep_value(np.array([0.25, 0.5, 1.0])) == "[0.25,0.5,1]"
    assert field.get_prep_value(None) is None
    assert field.get_prep_value(HalfVector([0.25, 0.5, 1.0])) == HalfVector([0.25, 0.5, 1.0]).to_text()
