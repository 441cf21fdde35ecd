"""Context Graph reads, one module per area (graph navigation, citations, status, tombstones, lineage)."""
