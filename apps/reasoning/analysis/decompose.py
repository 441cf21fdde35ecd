"""ThoughtMCP's ``decompose_problem``: a problem as a tree of sub-problems, the dependencies between them, and an
order to work in.

Without a model the tree comes from the problem itself: a compound problem ("build X and deploy it to Y") splits
into its own clauses; a single task gets the phases of its kind (build: design, implement, test, deploy; fix:
reproduce, isolate, fix, verify; decide: options, criteria, evaluate, choose...) applied to the object it names,
and the phases get the problem's parts (the components to implement), its constraints, its goals and the caller's
relevant sharp edges, issues and decisions as children, as deep as ``max_depth`` allows. Phases depend on each
other in sequence. With a model, the model's tree is checked and repaired (ids, parents, depth, dependencies)
before the execution order is computed here, never taken from the model.
"""
from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from typing import Any

from apps.core.exceptions import DomainError, InvalidInput
from apps.core.limits import DECOMPOSE_DEPTH
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend, ProblemContext
from apps.reasoning.analysis.llm import ModelAnswerInvalid, ask_json, model_or_fallback
from apps.reasoning.analysis.problem import (
    SEQUENCE_CUES,
    VERB_KIND,
    ProblemProfile,
    clauses,
    domain_signals,
    evidence_line,
    problem_prompt,
    profile_problem,
)
from apps.reasoning.analysis.reasoning_text import matched, overlap, shorten, words

MIN_DEPTH, MAX_DEPTH, DEFAULT_DEPTH = DECOMPOSE_DEPTH.low, DECOMPOSE_DEPTH.high, DECOMPOSE_DEPTH.default
ROOT_ID = "problem-1-0"
DEPENDENCY_TYPES = ("hierarchical", "sequential", "parallel", "prerequisite")
# A build problem that has to scale or perform gets its infrastructure as a phase of its own, before deployment.
INFRASTRUCTURE_DOMAINS = {"scale", "performance"}
INFRASTRUCTURE_PHASE = "Set up the infrastructure to scale {subject}"
# Where the problem's parts (components) go, per kind: under the phase where the work on them happens, as this task.
WORK_PHASE = {"build": (1, "Implement {part}"), "deliver": (1, "Prepare {part}"), "fix": (2, "Fix {part}"),
              "improve": (2, "Improve {part}"), "decide": (2, "Evaluate {part}"), "plan": (2, "Plan {part}"),
              "understand": (2, "Examine {part}")}
PRONOUNS = re.compile(r"\b(?:it|them)\b")
DECOMPOSE_MAX_TOKENS = 1200
# A model's top-level sub-problem sharing this much wording with the problem is the problem itself.
RESTATES_PROBLEM = 0.8
# A problem listing more tasks than this is a backlog: the rest are named, to be decomposed on their own.
MAX_TASKS = 10
MAX_DESCRIPTION_CHARS = 300


class DependencyCycle(DomainError):
    """Sub-problems that wait on each other in a circle: no order can satisfy them."""

    code = "dependency_cycle"


@dataclass
class Node:
    id: str
    description: str
    depth: int
    parent: str | None = None
    evidence: str | None = None
    children: list[Node] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "description": self.description, "depth": self.depth}
        if self.parent:
            data["parent"] = self.parent
        if self.evidence:
            data["evidence"] = self.evidence
        return data


class Tree:
    """Sub-problems in the seed's id scheme ("problem-1-0", its children "problem-1-0-0"...) and their edges."""

    def __init__(self, description: str, *, max_depth: int):
        self.max_depth = max_depth
        self.root = Node(ROOT_ID, description, 1)
        self.nodes = [self.root]
        self.dependencies: list[dict[str, str]] = []

    def can_grow(self, node: Node) -> bool:
        return node.depth < self.max_depth

    def add(self, parent: Node, description: str, *, evidence: str | None = None) -> Node:
        child = Node(f"{parent.id}-{len(parent.children)}", description, parent.depth + 1, parent.id, evidence)
        parent.children.append(child)
        self.nodes.append(child)
        self.depend(parent, child, "hierarchical")
        return child

    def depend(self, first: Node, then: Node, kind: str) -> None:
        self.dependencies.append({"from": first.id, "to": then.id, "type": kind})

    def ordered_nodes(self) -> list[Node]:
        """Depth first, so each node's sub-problems follow it: the order ties are broken in."""
        ordered = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            ordered.append(node)
            stack.extend(reversed(node.children))
        return ordered


