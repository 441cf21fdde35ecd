"""The Mind seed's own examples (tests/contracts/mind.json, from seeds/004), as the arguments its tools take."""
from tests.contracts import contract

# mind_add_edge's example.
CRYPTO_EDGE = contract("mind")["tools"]["mind_add_edge"]["example"]
