"""Context Graph pages beyond apps/cognition/views.py, a module per group of tools (insight: blind spots, homeostasis,
neuromodulation, the adversarial check; benchmarks: recall runs and retrieval comparison)."""