def decompose(*, problem: str, max_depth: int, context: ProblemContext, evidence: list[EvidenceItem],
              backend: ModelBackend | None) -> dict[str, Any]:
    """The seed's decompose_problem data plus method."""
    max_depth = require_max_depth(max_depth)
    profile = profile_problem(problem, context, evidence)
    return model_or_fallback(
        backend, ask=lambda model: _shape(_model_tree(profile, max_depth, model)),
        fallback=lambda: {**_shape(_deterministic_tree(profile, max_depth)), "method": DETERMINISTIC})


def require_max_depth(max_depth: Any) -> int:
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, float)) or max_depth != int(max_depth) \
            or not MIN_DEPTH <= max_depth <= MAX_DEPTH:
        raise InvalidInput(f"max_depth must be a whole number from {MIN_DEPTH} to {MAX_DEPTH} (default "
                           f"{DEFAULT_DEPTH}); got {max_depth!r}.", field="max_depth")
    return int(max_depth)


def _shape(tree: Tree) -> dict[str, Any]:
    nodes = tree.ordered_nodes()
    return {
        "problem": tree.root.description,
        "subProblems": [node.as_dict() for node in nodes],
        "dependencies": tree.dependencies,
        "executionOrder": execution_order([node.id for node in nodes], tree.dependencies),
        "totalSubProblems": len(nodes),
        "maxDepth": tree.max_depth,
    }


