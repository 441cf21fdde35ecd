"""The .src.md notebook format (Thoughtbox's export/load): one markdown file a person can read and an agent
can load again.

    ---
    title: "Binary search, explained"
    language: typescript
    template: sequential-feynman
    dependencies: {"is-odd": "3.0.1"}
    ---

    # Prose of a markdown cell

    ```ts filename=search.ts
    console.log("a code cell");
    ```

    ```text output
    a code cell
    ```

    <!-- cell -->

    Another markdown cell, right after the first one.

- Front matter: ``key: value`` lines between ``---`` lines. ``title`` is required; ``language`` is
  javascript (default) or typescript; ``template`` and ``dependencies`` (a JSON object name -> version)
  are optional. Values may be bare or JSON strings; render writes title and template as JSON strings.
  Dependencies may also be written as an indented block of ``name: version`` or ``- name@version`` lines.
- A code cell is a fenced block whose info string names its file: ``ts filename=search.ts`` (what render
  writes) or ``typescript:search.ts``. A fence without a file name is prose, part of a markdown cell.
  Render uses a fence longer than any run of backticks in the code, as CommonMark allows.
- Markdown cells are the prose between code cells; ``<!-- cell -->`` on a line of its own separates two
  markdown cells that follow each other.
- A ``text output`` block right after a code cell holds its last output; load skips it (outputs belong to
  runs, not to the notebook).

Cell content is kept without leading or trailing blank lines (the services store it so), which makes
render -> parse lossless, with two limits of any markdown-based format: a markdown cell that contains a
line ``<!-- cell -->``, or a fenced block whose info string names a file, comes back split at that point.
Errors are InvalidInput naming the line.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from apps.core.exceptions import InvalidInput

CELL_SEPARATOR = "<!-- cell -->"
FRONT_MATTER = "---"
OUTPUT_INFO = "text output"
FENCE = re.compile(r"^(`{3,})\s*(.*)$")
FILENAME_ATTRIBUTE = re.compile(r"""(?:^|\s)(?:filename|file)=(?:"([^"]+)"|'([^']+)'|(\S+))""")
LANGUAGE_COLON_FILENAME = re.compile(r"^[\w+-]+:(\S+)$")
FRONT_MATTER_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
BLOCK_ITEM = re.compile(r"^\s+(?:-\s*)?(.+)$")
FENCE_LANGUAGE = {".ts": "ts", ".mts": "ts", ".js": "js", ".mjs": "js", ".cjs": "js"}
KNOWN_KEYS = ("title", "language", "template", "dependencies")


@dataclass(frozen=True)
class SourceCell:
    cell_type: str  # "code" | "markdown"
    content: str
    filename: str = ""
    line: int = 0  # where the cell starts in the source, for error messages
    output: str = ""  # render only: the last run's output


@dataclass(frozen=True)
class SourceNotebook:
    title: str
    language: str = "javascript"
    template: str = ""
    dependencies: dict[str, str] = field(default_factory=dict)
    cells: tuple[SourceCell, ...] = ()


