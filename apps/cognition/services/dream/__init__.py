"""The dream (consolidation): NREM replay, linking and dedupe (nrem.py), cluster summaries (clusters.py), scratchpad
commits (commit.py) and REM (rem.py), run in budgeted, resumable, undoable batches (runs.py), woken by the owner's
queries (wake.py). docs/context_graph.md, "Dream", has the rules."""
from apps.cognition.services.dream.runs import (  # noqa: F401
    dream_execute, dream_get, dream_interrupt, dream_rollback, dream_trigger, learning_rate,
)
