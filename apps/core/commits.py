"""Commits that need not wait for the WAL flush: bookkeeping a read records as it goes (docs/guarantees.md)."""
from __future__ import annotations

from django.db import connection
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

# True, and the statement's transaction commits without waiting for the flush (set_config's third argument:
# this transaction only). A crash may then forget that statement's changes, never an earlier commit's.
_RELAX = "(SELECT set_config('synchronous_commit', 'off', true)) = 'off'"


def unflushed_commit_sql() -> str:
    """A condition to AND into a lone UPDATE's WHERE ("" inside a caller's transaction, whose own writes must
    still wait for the flush): a statement that commits by itself then skips the ~0.5 ms wait for the disk."""
    return "" if connection.in_atomic_block else f" AND {_RELAX}"


def unflushed_commit() -> Q:
    """unflushed_commit_sql as an ORM filter (an empty Q inside a caller's transaction)."""
    return Q() if connection.in_atomic_block else Q(RawSQL(_RELAX, (), output_field=BooleanField()))
