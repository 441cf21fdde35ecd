"""bench/multisession_data.py, the synthetic recall benchmark's generator: the same seed gives the same conversations
in any process, and every question points at turns that exist and say what it asks about (no model, no database)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from bench.multisession_data import CATEGORIES, CONVERSATIONS, RELATIVE, generate

REPO = Path(__file__).resolve().parent.parent.parent


def digest_in_process(seed: int, conversations: int = CONVERSATIONS, first: int = CONVERSATIONS) -> str:
    """A hash of the ``first`` conversations generated: sessions, turns, questions with their evidence."""
    return hashlib.sha256(json.dumps([[c.sample_id, [[s.number, s.written, [[t.dia_id, t.speaker, t.text]
                                                                           for t in s.turns]] for s in c.sessions],
                                        [[q.question, q.category, q.evidence] for q in c.questions]]
                                       for c in generate(seed, conversations)[:first]]).encode()).hexdigest()


def test_the_same_seed_gives_the_same_benchmark_in_another_process():
    # Another hash seed: an order taken from a set or a dict of strings would show here.
    other = subprocess.run([sys.executable, "-c", "from tests.bench.test_multisession import digest_in_process; "
                            "print(digest_in_process(7))"], cwd=REPO, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"}).stdout.strip()
    assert other == digest_in_process(7)
    assert digest_in_process(8) != digest_in_process(7)


def test_fewer_conversations_are_the_first_of_more():
    # --conversations 2 stores the same users' same turns as a full run: neither run stores them again.
    assert digest_in_process(7, conversations=3) == digest_in_process(7, first=3)


@pytest.fixture(scope="module")
def conversations():
    return generate(7)


def test_every_question_has_evidence_turns_said_by_the_person_it_asks_about(conversations):
    for conversation in conversations:
        turns = {turn.dia_id: turn for _, turn in conversation.turns()}
        assert len(turns) == sum(len(session.turns) for session in conversation.sessions), "turn ids repeat"
        for question in conversation.questions:
            assert question.category in CATEGORIES
            assert question.evidence and len(set(question.evidence)) == len(question.evidence) == len(question.tags)
            asked = [name for name in conversation.speakers if re.search(rf"\b{name}\b", question.question)]
            assert len(asked) == 1, question.question
            for dia_id in question.evidence:
                assert dia_id in turns, (conversation.sample_id, question.question, dia_id)
                assert turns[dia_id].speaker == asked[0] and turns[dia_id].tag, (question.question, dia_id)


def test_sessions_are_dated_in_order_and_turn_ids_follow_them(conversations):
    for conversation in conversations:
        dates = [session.when for session in conversation.sessions]
        assert dates == sorted(dates) and len(set(dates)) == len(dates)
        assert dates[-1].year <= 2023  # recency is 0 for every turn: the figures do not depend on the day they run
        for session in conversation.sessions:
            assert [turn.dia_id for turn in session.turns] == [
                f"D{session.number}:{n}" for n in range(1, len(session.turns) + 1)]


def test_the_categories_and_size_are_as_documented(conversations):
    counts = Counter(question.category for conversation in conversations for question in conversation.questions)
    assert counts == {"single-hop": 120, "knowledge-update": 60, "temporal": 60, "multi-hop": 60,
                      "date-anchored": 40, "implicit": 40}
    assert 1800 <= sum(1 for conversation in conversations for _ in conversation.turns()) <= 3000


def test_a_dated_question_names_the_day_its_evidence_turn_refers_to(conversations):
    phrases = [phrase for phrase, _, _ in RELATIVE]
    checked = 0
    for conversation in conversations:
        sessions = {f"D{session.number}:{n}": session for session in conversation.sessions
                    for n in range(1, len(session.turns) + 1)}
        turns = {turn.dia_id: turn for _, turn in conversation.turns()}
        for question in conversation.questions:
            if question.category not in ("temporal", "date-anchored"):
                continue
            (dia_id,) = question.evidence
            said = sessions[dia_id].when.date()
            assert any(phrase in turns[dia_id].text.lower() for phrase in phrases), turns[dia_id].text
            if question.category == "date-anchored":
                day = re.search(r"(\d{1,2} [A-Z][a-z]+ \d{4})", question.question)
                if day:  # on, the weekend of, the week of: a day up to a fortnight and a week before the session
                    named = datetime.strptime(day.group(1), "%d %B %Y").date()
                    assert 0 < (said - named).days <= 21, (question.question, said)
                else:  # in <month>: the month before the session's
                    month = re.search(r"in ([A-Z][a-z]+) (\d{4})", question.question)
                    named = datetime.strptime(f"1 {month.group(1)} {month.group(2)}", "%d %B %Y").date()
                    assert (said.replace(day=1) - named).days in range(28, 32), (question.question, said)
                checked += 1
    assert checked == 40
