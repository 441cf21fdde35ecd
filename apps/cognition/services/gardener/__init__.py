"""The gardener: a user's activity from their queries (activity.py) and, while they are idle, a cycle of tidying on
their graph in bounded, undoable batches (cycle.py). docs/context_graph.md, "Gardener", has the rules; the numbers
are in limits.py."""
