"""Dense retrieval alone on the LoCoMo dev split, for any sentence-transformers model folder: which embedding model
would find more (docs/retrieval.md, "A stronger embedding model"). No database: each conversation's turns (as
bench/locomo_eval.py stores them) are ranked by cosine to the question and scored by bench/recall.py.

    .venv/bin/python bench/dense_models.py                                   # the packaged MiniLM (the default)
    .venv/bin/python bench/dense_models.py --model /path/to/all-mpnet-base-v2
    .venv/bin/python bench/dense_models.py --model /path/to/embeddinggemma-300m \\
        --query-prefix "task: search result | query: " --passage-prefix "title: none | text: "

A folder comes from a package's files (docs/retrieval.md names the packages found and how their parts are joined);
nothing is fetched from a model hub (HF_HUB_OFFLINE=1).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, write_json  # noqa: E402
from bench.locomo_eval import CATEGORIES, LOCOMO, scored_questions, session_turns, turn_content  # noqa: E402
from bench.recall import Asked, evaluate, print_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="a sentence-transformers model folder (default: Engram's packaged MiniLM)")
    parser.add_argument("--query-prefix", default="", help="prepended to each question (the model's query prompt)")
    parser.add_argument("--passage-prefix", default="", help="prepended to each turn (the model's document prompt)")
    parser.add_argument("--data", type=Path, default=LOCOMO, help=f"the dev split (default {LOCOMO})")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.bench")
    import django
    from sentence_transformers import SentenceTransformer

    django.setup()  # the settings name the packaged model and the machine's threads; no database is used
    if args.model is None:
        from apps.memories.embeddings import _model_path

        args.model = str(_model_path())
    model = SentenceTransformer(args.model, device="cpu", local_files_only=True)
    rankings, questions, started = {}, [], time.perf_counter()
    for sample in json.loads(args.data.read_text()):
        turns = [turn for *_, session in session_turns(sample["conversation"]) for turn in session]
        passages = model.encode([args.passage_prefix + turn_content(turn, captions=True) for turn in turns],
                                batch_size=32, normalize_embeddings=True)
        asked = scored_questions(sample)
        queries = model.encode([args.query_prefix + question["question"] for question in asked], batch_size=32,
                               normalize_embeddings=True)
        for question, similarity in zip(asked, queries @ passages.T):
            rankings[(sample["sample_id"], question["question"])] = [
                turns[index]["dia_id"] for index in np.argsort(-similarity, kind="stable")]
            questions.append(Asked(sample["sample_id"], question["question"], CATEGORIES[question["category"]],
                                   frozenset(question["evidence"])))
    print(f"{machine()}\n{args.model}: {model.get_sentence_embedding_dimension()} dimensions, "
          f"{len(questions)} questions, encoded in {time.perf_counter() - started:.0f} s")
    report = evaluate(questions, lambda sample, text, limit: rankings[(sample, text)][:limit])
    print_report("dense alone", report, CATEGORIES.values())
    write_json(args.json, {"model": args.model, **report})


if __name__ == "__main__":
    main()