def trim_blank_lines(text: str) -> str:
    """Content as cells keep it: without blank lines before or after (inner lines untouched)."""
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def _fence_for(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render(notebook: SourceNotebook) -> str:
    lines = [FRONT_MATTER, f"title: {json.dumps(notebook.title, ensure_ascii=False)}",
             f"language: {notebook.language}"]
    if notebook.template:
        lines.append(f"template: {json.dumps(notebook.template, ensure_ascii=False)}")
    if notebook.dependencies:
        lines.append(f"dependencies: {json.dumps(dict(sorted(notebook.dependencies.items())), ensure_ascii=False)}")
    lines += [FRONT_MATTER, ""]
    previous = None
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            if previous == "markdown":
                lines += [CELL_SEPARATOR, ""]
            lines += [cell.content, ""]
        else:
            fence = _fence_for(cell.content)
            language = FENCE_LANGUAGE.get("." + cell.filename.rsplit(".", 1)[-1], "js")
            lines += [f"{fence}{language} filename={cell.filename}", cell.content, fence, ""]
            if cell.output:
                fence = _fence_for(cell.output)
                lines += [f"{fence}{OUTPUT_INFO}", cell.output.rstrip("\n"), fence, ""]
        previous = cell.cell_type
    return "\n".join(lines).rstrip("\n") + "\n"


def _error(line: int, message: str) -> InvalidInput:
    return InvalidInput(f"line {line}: {message}", field="text", extra={"line": line})


def _front_value(raw: str, *, line: int, key: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            raise _error(line, f'the {key} starts with a quote but is not a valid quoted string: '
                               f'write it bare or as "..." with \\" for quotes inside.') from None
        if not isinstance(value, str):
            raise _error(line, f"the {key} must be text.")
        return value
    return raw


def _dependency(item: str, *, line: int) -> tuple[str, str]:
    """One dependency written as ``name: version``, ``name@version`` or a bare name (any version)."""
    item = item.strip().strip('"').strip("'")
    if ":" in item and not item.startswith("@"):
        name, version = item.split(":", 1)
    elif "@" in item[1:]:
        at = item.index("@", 1)
        name, version = item[:at], item[at + 1:]
    else:
        name, version = item, "*"
    name, version = name.strip().strip('"'), version.strip().strip('"') or "*"
    if not name:
        raise _error(line, "a dependency needs a package name: write name: version.")
    return name, version


def _dependencies(raw: str, *, line: int) -> dict[str, str]:
    raw = raw.strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        # A comma-separated list: is-odd@3.0.1, left-pad
        return dict(_dependency(item, line=line) for item in raw.split(",") if item.strip())
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return dict(_dependency(item, line=line) for item in value)
    raise _error(line, 'dependencies must be an object like {"is-odd": "3.0.1"} or a list like ["is-odd@3.0.1"].')


def _parse_front_matter(lines: list[str]) -> tuple[dict, int]:
    """The front matter's values and the index of the first line after it."""
    first = next((i for i, text in enumerate(lines) if text.strip()), None)
    if first is None:
        raise _error(1, "the file is empty: a .src.md notebook starts with front matter (--- title: ... ---).")
    if lines[first].strip() != FRONT_MATTER:
        raise _error(first + 1, "a .src.md notebook starts with front matter: a line ---, then title: ..., "
                                "then a closing ---.")
    values: dict = {}
    index = first + 1
    while index < len(lines) and lines[index].strip() != FRONT_MATTER:
        text, number = lines[index], index + 1
        index += 1
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        match = FRONT_MATTER_LINE.match(text)
        if not match:
            raise _error(number, f"expected key: value in the front matter, got {text.strip()!r}.")
        key, raw = match.group(1).lower(), match.group(2)
        if key not in KNOWN_KEYS:
            raise _error(number, f"unknown front matter key {key!r}; the keys are {', '.join(KNOWN_KEYS)}.")
        if key == "dependencies":
            dependencies = _dependencies(raw, line=number)
            while index < len(lines) and (item := BLOCK_ITEM.match(lines[index])):
                dependencies.update([_dependency(item.group(1), line=index + 1)])
                index += 1
            values[key] = dependencies
        else:
            values[key] = _front_value(raw, line=number, key=key)
    if index >= len(lines):
        raise _error(first + 1, "the front matter opened here is never closed: add a line --- after it.")
    if not values.get("title"):
        raise _error(first + 1, "the front matter has no title: add title: ... to it.")
    return values, index + 1


def _code_filename(info: str) -> str:
    match = FILENAME_ATTRIBUTE.search(info)
    if match:
        return next(group for group in match.groups() if group)
    match = LANGUAGE_COLON_FILENAME.match(info.strip())
    return match.group(1) if match else ""


def parse(text: str) -> SourceNotebook:
    if not isinstance(text, str):
        raise InvalidInput("text must be the .src.md file's content, a string.", field="text")
    lines = text.replace("\r\n", "\n").split("\n")
    values, index = _parse_front_matter(lines)
    cells: list[SourceCell] = []
    prose: list[str] = []
    prose_line = index + 1

    def end_prose() -> None:
        content = trim_blank_lines("\n".join(prose))
        if content:
            cells.append(SourceCell(cell_type="markdown", content=content, line=prose_line))
        prose.clear()

    while index < len(lines):
        text_line, number = lines[index], index + 1
        fence = FENCE.match(text_line)
        if text_line.strip() == CELL_SEPARATOR:
            end_prose()
            prose_line = number + 1
            index += 1
            continue
        if not fence:
            if not prose:
                prose_line = number
            prose.append(text_line)
            index += 1
            continue
        ticks, info = fence.group(1), fence.group(2).strip()
        closing = next((i for i in range(index + 1, len(lines))
                        if lines[i].strip().startswith(ticks) and not lines[i].strip().strip("`")), None)
        if closing is None:
            raise _error(number, f"the code block opened here with {ticks} is never closed: add a line {ticks}.")
        body = "\n".join(lines[index + 1:closing])
        filename = _code_filename(info)
        is_output = (info.lower() in (OUTPUT_INFO, "output") and bool(cells) and cells[-1].cell_type == "code"
                     and not "".join(prose).strip())
        if filename:
            end_prose()
            cells.append(SourceCell(cell_type="code", content=trim_blank_lines(body), filename=filename, line=number))
            prose_line = closing + 2
        elif not is_output:
            if not prose:
                prose_line = number
            prose.extend(lines[index:closing + 1])
        index = closing + 1
    end_prose()
    return SourceNotebook(title=values["title"], language=values.get("language") or "javascript",
                          template=values.get("template", ""), dependencies=values.get("dependencies", {}),
                          cells=tuple(cells))
