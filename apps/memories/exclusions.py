"""Memories that retrieval leaves out, as the apps above memories decide (Context Graph's quarantine).

An app above memories ``register``s, at start-up, a function that builds a condition true for a memory to leave
out (an ``Exists`` on its own table, correlated with ``OuterRef("pk")``). ``memory_filtered``, the base of every
retrieval and search, excludes each one in the statement it already runs, so memories never import those apps and
a retrieval sends no statement more.
"""
from __future__ import annotations

from collections.abc import Callable

from django.db.models import Expression

Exclusion = Callable[[], Expression]
_exclusions: list[Exclusion] = []


def register(exclusion: Exclusion) -> None:
    if exclusion not in _exclusions:
        _exclusions.append(exclusion)


def retrieval_exclusions() -> list[Expression]:
    """The registered conditions, built afresh (an expression is bound to the query that uses it)."""
    return [exclusion() for exclusion in _exclusions]
