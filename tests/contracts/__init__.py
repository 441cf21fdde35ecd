"""The seed documents' contracts (tool names, descriptions, schemas, examples, error types), one JSON file per
profile, written by tests/contracts/generate.py from the seeds; the tests read these files, never the seeds."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def contract(profile: str) -> dict:
    """A fresh copy each call, so that no test can change what another one reads."""
    return json.loads((HERE / f"{profile}.json").read_text())
