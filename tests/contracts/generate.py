"""Regenerate tests/contracts/<profile>.json from the seed documents (the systems' own API references).

    .venv/bin/python tests/contracts/generate.py --seeds DIR [--check]

The tests compare Engram's MCP profiles with these JSON files and never read the seeds, so that a fresh
clone tests on its own. Run this when a seed changes, naming the folder that holds the seed files (nothing
in the repo points outside it); --check writes nothing and exits 1 when a contract differs from what the seeds give.
Each file names the seed it came from and the seed's SHA-256. Needs only the standard library.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


# ThoughtMCP (seed 000): each tool's description and every JSON block under a bold heading, by heading and by
# the heading's qualifier ("**Example Request (Parallel):**" -> "Example Request", "Parallel"; "" when none).
def thoughtmcp(text: str) -> dict:
    body = text[text.index("\n## Memory Tools\n"):text.index("\n## Response Format\n")]
    tools = {}
    for name in re.findall(r"^### (\w+)$", body, re.M):
        start = text.index(f"\n### {name}\n")
        section = text[start:text.index("\n---\n", start)]
        blocks: dict[str, dict] = {}
        for heading, qualifier, block in re.findall(
                r"\*\*([^*(\n]+?)(?: \(([^)\n]*)\))?:?\*\*:?\s*```json\n(.*?)```", section, re.S):
            blocks.setdefault(heading, {})[qualifier] = json.loads(block)
        description = re.search(r"\*\*Description:\*\*\s*\n(.*?)\n\s*\n", section, re.S).group(1).strip()
        tools[name] = {"description": description, "blocks": blocks}
    return {"tools": tools}


# Thoughtbox (seed 001): each tool's TypeScript schema as fields, annotations and JSON examples; the thoughtbox
# tool's usage examples; the resource and template tables; each prompt's arguments.
_TS_FIELD = re.compile(r"^\s*(?P<name>\w+)(?P<optional>\?)?:\s*(?P<type>[^;]+);\s*(?://\s*(?P<comment>.*))?$")
_TS_TYPES = {"string": "string", "boolean": "boolean", "number": "number"}


def _thoughtbox_fields(block: str) -> dict[str, dict]:
    """The top-level fields of a tool's TypeScript schema: {name: {required, type, minimum?, enum?, items?}}."""
    block = re.sub(r"\|\s*\n\s*", "| ", block)  # the multi-line union of `operation` on one line
    fields: dict[str, dict] = {}
    nested: dict[str, dict] = {}
    depth = 0
    for line in block.splitlines()[1:-1]:
        if depth == 0 and (match := _TS_FIELD.match(line)):
            type_text = match["type"].strip()
            spec: dict = {"required": not match["optional"]}
            if "'" in type_text:
                spec |= {"type": "string", "enum": re.findall(r"'([^']+)'", type_text)}
            elif type_text.endswith("[]"):
                spec |= {"type": "array", "items": _TS_TYPES[type_text[:-2]]}
            elif type_text.startswith(("{", "Record")):
                spec["type"] = "object"
            else:
                spec["type"] = _TS_TYPES[type_text]
            if match["comment"] and "min: 1" in match["comment"]:
                spec["minimum"] = 1
            fields[match["name"]] = spec
        elif depth == 0 and (opening := re.match(r"^\s*(\w+)(\?)?:\s*\{\s*$", line)):
            fields[opening[1]] = {"required": not opening[2], "type": "object", "properties": {}}
            nested = fields[opening[1]]["properties"]
            depth = 1
        elif depth == 1:
            if line.strip().startswith("}"):
                depth = 0
            elif match := _TS_FIELD.match(line):
                nested[match["name"]] = {"type": _TS_TYPES[match["type"].strip()]}
    return fields


def _subsection(text: str, heading: str) -> str:
    """The text under a ``### heading`` up to the next heading of level 2 or 3."""
    start = text.index(f"### {heading}\n") + len(heading) + 5
    following = re.search(r"^#{2,3} ", text[start:], re.M)
    return text[start:start + following.start()] if following else text[start:]


