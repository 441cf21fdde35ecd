"""A graph map (apps/cognition/selectors/status.py) as a Mermaid flowchart. Node ids in the chart are n0, n1, ...
(never user text); labels are memory text, so every character Mermaid reads as syntax is written as its entity
code and line breaks become spaces: a memory cannot end the label or add statements to the chart."""
from __future__ import annotations

import re

from apps.cognition.selectors.status import GraphMap

# Mermaid's entity codes (#name; or #number;), for characters that would otherwise end or restructure a label.
_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;", ";": "#59;",
             "|": "#124;", "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;", "(": "#40;", ")": "#41;",
             "\\": "#92;"}
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")


def escape_label(text: str) -> str:
    flat = _BREAKS.sub(" ", text).strip()
    return "".join(_ENTITIES.get(char, char) for char in flat)


def flowchart(graph: GraphMap) -> str:
    """``flowchart LR``: a box per node (the focal one highlighted), an arrow per link labelled with its type and
    weight."""
    ids = {node_id: f"n{index}" for index, node_id in enumerate(graph.nodes)}
    lines = ["flowchart LR"]
    lines += [f'    {ids[node_id]}["{escape_label(label)}"]' for node_id, label in graph.nodes.items()]
    lines += [f'    {ids[source]} -->|"{link_type} {weight:.2f}"| {ids[target]}'
              for source, target, link_type, weight in graph.edges]
    if graph.focal in ids:
        lines += ["    classDef focal stroke-width:3px,font-weight:bold", f"    class {ids[graph.focal]} focal"]
    return "\n".join(lines)
