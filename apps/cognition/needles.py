"""test_recall_accuracy's corpus: needles, a haystack and paraphrased queries, generated from templates and a seed.

Everything depends only on (seed, needle_count, haystack_size, test_type): the same arguments give the same texts in
the same order, so a run that stops resumes where it left off (services/benchmark.py stores item i of ``items``).

- **Entities** are made-up names (two or three syllables, "Velmora", "Quintaro"): no real word, so nothing in the
  model's training or the user's graph knows them.
- **Facts** are templates with a slot for the entity and one for a value: ten attribute facts ("The {name} service
  is owned by the {value} team.") and five causal ones ("The {name} outage happened because {value}.").
- **Needles** are (entity, fact, value) triples; the **haystack** is other triples, never a needle's (entity, fact)
  pair, drawn from the same entities and facts: the needle's entity appears beside other facts and its fact beside
  other entities, so neither the name nor the fact's words alone find it.
- **Queries** are template paraphrases of the needle, one per needle, by test type: needle_haystack rewords the
  question but keeps the fact's key word ("Which team owns the Velmora service?"); semantic_similarity shares no
  content word with the needle but the entity's name ("Who is responsible for maintaining Velmora?");
  causal_inference asks for the cause or the consequence of a causal needle ("What caused the Velmora outage?");
  full_suite gives needle i the type i mod 3 in that order.
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

NEEDLE_HAYSTACK, SEMANTIC_SIMILARITY, CAUSAL_INFERENCE, FULL_SUITE = (
    "needle_haystack", "semantic_similarity", "causal_inference", "full_suite")
TEST_TYPES = (NEEDLE_HAYSTACK, SEMANTIC_SIMILARITY, CAUSAL_INFERENCE, FULL_SUITE)
SUITE_ORDER = (NEEDLE_HAYSTACK, SEMANTIC_SIMILARITY, CAUSAL_INFERENCE)

SYLLABLES = ("vel", "mor", "quin", "tar", "bri", "osk", "lum", "dra", "fen", "zal", "cor", "ith", "nav", "rel",
             "sum", "tok", "gar", "pel", "wyn", "hal")


@dataclass(frozen=True)
class Fact:
    key: str
    statement: str  # {name}, {value}
    values: tuple[str, ...]
    plain: str  # needle_haystack's question: reworded, keeps the key word
    synonym: str = ""  # semantic_similarity's: no content word of the statement but the name
    causal: bool = False


DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
TEAMS = ("payments", "search", "identity", "billing", "storage", "growth", "mobile", "platform")
MONTHS = ("January", "March", "April", "June", "August", "September", "October", "December")
PEOPLE = ("Amara", "Bastien", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hiroshi", "Ines", "Jonas")

FACTS = (
    Fact("deploy_day", "The {name} project deploys to production only on {value}s.", DAYS,
         "On which day does the {name} project deploy to production?",
         "When is {name} allowed to ship releases live?"),
    Fact("owner", "The {name} service is owned by the {value} team.", TEAMS,
         "Which team owns the {name} service?", "Who is responsible for maintaining {name}?"),
    Fact("database", "The {name} service stores its records in {value}.",
         ("PostgreSQL", "Cassandra", "Redis", "MongoDB", "SQLite", "DynamoDB"),
         "Where does the {name} service store its records?", "Which database backs {name}?"),
    Fact("port", "The {name} gateway listens on port {value}.", ("8080", "9443", "5432", "7000", "6379", "3000"),
         "Which port does the {name} gateway listen on?",
         "What socket number should clients connect to for {name}?"),
    Fact("budget", "The {name} initiative has a yearly budget of {value} euros.",
         ("40,000", "120,000", "75,000", "2 million", "900,000"),
         "What is the yearly budget of the {name} initiative?", "How much money is allocated to {name} annually?"),
    Fact("office", "The {name} office is located in {value}.",
         ("Lisbon", "Osaka", "Nairobi", "Montreal", "Tallinn", "Bogota", "Perth"),
         "Where is the {name} office located?", "In which city do the {name} staff work?"),
    Fact("language", "The {name} backend is written in {value}.", ("Rust", "Go", "Kotlin", "Python", "Elixir", "C#"),
         "Which language is the {name} backend written in?", "What programming language powers {name}'s servers?"),
    Fact("release", "The next {name} release is planned for {value}.", MONTHS,
         "When is the next {name} release planned?", "In which month will {name} launch its upcoming version?"),
    Fact("oncall", "Pager alerts for {name} go to {value} first.", PEOPLE,
         "Who gets the pager alerts for {name} first?", "Who is woken up when {name} breaks at night?"),
    Fact("rate_limit", "The {name} API allows {value} requests per minute.", ("60", "600", "1,200", "30", "5,000"),
         "How many requests per minute does the {name} API allow?", "How often may a client call {name}?"),
    Fact("slow_pages", "Because the {name} cache was {value}, page loads became much slower.",
         ("disabled", "flushed every minute", "undersized", "misconfigured"),
         "Why did the {name} page loads become slower?", causal=True),
    Fact("outage", "The {name} outage happened because {value}.",
         ("a certificate expired", "a DNS record was deleted", "the disk filled up", "a config flag was flipped"),
         "What caused the {name} outage?", causal=True),
    Fact("faster_search", "After the {name} index was {value}, search latency dropped sharply.",
         ("rebuilt", "sharded", "compacted", "moved to SSDs"),
         "What made search latency drop in {name}?", causal=True),
    Fact("failed_migration", "The {name} migration failed because {value}.",
         ("a foreign key was missing", "the lock timed out", "a column was renamed", "the replica lagged"),
         "Why did the {name} migration fail?", causal=True),
    Fact("login_errors", "Rotating the {name} keys {value} led to a wave of login errors.",
         ("on a Friday", "without notice", "twice in one day", "during the sale"),
         "What was the consequence of rotating the {name} keys?", causal=True),
)
ATTRIBUTE_FACTS = tuple(index for index, fact in enumerate(FACTS) if not fact.causal)
CAUSAL_FACTS = tuple(index for index, fact in enumerate(FACTS) if fact.causal)


@dataclass(frozen=True)
class Item:
    content: str
    needle: int | None  # the needle's index, None for the haystack


@dataclass(frozen=True)
class Query:
    needle: int
    test_type: str
    text: str


@dataclass(frozen=True)
class Corpus:
    items: list[Item]  # the storing order: needles at seeded places among the haystack
    queries: list[Query]  # one per needle, in needle order


def needle_types(test_type: str, needle_count: int) -> list[str]:
    if test_type not in TEST_TYPES:
        raise ValueError(f"unknown test type {test_type!r}")
    if test_type == FULL_SUITE:
        return [SUITE_ORDER[index % len(SUITE_ORDER)] for index in range(needle_count)]
    return [test_type] * needle_count


def _names(rng: random.Random, count: int) -> list[str]:
    pool = ["".join(parts).capitalize() for size in (2, 3) for parts in itertools.product(SYLLABLES, repeat=size)
            if len(set(parts)) == size]
    return rng.sample(pool, count)


def generate(*, seed: int, needle_count: int, haystack_size: int, test_type: str) -> Corpus:
    rng = random.Random(f"needles-{seed}")
    types = needle_types(test_type, needle_count)
    # Enough entities that every haystack triple is a distinct (entity, fact) pair, with room to spare.
    entity_count = max(40, math.ceil((haystack_size + needle_count) / 6))
    names = _names(rng, entity_count)
    needle_pairs: list[tuple[int, int]] = []
    taken: set[tuple[int, int]] = set()
    for kind in types:
        facts = CAUSAL_FACTS if kind == CAUSAL_INFERENCE else ATTRIBUTE_FACTS
        while True:
            pair = (rng.randrange(entity_count), rng.choice(facts))
            if pair not in taken:
                break
        taken.add(pair)
        needle_pairs.append(pair)
    free = [pair for pair in itertools.product(range(entity_count), range(len(FACTS))) if pair not in taken]
    haystack_pairs = rng.sample(free, haystack_size)

    def text(pair: tuple[int, int]) -> str:
        fact = FACTS[pair[1]]
        return fact.statement.format(name=names[pair[0]], value=rng.choice(fact.values))

    needles = [Item(text(pair), index) for index, pair in enumerate(needle_pairs)]
    items = [Item(text(pair), None) for pair in haystack_pairs]
    for needle in needles:
        items.insert(rng.randrange(len(items) + 1), needle)
    queries = []
    for index, ((entity, fact_index), kind) in enumerate(zip(needle_pairs, types)):
        fact = FACTS[fact_index]
        template = fact.synonym if kind == SEMANTIC_SIMILARITY else fact.plain
        queries.append(Query(index, kind, template.format(name=names[entity])))
    return Corpus(items=items, queries=queries)