def execution_order(ids: list[str], dependencies: list[dict[str, str]]) -> list[str]:
    """A topological order of the dependency graph (Kahn's algorithm). Stable: among the sub-problems ready at
    the same time, the one listed first goes first. DependencyCycle names the sub-problems caught in a cycle."""
    position = {node_id: index for index, node_id in enumerate(ids)}
    waiting_on = dict.fromkeys(ids, 0)
    followers: dict[str, list[str]] = {node_id: [] for node_id in ids}
    for edge in dependencies:
        followers[edge["from"]].append(edge["to"])
        waiting_on[edge["to"]] += 1
    ready = [(position[node_id], node_id) for node_id in ids if waiting_on[node_id] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, node_id = heapq.heappop(ready)
        order.append(node_id)
        for follower in followers[node_id]:
            waiting_on[follower] -= 1
            if waiting_on[follower] == 0:
                heapq.heappush(ready, (position[follower], follower))
    if len(order) < len(ids):
        stuck = [node_id for node_id in ids if waiting_on[node_id] > 0]
        raise DependencyCycle(f"The dependencies form a cycle among {', '.join(stuck)}; no execution order exists.",
                              extra={"subProblems": stuck})
    return order


def _deterministic_tree(profile: ProblemProfile, max_depth: int) -> Tree:
    tree = Tree(profile.problem, max_depth=max_depth)
    _expand(tree, tree.root, profile, profile.problem, top=True)
    return tree


def _expand(tree: Tree, node: Node, profile: ProblemProfile, text: str, *, top: bool) -> None:
    """Split ``text`` under ``node``: into its own task clauses when it has several, else into the phases of its
    kind. ``top`` marks the problem's own level, where the context and the evidence attach."""
    if not tree.can_grow(node):
        return
    tasks = _task_clauses(text)
    if len(tasks) > 1:
        in_sequence = bool(matched(text, SEQUENCE_CUES))
        # "Build a web app ..., then deploy it": "it" is what the first task is about.
        first_subject = profile_problem(tasks[0], ProblemContext()).subject
        previous = None
        for task in tasks[:MAX_TASKS]:
            task = PRONOUNS.sub(first_subject, task)
            child = tree.add(node, shorten(_sentence(task), MAX_DESCRIPTION_CHARS))
            _expand(tree, child, profile, task, top=False)
            if previous is not None and in_sequence:
                tree.depend(previous, child, "sequential")
            previous = child
        if len(tasks) > MAX_TASKS:
            rest = tree.add(node, shorten(f"Decompose the {len(tasks) - MAX_TASKS} remaining tasks separately: "
                                          + "; ".join(tasks[MAX_TASKS:]), MAX_DESCRIPTION_CHARS))
            tree.depend(previous, rest, "sequential")
        if top:
            _attach_context(tree, [node], profile)
        return
    own = profile if top else profile_problem(text, ProblemContext())
    phases = _phases(own, infrastructure=bool(INFRASTRUCTURE_DOMAINS & set(domain_signals(text))))
    previous = None
    children = []
    for index, description in enumerate(phases):
        child = tree.add(node, description)
        children.append(child)
        if previous is not None:
            tree.depend(previous, child, "sequential")
        previous = child
        work_phase, part_task = WORK_PHASE[own.kind]
        if index == work_phase and tree.can_grow(child):
            for part in _components(own):
                tree.add(child, part_task.format(part=part))
    if top:
        _attach_context(tree, children, profile)


def _task_clauses(text: str) -> list[str]:
    """The clauses that are tasks of their own: those that start with an action verb."""
    parts = clauses(text)
    tasks = [part for part in parts if words(part)[:1] and words(part)[0] in VERB_KIND]
    return tasks if len(tasks) > 1 else []


def _sentence(text: str) -> str:
    text = text.strip(" ,.")
    return text[:1].upper() + text[1:]


def _phases(profile: ProblemProfile, *, infrastructure: bool) -> list[str]:
    phases = profile.lifecycle()
    if profile.kind == "build" and infrastructure:
        phases.insert(len(phases) - 1, profile.fill(INFRASTRUCTURE_PHASE))
    return phases


def _components(profile: ProblemProfile) -> list[str]:
    """The parts the problem names besides its subject ("a web app with authentication, payments and search")."""
    subject = set(words(profile.subject))
    return [phrase for phrase in profile.phrases if not set(words(phrase)) <= subject][:5]


def _attach_context(tree: Tree, children: list[Node], profile: ProblemProfile) -> None:
    """Constraints under the first of ``children`` (they shape it), goals under the last (they check it), and the
    caller's sharp edges, issues and decisions under the sub-problem they bear on most."""
    if not children:
        return
    first, last = children[0], children[-1]
    # Attached beside the tasks they bear on (a compound problem's clauses), they still come first and last.
    tasks = list(first.children) if first is last else []
    if tree.can_grow(first):
        for constraint in profile.context.constraints:
            node = tree.add(first, f"Respect the constraint: {constraint}")
            if tasks:
                tree.depend(node, tasks[0], "prerequisite")
    if tree.can_grow(last):
        for goal in profile.context.goals:
            node = tree.add(last, f"Check the goal: {goal}")
            if tasks:
                tree.depend(tasks[-1], node, "sequential")
    candidates = [node for node in tree.nodes if node is not tree.root and tree.can_grow(node)] or [first]
    for item in profile.evidence:
        if item.kind not in {"sharp_edge", "issue", "decision"}:
            continue
        target = max(candidates, key=lambda node: (overlap(node.description, item.content),
                                                   -candidates.index(node)))
        if tree.can_grow(target):
            tree.add(target, f"Account for it: {evidence_line(item)}", evidence=item.id)


def _model_tree(profile: ProblemProfile, max_depth: int, backend: ModelBackend) -> Tree:
    system = ("You decompose problems into sub-problems. The whole problem is the root; break it into sub-problems "
              f"at most {max_depth} levels deep (the root is level 1), each naming what it is about. Use the context "
              "and the user's memories given as evidence (cite ids). Answer with one JSON object and nothing else: "
              "{\"subProblems\": [{\"id\": string, \"description\": string, \"parent\": id or null}], "
              "\"dependencies\": [{\"from\": id, \"to\": id, \"type\": \"sequential\" | \"parallel\" | "
              "\"prerequisite\"}]} where a dependency means 'from' must be done before 'to'.")
    answer = ask_json(backend, system=system, prompt=problem_prompt(profile), max_tokens=DECOMPOSE_MAX_TOKENS,
                      key="decompose-problem")
    tree, renamed = _repaired_tree(profile.problem, answer.get("subProblems"), max_depth=max_depth)
    for edge in answer.get("dependencies") if isinstance(answer.get("dependencies"), list) else []:
        if not isinstance(edge, dict):
            continue
        first, then = renamed.get(_model_id(edge.get("from"))), renamed.get(_model_id(edge.get("to")))
        if first is None or then is None or first is then:
            continue
        kind = edge.get("type") if edge.get("type") in DEPENDENCY_TYPES else "sequential"
        if not any(dependency["from"] == first.id and dependency["to"] == then.id for dependency in tree.dependencies):
            tree.depend(first, then, kind)
    try:
        execution_order([node.id for node in tree.ordered_nodes()], tree.dependencies)
    except DependencyCycle as error:
        raise ModelAnswerInvalid(f"The model's dependencies are unusable: {error.message}") from error
    return tree


def _repaired_tree(problem: str, items: Any, *, max_depth: int) -> tuple[Tree, dict[str, Node]]:
    """The model's sub-problems as a tree with the seed's ids: unknown or missing parents attach to the root, the
    model's own restatement of the whole problem becomes the root, nodes deeper than max_depth are dropped.
    Returns the tree and the model's ids -> nodes."""
    if not isinstance(items, list):
        raise ModelAnswerInvalid("The model's answer has no subProblems list.")
    entries = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("description"), str) and item["description"].strip():
            model_id = _model_id(item.get("id"))
            # Without an id of its own (or with one already taken) a sub-problem is known by its position.
            if model_id is None or model_id in {entry[0] for entry in entries}:
                model_id = f"#{index}"
            entries.append((model_id, item["description"].strip(), _model_id(item.get("parent"))))
    if not entries:
        raise ModelAnswerInvalid("The model's answer has no sub-problems with a description.")
    known = {model_id for model_id, _, _ in entries}
    descriptions = {model_id: description for model_id, description, _ in entries}
    tree = Tree(problem, max_depth=max_depth)
    renamed: dict[str, Node] = {}
    roots = [model_id for model_id, _, parent in entries if parent not in known]
    # The model often lists the whole problem as a root of its own: that is our root, not a child of it.
    restatement = max(roots, key=lambda model_id: overlap(descriptions[model_id], problem), default=None)
    if restatement is not None and overlap(descriptions[restatement], problem) >= RESTATES_PROBLEM:
        renamed[restatement] = tree.root
    children_of: dict[str | None, list[str]] = {}
    for model_id, _, parent in entries:
        if model_id not in renamed:
            parent_key = parent if parent in known and parent != model_id else None
            children_of.setdefault(parent_key, []).append(model_id)
    pending: list[tuple[Node, str | None]] = [(tree.root, None), *[(tree.root, model_id) for model_id in renamed]]
    seen: set[str] = set()
    while pending:
        node, key = pending.pop(0)
        for model_id in children_of.get(key, []):
            if model_id in seen or not tree.can_grow(node):
                continue
            seen.add(model_id)
            child = tree.add(node, shorten(descriptions[model_id], MAX_DESCRIPTION_CHARS))
            renamed[model_id] = child
            pending.append((child, model_id))
    return tree, renamed


def _model_id(value: Any) -> str | None:
    """A model's id as text (models send numbers, or null for none); anything else is no id."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        return None
    return str(value)
