"""Hand-built graphs with known weights for the reasoning tests (causal and entailment): real memories (MiniLM
vectors, so concepts in words resolve by retrieval) and exactly the links each test draws, none of the store's own."""
from __future__ import annotations

from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_store_many

CAUSAL, SEMANTIC, HIERARCHICAL, TEMPORAL = "causal", "semantic", "hierarchical", "temporal"


def draw(user, texts: dict[str, str], links: list[tuple[str, str, str, float]], cube_id=None) -> dict[str, Memory]:
    """Store each text (one model call, no automatic links) and draw the links (source, target, type, weight)."""
    stored = memory_store_many(actor=user, items=[{"content": text} for text in texts.values()], link=False,
                               cube_id=cube_id)
    nodes = {name: result.memory for name, result in zip(texts, stored)}
    MemoryLink.objects.bulk_create([MemoryLink(source=nodes[source], target=nodes[target], link_type=link_type,
                                               weight=weight) for source, target, link_type, weight in links])
    return nodes


# A confounder: summer heat (C) drives both ice cream sales (X) and drownings (Y); X drives freezer stock (Z).
CONFOUNDED = {
    "C": "Summer heat waves push daytime temperatures above thirty degrees.",
    "X": "Ice cream sales rise sharply at the seaside kiosks.",
    "Y": "Drowning incidents increase at the public beaches.",
    "Z": "Freezer stock at the kiosks runs low by the afternoon.",
}
CONFOUNDED_LINKS = [("C", "X", CAUSAL, 0.9), ("C", "Y", CAUSAL, 0.8), ("X", "Z", CAUSAL, 0.7)]

# Counterfactual support: X is the only support of A and B (which also feed each other), while D has a second
# cause W, which keeps D and E supported without X.
SUPPORT = {
    "X": "The deploy script deletes the shared build cache.",
    "A": "Every build recompiles all dependencies from scratch.",
    "B": "Continuous integration jobs take forty minutes each.",
    "D": "Disk usage on the build runners drops overnight.",
    "W": "A weekly cron job prunes old docker images.",
    "E": "Runner disk alerts stop paging the on-call engineer.",
}
SUPPORT_LINKS = [("X", "A", CAUSAL, 0.9), ("A", "B", CAUSAL, 0.8), ("B", "A", CAUSAL, 0.5), ("X", "D", CAUSAL, 0.6),
                 ("W", "D", CAUSAL, 0.5), ("D", "E", CAUSAL, 0.9)]

# Paths from S to T: the best product (S-A-T, 0.81) is not the fewest links (S-T, 0.5); then S-B-C-T (0.648), S-D-T
# (0.57), S-T (0.5).
ROUTES = {
    "S": "The payment gateway starts timing out under load.",
    "A": "Checkout requests queue up in the web tier.",
    "B": "Retry storms hit the order database.",
    "C": "Database connections run out in the pool.",
    "D": "The mobile app shows spinning wheels to shoppers.",
    "T": "Customers abandon their carts before paying.",
}
ROUTE_LINKS = [("S", "A", CAUSAL, 0.9), ("A", "T", CAUSAL, 0.9), ("S", "T", CAUSAL, 0.5), ("S", "B", CAUSAL, 0.8),
               ("B", "C", CAUSAL, 0.9), ("C", "T", CAUSAL, 0.9), ("S", "D", CAUSAL, 0.95), ("D", "T", CAUSAL, 0.6)]

# An IS-A hierarchy: kitten -> cat -> mammal -> animal -> living thing, and a semantic link that is no hierarchy.
TAXONOMY = {
    "kitten": "A kitten is a young cat under one year old.",
    "cat": "The cat is a small domesticated carnivorous feline.",
    "mammal": "Mammals are warm-blooded vertebrates that nurse their young.",
    "animal": "Animals are multicellular organisms that eat other organisms.",
    "living": "Living things grow, reproduce and respond to their surroundings.",
    "dog": "Dogs are loyal domesticated canines kept as pets.",
}
TAXONOMY_LINKS = [("kitten", "cat", HIERARCHICAL, 0.7), ("cat", "mammal", HIERARCHICAL, 0.9),
                  ("mammal", "animal", HIERARCHICAL, 0.8), ("animal", "living", HIERARCHICAL, 0.5),
                  ("dog", "cat", SEMANTIC, 0.9)]

# A causal chain X -> A -> B -> C -> D, and a link too weak for expand_causal_path's default min_weight.
CHAIN = {
    "X": "The team skips writing integration tests.",
    "A": "Regressions slip into the release branch.",
    "B": "Hotfixes are shipped on Friday evenings.",
    "C": "The on-call engineer burns out.",
    "D": "Senior engineers leave the company.",
    "F": "The office coffee machine breaks.",
}
CHAIN_LINKS = [("X", "A", CAUSAL, 0.9), ("A", "B", CAUSAL, 0.8), ("B", "C", CAUSAL, 0.7), ("C", "D", CAUSAL, 0.6),
               ("X", "F", CAUSAL, 0.05)]
