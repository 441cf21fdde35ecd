"""Chat's relevance floor (apps/chat/relevance.py) on a realistic set of a person's memories, with the real MiniLM:
questions about them are answered from the memory that holds the answer, and questions about nothing they hold
(gibberish, off-topic, or sharing one word with a memory) are told nothing is relevant. The floor was chosen on
LoCoMo (docs/architecture.md, "Chat"); this set guards it against drifting."""
import pytest

from apps.chat.relevance import RELEVANCE_FLOOR, chat_relevance, content_words, same_word
from apps.chat.services import chat_send

pytestmark = pytest.mark.django_db

MEMORIES = {
    "tomatoes": "The tomatoes went into the south bed on 12 April; water them every other evening.",
    "slugs": "Slugs ate the lettuce seedlings again: put copper tape around the raised bed.",
    "compost": "Compost from the left bin is ready in May; the right bin was started in March.",
    "cat": "My cat Miso is a grey tabby; she has her booster vaccination in October.",
    "vet": "The vet appointment for the dog is on Tuesday at noon.",
    "tea": "I prefer green tea over coffee in the morning.",
    "deploy": "We deploy the API with make release on Fridays after the test suite passes.",
    "pgbouncer": "PgBouncer pools the payment service's database connections: pool size 20, transaction mode.",
    "oncall": "Priya is on call this week; page her through the incident channel, not by phone.",
    "offsite": "The team offsite is in Lisbon from 14 to 16 May; book flights before the end of March.",
    "passport": "My passport expires in August 2027; renewing takes about six weeks.",
    "dentist": "Dentist check-up with Dr. Okafor on 3 June at 9:30.",
    "running": "Running plan: 5 km on Monday and Thursday, a long run of 12 km on Sunday.",
    "book": "Reading 'The Overstory' for the book club, which meets on the last Friday of the month.",
    "rent": "Rent is due on the first of each month; the landlord prefers a bank transfer.",
    "nothing": "There is nothing left in the freezer; buy peas and ice cream on Saturday.",
}
RELATED = [
    ("When should I water the tomatoes?", "tomatoes"),
    ("What can I do about the slugs eating my lettuce?", "slugs"),
    ("When will the compost be ready?", "compost"),
    ("When is my cat's vaccination?", "cat"),
    ("When is the dog's vet appointment?", "vet"),
    ("Do I like coffee or tea in the morning?", "tea"),
    ("How do we deploy the API?", "deploy"),
    ("What pool size does PgBouncer use?", "pgbouncer"),
    ("Who is on call this week?", "oncall"),
    ("Where is the team offsite?", "offsite"),
    ("When does my passport expire?", "passport"),
    ("When is my next dentist appointment?", "dentist"),
    ("How far is my Sunday long run?", "running"),
    ("Which book is the book club reading?", "book"),
    ("When is the rent due?", "rent"),
]
UNRELATED = [
    "zzzz qqqq nothing relevant",
    "asdf jkl qwerty",
    "What is the capital of Mongolia?",
    "How many moons does Jupiter have?",
    "Explain the Krebs cycle",
    "Who won the 1966 World Cup?",
    "What port does Redis listen on?",
    "What is my car's licence plate?",
    "How do I fix a segfault in the C extension?",
]


@pytest.fixture
def memories(user, store):
    return {name: store(user, content) for name, content in MEMORIES.items()}


@pytest.mark.parametrize("question, expected", RELATED)
def test_a_question_about_a_memory_is_answered_from_it(user, memories, no_llm, question, expected):
    reply = chat_send(actor=user, query=question, top_k=5)
    assert reply.context_used, f"{question!r}: nothing cleared the floor {RELEVANCE_FLOOR}"
    assert reply.context_used[0].memory == memories[expected]
    assert all(item.relevance >= RELEVANCE_FLOOR for item in reply.context_used)
    assert reply.method == "extractive" and "[1]" in reply.response


@pytest.mark.parametrize("question", UNRELATED)
def test_a_question_about_nothing_held_is_told_nothing_is_relevant(user, memories, no_llm, question):
    reply = chat_send(actor=user, query=question, top_k=5)
    assert reply.context_used == [], [(item.memory.content, item.relevance) for item in reply.context_used]
    assert reply.method == "none" and "Nothing in your memories is relevant" in reply.response


def test_relevance_is_the_cosine_and_the_share_of_the_questions_words():
    words = content_words("When should I water the tomatoes?")
    assert words == {"water", "tomatoes"}  # stopwords and short words left out
    assert chat_relevance(query_words=words, content="Water the tomato plants.", dense=0.6) == 0.8
    assert chat_relevance(query_words=words, content="Nothing in common.", dense=0.5) == 0.25
    assert chat_relevance(query_words=set(), content="anything", dense=0.9) == 0.45
    assert same_word("tomato", "tomatoes") and not same_word("car", "card") and same_word("Tomás".lower(), "tomás")
