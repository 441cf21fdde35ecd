"""The reasoning analyses, deterministic and model-backed (apps/reasoning/services/analysis.py runs them)."""