def _json_examples(section: str) -> list[dict]:
    """Every ```json block of a section, with the seed's `// comments` taken out."""
    return [json.loads(re.sub(r"\s//[^\n]*", "", block)) for block in re.findall(r"```json\n(.*?)```", section, re.S)]


def thoughtbox(text: str) -> dict:
    tools = {}
    for name in re.findall(r"^### `([\w-]+)`$", text[text.index("\n## Tools\n"):text.index("\n## Resources\n")], re.M):
        start = text.index(f"\n### `{name}`\n")
        section = text[start:text.index("\n---\n", start)]
        schema = re.search(r"\*\*Schema\*\*:\s*```typescript\n(.*?)```", section, re.S).group(1)
        annotations = re.search(r"\*\*Annotations\*\*:\n((?:- .*\n)+)", section)
        tools[name] = {
            "description": section.split("\n\n")[1].strip(),
            "fields": _thoughtbox_fields(schema),
            "annotations": annotations and {key: value == "true" for key, value
                                            in re.findall(r"`(\w+)`: (true|false)", annotations.group(1))},
            "examples": _json_examples(section),
        }
    thoughtbox_section = text[text.index("\n### `thoughtbox`\n"):]
    thoughtbox_section = thoughtbox_section[:thoughtbox_section.index("\n---\n")]
    usage = {heading.split(" (")[0]: json.loads(block)
             for heading, block in re.findall(r"\n([A-Z][^\n]*?):\n```json\n(.*?)```", thoughtbox_section, re.S)}
    resources = {heading: {uri: description.strip() for uri, description
                           in re.findall(r"^\| `([^`]+)` \| ([^|]+) \|$", _subsection(text, heading), re.M)}
                 for heading in ("Static Resources", "Resource Templates")}
    prompts = {}
    for name in re.findall(r"^### `([\w-]+)`$", text[text.index("\n## Prompts\n"):], re.M):
        block = re.search(r"```typescript\n(.*?)```", _subsection(text, f"`{name}`"), re.S)
        prompts[name] = {} if block is None else {
            match["name"]: not match["optional"] for line in block.group(1).splitlines()
            if (match := _TS_FIELD.match(line))}
    return {"tools": tools, "usage_examples": usage, "resources": resources, "prompts": prompts}


# MemGOS (seed 003): each tool's JSON schema, response format and example arguments; the common error types.
def _json_after(section: str, heading: str) -> dict | None:
    match = re.search(r"#### " + heading + r"\s*```json\n(.*?)```", section, re.S)
    # list_tools' response elides its schemas as {...}.
    return json.loads(match.group(1).replace("{...}", "{}")) if match else None


def memgos(text: str) -> dict:
    headings = list(re.finditer(r"^### \d+\. (\w+)$", text, re.M))
    tools = {}
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else text.index("## Error Handling")
        section = text[heading.end():end]
        tools[heading.group(1)] = {"schema": _json_after(section, "Schema"),
                                   "response": _json_after(section, "Response Format"),
                                   "example": _json_after(section, "Example Usage")}
    errors = text[text.index("### Common Error Types"):text.index("## Rate Limiting")]
    return {"tools": tools, "error_types": re.findall(r"^- `(\w+)`", errors, re.M)}


# Mind (seed 004): each tool's description, its TypeScript parameters and returns as nested fields
# ({required, type: the TypeScript type as written, children}), and its example call's arguments.
_MIND_FIELD = re.compile(r"^(?P<indent> *)(?P<name>\w+)(?P<optional>\?)?:\s*(?P<type>[^/]*?)\s*(?://.*)?$")


