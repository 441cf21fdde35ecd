"""A second recall benchmark beside LoCoMo: synthetic multi-session conversations, evidence recall@5/@10 and
hit@5/@10 of memory_retrieve and memory_search (and, with --mcp, of ThoughtMCP's retrieve_memories on a real
server), per category.

    .venv/bin/python bench/multisession.py                    # generates and stores the turns once, then evaluates
    .venv/bin/python bench/multisession.py --mcp              # + the MCP retrieve tool beside the service rows
    .venv/bin/python bench/multisession.py --seed 11 --json bench/results/multisession_11.json

No public conversational-memory set with evidence labels installs offline (the PyPI packages that name LoCoMo or
LongMemEval download their data at run time), so bench/multisession_data.py generates one from --seed: 10
conversations between two people each, 13 to 17 dated sessions, ~2,300 turns and 380 questions with their evidence
turn ids, in six categories (single-hop, multi-hop, temporal, date-anchored, knowledge-update, implicit; see
bench/README.md). It is stored and scored exactly as bench/locomo_eval.py stores and scores LoCoMo: each conversation
belongs to a bench user of its own (``multisession-<sample id>``), every turn goes through memory_store_many as
"<speaker>: <text>" with created_at = the session's date plus one second a turn, sessionId "<sample id>-session-<n>"
and metadata dia_id, speaker, session, session_date; questions go through memory_retrieve and memory_search with
reinforce=False. The turns are stored again only when the generated ones differ from those in the database.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_user, machine, setup_django, write_json  # noqa: E402
from bench.multisession_data import CATEGORIES, CONVERSATIONS, Conversation, generate  # noqa: E402
from bench.recall import Asked, evaluate, print_report, retrieve_ids, search_ids  # noqa: E402

DATABASE = "engram_bench_multisession"


def user_of(conversation: Conversation):
    return bench_user(f"multisession-{conversation.sample_id}")


def load_conversation(conversation: Conversation, *, reload: bool) -> int:
    """Store the conversation's turns unless the database holds exactly these; returns how many were stored."""
    from apps.memories.models import Memory
    from apps.memories.services import memory_store_many

    user = user_of(conversation)
    expected = sorted((turn.dia_id, f"{turn.speaker}: {turn.text}") for _, turn in conversation.turns())
    stored = Memory.objects.filter(owner=user)
    if not reload and sorted(stored.values_list("metadata__dia_id", "content")) == expected:
        return 0
    stored.delete()
    for session in conversation.sessions:
        memory_store_many(actor=user, items=[{
            "content": f"{turn.speaker}: {turn.text}",
            "created_at": session.when + timedelta(seconds=index),
            "session_id": f"{conversation.sample_id}-session-{session.number}",
            "metadata": {"dia_id": turn.dia_id, "speaker": turn.speaker, "session": session.number,
                         "session_date": session.written},
        } for index, turn in enumerate(session.turns)])
    return len(expected)


def asked(conversations: list[Conversation]) -> list[Asked]:
    """Every question of ``conversations``, as bench/recall.py's evaluate asks them."""
    return [Asked(user_of(conversation), question.question, question.category, frozenset(question.evidence),
                  source=(conversation, question))
            for conversation in conversations for question in conversation.questions]


def baselines(conversations: list[Conversation]) -> dict[str, dict]:
    """What plain rankers get on the same questions, over each conversation's "<speaker>: <text>" turns: Okapi BM25
    (k1 1.5, b 0.75, apps/memories/text.py's words less its stop words) and MiniLM cosine (the memories' encoder),
    as the LoCoMo baselines in locomo_eval.py are; the set is paraphrased on purpose, so BM25 should trail."""
    import math

    import numpy as np

    from apps.memories.embeddings import embed_texts
    from apps.memories.text import STOPWORDS, words

    rankings: dict[str, dict[tuple[str, str], list[str]]] = {"BM25": {}, "MiniLM cosine": {}}
    for conversation in conversations:
        turns = [turn for _, turn in conversation.turns()]
        texts = [f"{turn.speaker}: {turn.text}" for turn in turns]
        bags = [[w for w in words(text) if w not in STOPWORDS] for text in texts]
        frequency = defaultdict(int)
        for bag in bags:
            for word in set(bag):
                frequency[word] += 1
        mean_length = sum(map(len, bags)) / len(bags)
        vectors = np.array(embed_texts(texts))
        queries = np.array(embed_texts([question.question for question in conversation.questions]))
        for question, query in zip(conversation.questions, queries):
            key = (conversation.sample_id, question.question)
            terms = [w for w in words(question.question) if w not in STOPWORDS]
            bm25 = [sum(math.log(1 + (len(bags) - frequency[t] + 0.5) / (frequency[t] + 0.5))
                        * bag.count(t) * 2.5 / (bag.count(t) + 1.5 * (0.25 + 0.75 * len(bag) / mean_length))
                        for t in terms) for bag in bags]
            rankings["BM25"][key] = [turns[i].dia_id for i in sorted(range(len(turns)), key=lambda i: -bm25[i])]
            rankings["MiniLM cosine"][key] = [turns[i].dia_id for i in np.argsort(-(vectors @ query), kind="stable")]
    by_user = {user_of(conversation).pk: conversation.sample_id for conversation in conversations}
    return {name: evaluate(asked(conversations), lambda user, text, limit, ranked=ranked: ranked[(by_user[user.pk], text)])
            for name, ranked in rankings.items()}


