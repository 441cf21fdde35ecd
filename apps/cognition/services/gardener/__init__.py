"""The gardener: a user's activity from their queries (activity.py) and, while they are idle, a cycle of tidying on
a window of their graph (window.py: successive cycles go round the whole of it) in bounded, undoable batches
(cycle.py runs the steps of steps.py). docs/context_graph.md, "Gardener", has the rules; the numbers are in
limits.py."""