def _mind_fields(block: str) -> dict[str, dict]:
    root: dict[str, dict] = {}
    stack: list[tuple[int, dict[str, dict]]] = [(-1, root)]
    for line in block.splitlines():
        match = _MIND_FIELD.match(line)
        if not match:
            continue
        indent = len(match["indent"])
        while stack[-1][0] >= indent:
            stack.pop()
        spec = {"required": not match["optional"], "type": match["type"], "children": {}}
        stack[-1][1][match["name"]] = spec
        if spec["type"].startswith(("{", "[{")):
            stack.append((indent, spec["children"]))
    return root


def _typescript_after(section: str, heading: str) -> str:
    return re.search(r"\*\*" + heading + r":\*\*\s*```typescript\n(.*?)```", section, re.S).group(1)


def _mind_example(section: str, name: str) -> dict | None:
    """`Claude calls: name(key="value", other={ field: 1 })` as a JSON object of the arguments."""
    call = re.search(r"Claude calls: " + name + r"\((.*?)\)\n(?:\n|```)", section, re.S)
    if call is None:
        return None
    # Quote each `key=` and `key:` outside strings; values are already JSON (true, numbers, "strings", [...]).
    body = re.sub(r'("(?:\\.|[^"\\])*")|\b([a-z_]\w*)\s*[:=]',
                  lambda match: match[1] or f'"{match[2]}":', call.group(1))
    return json.loads("{" + body + "}")


def mind(text: str) -> dict:
    tools = {}
    for name in re.findall(r"^### (mind_\w+)$", text, re.M):
        start = text.index(f"\n### {name}\n")
        section = text[start:text.find("\n### ", start + 1)]
        tools[name] = {"description": section[len(f"\n### {name}\n"):].strip().split("\n", 1)[0],
                       "params": _mind_fields(_typescript_after(section, "Parameters")),
                       "returns": _mind_fields(_typescript_after(section, "Returns")),
                       "example": _mind_example(section, name)}
    return {"tools": tools}


# Context Graph (seed 002): the server's description, and each tool's JSON block (name, description, inputSchema,
# outputSchema where it has one); the tools the seed only names are not in it (their arguments come from the issue).
def context_graph(text: str) -> dict:
    server = json.loads(re.search(r"## 0\.1 .*?```json\n(.*?)```", text, re.S).group(1))
    tools = {}
    for match in re.finditer(r"^#### Tool: `(\w+)`.*?```json\n(.*?)```", text, re.M | re.S):
        tools[match.group(1)] = json.loads(match.group(2))
    return {"server": server, "tools": tools}


PROFILES = {
    "context_graph": ("002_22543c3e7903c73d.txt", context_graph),
    "thoughtmcp": ("000_cc4ec00caf7da348.txt", thoughtmcp),
    "thoughtbox": ("001_fb29208e2c2583e8.txt", thoughtbox),
    "memgos": ("003_acccded3644303b7.txt", memgos),
    "mind": ("004_17adc1a7bc3fb056.txt", mind),
}


def contract_text(seeds: Path, profile: str) -> str:
    seed, parse = PROFILES[profile]
    raw = (seeds / seed).read_bytes()
    contract = {"seed": f"seeds/{seed}", "seed_sha256": hashlib.sha256(raw).hexdigest(),
                "generated_by": "tests/contracts/generate.py", **parse(raw.decode())}
    return json.dumps(contract, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=Path, required=True, help="the folder of the seed documents (NNN_*.txt)")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a contract is stale")
    options = parser.parse_args()
    if not options.seeds.is_dir():
        parser.error(f"no seed directory at {options.seeds}: pass --seeds")
    stale = []
    for profile in PROFILES:
        target = HERE / f"{profile}.json"
        text = contract_text(options.seeds, profile)
        if target.exists() and target.read_text() == text:
            continue
        stale.append(target.name)
        if not options.check:
            target.write_text(text)
    verb = "differ from the seeds" if options.check else "written"
    print(f"{', '.join(stale) or 'nothing'} {verb}" if stale or not options.check else "contracts match the seeds")
    return 1 if options.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
