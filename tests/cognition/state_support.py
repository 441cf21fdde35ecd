"""What the state tests share: a hand-built graph for homeostasis, with a directed causal cycle and an open conflict
task."""
from __future__ import annotations

from apps.cognition.models import CurationTask
from apps.cognition.services.inbox import task_open
from apps.memories.models import Memory
from apps.memories.services.curation import memory_link
from tests.cognition.support import node, unlinked

IMPORTANCE = {"a": 0.9, "b": 0.8, "c": 0.3, "d": 0.95, "e": 0.7, "f": 0.2}


def causal(user, source, target, weight=0.8):
    memory_link(actor=user, source_id=source.pk, target_id=target.pk, link_type="causal", weight=weight)


def graph(user, prefix: str = "") -> dict:
    """a -> b -> c -> a, a directed causal cycle (c unimportant); d -> a, important but off the cycle; e (important)
    and f in an open ambiguity task."""
    topics = {"a": "deploys", "b": "migrations", "c": "backups", "d": "alerts", "e": "invoices", "f": "receipts"}
    nodes = {name: node(user, f"{prefix}The {topic} note number {name}.", topic) for name, topic in topics.items()}
    unlinked(user)
    for name, importance in IMPORTANCE.items():
        Memory.objects.filter(pk=nodes[name].pk).update(importance=importance)
    causal(user, nodes["a"], nodes["b"])
    causal(user, nodes["b"], nodes["c"])
    causal(user, nodes["c"], nodes["a"])
    causal(user, nodes["d"], nodes["a"])
    task_open(owner=user, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED,
              node_ids=[nodes["e"].pk, nodes["f"].pk], reason="They disagree about the invoices.",
              suggested_tool="annotate_node")
    return nodes
