"""Writes of the reasoning app, one module per area: thoughts, notebooks, analysis."""
