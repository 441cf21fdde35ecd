"""The reasoning analyses, deterministic and model-backed (apps/reasoning/services/analysis.py runs them).

Which module serves which ThoughtMCP tool:
- think: think.py, over the four streams of streams.py
- think_parallel: parallel.py, over the same streams
- analyze_systematically: frameworks.py
- decompose_problem: decompose.py
- assess_confidence: confidence.py
- detect_bias: readings.py, over the lexicon detector bias.py
- detect_emotion: readings.py, over the lexicon detector emotion.py (and its lexicons/)
- analyze_reasoning: quality.py, with confidence.py and readings.py

Shared by them: common.py (what an analysis takes: context, evidence items, the model), evidence.py (the caller's
memories as evidence), llm.py (asking a model and checking its answer), problem.py (a problem's profile, for the
four problem tools) and reasoning_text.py (reading English: words, phrases, sentences, negation). evaluation.py
measures the lexicon detectors (bench/reasoning_detectors.py, tests/reasoning/test_detector_floors.py).
"""
