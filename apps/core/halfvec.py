"""Half-precision vectors in pgvector's text form, written fast and exactly.

pgvector-python writes each element with str(float(x)): ~190 us for 384 elements, twice per stored memory (its
row and its linking query). A halfvec element is a float16, which five significant digits give back exactly, so
rounding to float16 first and formatting every element in one %-operation sends the same value in a third of the
time and two thirds of the characters. Only for halfvec: a ``vector`` (float32) would lose precision.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from pgvector.django import HalfVectorField as PgvectorHalfVectorField


@lru_cache(maxsize=8)
def _template(dimensions: int) -> str:
    return "[" + ",".join(["%.5g"] * dimensions) + "]"


def halfvec_text(vector) -> str:
    """A vector (a list of floats or a numpy array) as the text of a ``%s::halfvec`` parameter: the halfvec that
    PostgreSQL makes of it is the one it makes of pgvector-python's text."""
    with np.errstate(over="ignore"):  # out of float16's range becomes inf, refused below
        # Through float32 first, as pgvector-python's text went: no double rounding that PostgreSQL's did not do.
        values = np.asarray(vector, dtype=np.float32).astype(np.float16)
    if values.ndim != 1:
        raise ValueError(f"a halfvec has one dimension, not {values.ndim}")
    if not np.isfinite(values).all():
        raise ValueError("a halfvec's elements must be finite (in float16's range)")
    return _template(len(values)) % tuple(values.tolist())


class HalfVectorField(PgvectorHalfVectorField):
    """pgvector's HalfVectorField, writing lists and arrays with halfvec_text."""

    def get_prep_value(self, value):
        if isinstance(value, (list, tuple, np.ndarray)):
            return halfvec_text(value)
        return super().get_prep_value(value)
