"""The Python runtime of an Engram process, tuned once it has loaded what it keeps for its whole life."""
from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """Move every object alive now (modules, settings, URL patterns, a loaded model's objects) into the garbage
    collector's permanent generation, so that a full collection no longer walks them: with them, one took ~97 ms of a
    request's time (133,000 objects) and set inject_context's p95; without them, 0.5 ms. They live as long as the
    process anyway; whatever garbage exists now is collected first."""
    gc.collect()
    gc.freeze()
