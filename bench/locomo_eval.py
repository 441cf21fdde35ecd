"""LoCoMo dev split: evidence recall@5/@10 and hit@5/@10 of memory_retrieve and memory_search.

    .venv/bin/python bench/locomo_eval.py            # loads the turns once, then evaluates
    .venv/bin/python bench/locomo_eval.py --reload   # store the turns again (after a storage change)
    .venv/bin/python bench/locomo_eval.py --no-captions   # turns without their photo captions
    .venv/bin/python bench/locomo_eval.py --reload --db engram_bench_locomo_int8 --memories-variant int8-ffn
    .venv/bin/python bench/locomo_eval.py --fold tune   # only the tuning fold's questions (--fold held: the rest)
    .venv/bin/python bench/locomo_eval.py --mcp         # + ThoughtMCP's retrieve_memories over HTTP, beside the service

Data: ../shared/bench/locomo/locomo_dev.json beside the checkout (see its README). Each conversation
belongs to a user of its own (``locomo-<sample_id>``) in the benchmark database ``engram_bench_locomo``
(config/settings/bench.py), never the main ``engram`` one. Every turn is stored through
memory_store_many, the path import_memories takes (embeddings, keywords, salience, links), with

    content     "<speaker>: <text>", plus " [shares a photo: <blip_caption>]" when the turn has a photo:
                the caption is what the turn said with its picture, and some questions ask about it
                (--no-captions measures without, in a database of its own)
    created_at  the session's date and time, plus one second per turn to keep their order
    sessionId   "<sample_id>-session-<n>"
    metadata    dia_id, speaker, session number, session date as written in the data

Each question then goes through memory_retrieve (what retrieve_memories calls) and memory_search (what
search_memories calls) with reinforce=False, so that the evaluation leaves the data it measures as it
was. Scoring follows the README: category 5 skipped, evidence ids that match no turn skipped, questions
left with none skipped (759 scored); recall@k = share of a question's evidence turns in the top k,
averaged over questions; hit@k = at least one in the top k; also per category.

Folds: a retrieval change is tuned on the questions of the `tune` conversations and kept only when it does not
hurt the `held` ones, which it was not tuned on (issue 22); `all` is the whole dev split. Every conversation is
stored whatever the fold, so that the figures of a fold do not depend on which others were loaded.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, bench_user, machine, setup_django, write_json  # noqa: E402
from bench.recall import Asked, evaluate, print_report, retrieve_ids, search_ids  # noqa: E402

LOCOMO = REPO.parent / "shared" / "bench" / "locomo" / "locomo_dev.json"
DATABASE = "engram_bench_locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "inferential", 4: "single-hop"}
EXPECTED_QUESTIONS = 759
FOLDS = {"tune": ("conv-26", "conv-41", "conv-43"), "held": ("conv-30", "conv-42")}
BASELINES = "BM25 R@5 0.518 R@10 0.591 | MiniLM cosine R@5 0.390 R@10 0.503 | RRF R@5 0.491"


def session_turns(conversation: dict) -> list[tuple[int, datetime, str, list[dict]]]:
    sessions = []
    for key, turns in conversation.items():
        if key.startswith("session_") and isinstance(turns, list):
            number = int(key.removeprefix("session_"))
            written = conversation[f"{key}_date_time"]
            when = datetime.strptime(written, "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
            sessions.append((number, when, written, turns))
    return sorted(sessions)


def turn_content(turn: dict, *, captions: bool) -> str:
    content = f"{turn['speaker']}: {turn['text']}"
    if captions and turn.get("blip_caption"):
        content += f" [shares a photo: {turn['blip_caption']}]"
    return content


def load_conversation(sample: dict, *, reload: bool, captions: bool) -> int:
    from apps.memories.models import Memory
    from apps.memories.services import memory_store_many

    user = bench_user(f"locomo-{sample['sample_id']}")
    sessions = session_turns(sample["conversation"])
    expected = sum(len(turns) for *_, turns in sessions)
    stored = Memory.objects.filter(owner=user)
    if stored.count() == expected and not reload:
        return 0
    stored.delete()
    for number, when, written, turns in sessions:
        items = [{
            "content": turn_content(turn, captions=captions),
            "created_at": when + timedelta(seconds=index),
            "session_id": f"{sample['sample_id']}-session-{number}",
            "metadata": {"dia_id": turn["dia_id"], "speaker": turn["speaker"], "session": number,
                         "session_date": written},
        } for index, turn in enumerate(turns)]
        memory_store_many(actor=user, items=items)
    return expected


def scored_questions(sample: dict) -> list[dict]:
    turn_ids = {turn["dia_id"] for *_, turns in session_turns(sample["conversation"]) for turn in turns}
    questions = []
    for qa in sample["qa"]:
        if qa["category"] == 5:
            continue
        evidence = {dia_id for dia_id in qa["evidence"] if dia_id in turn_ids}
        if evidence:
            questions.append({"question": qa["question"], "category": qa["category"], "evidence": evidence})
    return questions


def asked(samples: list[dict]) -> list[Asked]:
    """Every scored question of ``samples``, as bench/recall.py's evaluate asks them."""
    return [Asked(bench_user(f"locomo-{sample['sample_id']}"), question["question"],
                  CATEGORIES[question["category"]], frozenset(question["evidence"]))
            for sample in samples for question in scored_questions(sample)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reload", action="store_true", help="store every turn again")
    parser.add_argument("--no-captions", action="store_true", help="store turns without their photo captions")
    parser.add_argument("--only", choices=["retrieve", "search"], help="evaluate one operation")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--db", default=DATABASE, help=f"the benchmark database (default {DATABASE})")
    parser.add_argument("--data", type=Path, default=LOCOMO, help=f"the dev split (default {LOCOMO}; a git "
                        "worktree outside the main checkout's folder passes the main checkout's)")
    parser.add_argument("--fold", choices=["tune", "held", "all"], default="all",
                        help="the conversations whose questions are asked: tune "
                        f"({', '.join(FOLDS['tune'])}), held ({', '.join(FOLDS['held'])}) or all (default)")
    parser.add_argument("--mcp", action="store_true", help="also ask ThoughtMCP's retrieve_memories over HTTP (a real "
                        "server of the checkout on a copy of the database), beside memory_retrieve")
    parser.add_argument("--memories-variant", help="the ONNX variant that stores the turns, any of "
                        "apps/memories/onnx_encoder.py VARIANTS (default: ENGRAM_EMBEDDING_INT8's)")
    args = parser.parse_args()
    setup_django(f"{args.db}_nocaptions" if args.no_captions else args.db)
    if args.memories_variant:
        from django.conf import settings

        from apps.memories.onnx_encoder import VARIANTS

        if args.memories_variant not in VARIANTS:
            parser.error(f"--memories-variant must be one of: {', '.join(VARIANTS)}")
        settings.ENGRAM_EMBEDDING_INT8 = args.memories_variant
    samples = json.loads(args.data.read_text())
    started = time.perf_counter()
    loaded = sum(load_conversation(sample, reload=args.reload, captions=not args.no_captions) for sample in samples)
    if loaded:
        print(f"stored {loaded} turns in {time.perf_counter() - started:.0f} s")
    scored = sum(len(scored_questions(sample)) for sample in samples)
    assert scored == EXPECTED_QUESTIONS, f"{scored} scored questions, the README says {EXPECTED_QUESTIONS}"
    assert sorted(sum(FOLDS.values(), ())) == sorted(sample["sample_id"] for sample in samples), "a fold lost a conversation"
    if args.fold != "all":
        samples = [sample for sample in samples if sample["sample_id"] in FOLDS[args.fold]]
        scored = sum(len(scored_questions(sample)) for sample in samples)
    print(f"{machine()}\nLoCoMo dev, fold {args.fold}: {len(samples)} conversations, {scored} scored questions\n"
          f"baselines (all): {BASELINES}")
    operations = {"retrieve": retrieve_ids, "search": search_ids}
    reports = {}
    questions = asked(samples)
    for name, operation in operations.items():
        if args.only in (None, name) or (args.mcp and name == "retrieve"):
            operation(questions[0].user, "warm up", 10)
            reports[name] = evaluate(questions, operation)
            print_report(f"memory_{name}", reports[name], CATEGORIES.values())
    if args.mcp:
        from bench.mcp_client import labelled, mcp_retriever

        users = list({question.user.pk: question.user for question in questions}.values())
        with mcp_retriever(args.db, users) as retrieve:
            retrieve(users[0], "warm up", 10)
            reports["mcp_retrieve"] = evaluate(questions, labelled(retrieve, users))
        print_report("MCP retrieve_memories (ΔR@5 against memory_retrieve)", reports["mcp_retrieve"],
                     CATEGORIES.values(), reports["retrieve"])
    write_json(args.json, {"fold": args.fold, **reports})


if __name__ == "__main__":
    main()