def print_misses(misses: list, per_category: int) -> None:
    """A few questions retrieve missed, per category, with their evidence and what came first instead."""
    shown = defaultdict(int)
    for (conversation, question), ranked in ((miss.source, ranked) for miss, ranked in misses):
        if shown[question.category] >= per_category:
            continue
        shown[question.category] += 1
        said = {turn.dia_id: f"{turn.speaker}: {turn.text}" for _, turn in conversation.turns()}
        print(f"\n[{question.category}] {question.question}")
        for dia_id in question.evidence:
            print(f"  evidence {dia_id:7} {said[dia_id][:100]}")
        for rank, dia_id in enumerate(ranked[:3], start=1):
            print(f"  top {rank}    {dia_id:7} {said[dia_id][:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7, help="the generator's seed (default 7)")
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS,
                        help=f"how many conversations (default {CONVERSATIONS}; fewer for a quick look)")
    parser.add_argument("--reload", action="store_true", help="store every turn again")
    parser.add_argument("--only", choices=["retrieve", "search"], help="evaluate one service operation")
    parser.add_argument("--mcp", action="store_true",
                        help="also ThoughtMCP's retrieve_memories on a real server (on a copy of the database)")
    parser.add_argument("--baselines", action="store_true", help="also plain BM25 and MiniLM cosine on the same turns")
    parser.add_argument("--misses", type=int, default=0, metavar="N",
                        help="print N questions per category that memory_retrieve missed in its top 5")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--db", default=DATABASE, help=f"the benchmark database (default {DATABASE})")
    args = parser.parse_args()
    setup_django(args.db)
    conversations = generate(args.seed, args.conversations)
    started = time.perf_counter()
    loaded = sum(load_conversation(conversation, reload=args.reload) for conversation in conversations)
    if loaded:
        print(f"stored {loaded} turns in {time.perf_counter() - started:.0f} s")
    turns = sum(1 for conversation in conversations for _ in conversation.turns())
    questions = sum(len(conversation.questions) for conversation in conversations)
    print(f"{machine()}\nmulti-session (seed {args.seed}): {len(conversations)} conversations, {turns} turns, "
          f"{questions} questions")
    warm_up = user_of(conversations[0])
    reports = {}
    if args.baselines:
        for name, report in baselines(conversations).items():
            reports[name] = report
            print_report(name, report, CATEGORIES)
    for name, operation in {"retrieve": retrieve_ids, "search": search_ids}.items():
        if args.only in (None, name) or (args.mcp and name == "retrieve"):
            operation(warm_up, "warm up", 10)
            misses = [] if name == "retrieve" and args.misses else None
            reports[name] = evaluate(asked(conversations), operation, misses)
            print_report(f"memory_{name}", reports[name], CATEGORIES)
            if misses:
                print_misses(misses, args.misses)
    if args.mcp:
        from bench.mcp_client import labelled, mcp_retriever

        users = [user_of(conversation) for conversation in conversations]
        with mcp_retriever(args.db, users) as retrieve:
            retrieve(warm_up, "warm up", 10)
            reports["mcp_retrieve"] = evaluate(asked(conversations), labelled(retrieve, users))
        print_report("MCP retrieve_memories (ΔR@5 against memory_retrieve)", reports["mcp_retrieve"], CATEGORIES,
                     reports["retrieve"])
    write_json(args.json, {"seed": args.seed, **reports})


if __name__ == "__main__":
    main()
