"""The texts Thoughtbox serves: its resources (patterns cookbook, architecture, notebook operations,
capabilities) and the interleaved-thinking prompt. They are markdown files in content_files/, read once at
import, so the prose can be edited as prose.
"""
from __future__ import annotations

from pathlib import Path
from string import Template

from apps.core.exceptions import InvalidInput

CONTENT_DIR = Path(__file__).resolve().parent / "content_files"

MAX_THOUGHTS_LIMIT = 1000

CLEAN_UP_ARTEFACTS = """## Clean-up

Once the final answer is given, clean up the artefacts this task created: run a last notebook cell that deletes
every file your cells wrote (for example `fs.rmSync(file, { force: true })` for each one, listing them first),
and leave no temporary files behind. Keep the thoughtbox session: it is the record of how you reached the
answer. Say in your answer what you removed."""

KEEP_ARTEFACTS = """## Artefacts

Leave the notebooks, their cell files and any exports in place, so the user can inspect and re-run them; say
in your answer where they are (notebook ids, export paths)."""


def _read(name: str) -> str:
    return (CONTENT_DIR / name).read_text(encoding="utf-8")


PATTERNS_COOKBOOK = _read("patterns_cookbook.md")
ARCHITECTURE = _read("architecture.md")
NOTEBOOK_OPERATIONS = _read("notebook_operations.md")
CAPABILITIES = _read("capabilities.md")
_INTERLEAVED_THINKING = Template(_read("interleaved_thinking.md"))


def interleaved_thinking_prompt(task: str, thoughts_limit: int = 100, clear_folder: bool = False) -> str:
    """The seed's interleaved-thinking prompt: five phases (tooling inventory, sufficiency assessment, strategy
    development, execution, final answer) around the caller's task, within ``thoughts_limit`` thoughts."""
    if not isinstance(task, str) or not task.strip():
        raise InvalidInput("task is required: describe the task to accomplish.", field="task")
    # bool is an int subclass; True would silently mean a limit of one thought.
    whole = isinstance(thoughts_limit, int) and not isinstance(thoughts_limit, bool)
    if not (whole and 1 <= thoughts_limit <= MAX_THOUGHTS_LIMIT):
        raise InvalidInput(f"thoughts_limit must be a whole number from 1 to {MAX_THOUGHTS_LIMIT} (default 100).",
                           field="thoughts_limit")
    return _INTERLEAVED_THINKING.substitute(
        task=task.strip(), thoughts_limit=thoughts_limit,
        cleanup=CLEAN_UP_ARTEFACTS if clear_folder else KEEP_ARTEFACTS,
    )
