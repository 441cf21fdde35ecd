"""Sector vectors from one model pass: the content's vector plus each sector's measured offset.

ThoughtMCP embeds five texts per memory, the content behind five prefixes (REFERENCE.md). The model
mean-pools its tokens, so a prefix of k tokens moves a text of n tokens by about k/(n + k) of the way
toward the prefix: the shift is an offset shared by every text, scaled by one over the text's length.
Engram therefore stores one vector ``v`` per memory (half precision) with its token count ``n``, and
derives each sector's vector as

    sector(v) = unit(v + a[sector] / n)

where ``a`` is each sector's mean shift times token count over PROBES, measured once per process. A
sector's similarity with a query ``q`` then needs no vector of its own:

    cos(q, sector(v)) = (q.v + q.a / n) / sqrt(1 + 2 v.a / n + a.a / n^2)   (|v| = 1)

PostgreSQL computes ``q.v`` and ``v.a`` beside each other (vectors.sector_similarity_sql). Short texts move
most: that is what made the prefixed vectors rank short, generic turns lower than the plain one does
(docs/benchmarks.md, "One vector per memory").
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cached_property

import numpy as np
from django.conf import settings
from pgvector import Vector

from apps.memories.batching import Coalescer
from apps.memories.embeddings import ModelReader, count_tokens, embed_texts, sector_texts, token_windows
from apps.memories.models import SECTORS
from apps.memories.text import valence_arousal

SEMANTIC = "semantic"  # the unprefixed text: its offset is zero
# Varied memories (facts, steps, feelings, plans, code, chat) over which the offsets are averaged.
PROBES = (
    "Caroline went to the LGBTQ support group yesterday and said it was really powerful.",
    "Deploy the API by running make release, then check the health endpoint returns 200.",
    "I felt overwhelmed after the meeting; the deadline moved up by two weeks.",
    "The database migration failed because the pgvector extension was missing on the replica.",
    "Melanie is painting a sunset with her kids this weekend.",
    "We decided to use PostgreSQL instead of MongoDB for the reporting service.",
    "Remember to water the tomatoes every morning while the heatwave lasts.",
    "The quarterly revenue grew 12 percent, mostly from the new enterprise customers.",
    "To reset the router, hold the button for ten seconds and wait for the light to blink.",
    "Jon lost his job as a banker and is thinking about opening a dance studio.",
    "The cache invalidation bug only appears when two workers write the same key.",
    "I'm so excited: we finally adopted a puppy from the shelter!",
    "Our flight to Lisbon leaves at 7:40 on Friday; pack the chargers.",
    "Lesson learned: always write the rollback script before running a data migration.",
    "She prefers tea without sugar and hates being interrupted while reading.",
    "The test suite takes 18 minutes; most of it is spent loading the embedding model.",
    "Gina's clothing store opened downtown and the first week sold out.",
    "Step one, beat the eggs; step two, fold in the flour; step three, bake for 25 minutes.",
    "I regret not calling my grandmother more often before she passed away.",
    "The customer asked for invoices in euros starting next month.",
    "Tim is reading a fantasy novel series and wants recommendations for similar books.",
    "Rate limiting returns HTTP 429 with a Retry-After header after 60 requests a minute.",
    "Thinking back, the project slipped because nobody owned the integration tests.",
    "The conference talk about vector databases was recorded and is on the website.",
    "He runs five kilometres every morning and is training for a half marathon in May.",
    "Use git rebase to keep the branch linear, then fast-forward main.",
    "The landlord will fix the heating on Tuesday between 9 and noon.",
    "Audrey adopted two more dogs and takes them hiking on weekends.",
    "The error says permission denied when the worker writes to the shared volume.",
    "I am proud of how the team handled the outage: calm, quick and honest with users.",
    "Budget for the trip: 800 for flights, 600 for the hotel, the rest for food.",
    "Insight: small daily notes are easier to search than one long weekly summary.",
    "The kids loved the science museum, especially the planetarium show.",
    "Refactor the payment module so that retries are idempotent.",
    "Andrew is worried about finding a pet-friendly apartment in the city.",
    "Monthly active users dropped after the redesign; support tickets doubled.",
    "Nate won his first video game tournament and celebrated with friends.",
    "The contract renewal is due on the first of March; legal must review it first.",
    "I realised I work best in the mornings, so I moved deep work before lunch.",
    "Install the package with pip, then set the environment variable and restart the server.",
)
# Times and sessions of the episodic probes: the prefix's date varies, its words do not.
_PROBE_EPOCH = datetime(2024, 3, 1, 9, 30, tzinfo=timezone.utc)

_offsets: SectorOffsets | None = None
_lock = threading.Lock()


@dataclass(frozen=True)
class SectorOffsets:
    """Each sector's shift times token count, as a matrix in SECTORS order (semantic's row is zero)."""

    matrix: np.ndarray  # (len(SECTORS), dimensions), float32

    def of(self, sector: str) -> np.ndarray:
        return self.matrix[SECTORS.index(sector)]

    @cached_property
    def texts(self) -> tuple[str, ...]:
        """Each row in pgvector's text form, made once: formatting them took ~8% of a store's Python time."""
        return tuple(Vector(row).to_text() for row in self.matrix)


@dataclass(frozen=True)
class ContentVector:
    """What is stored of a memory's meaning: its content's vector and how many tokens the model read."""

    vector: list[float]
    tokens: int


_writers = Coalescer(lambda texts: embed_texts(texts), workers=lambda: settings.ENGRAM_EMBEDDING_WORKERS)


def embed_contents(texts: list[str], reader: ModelReader | None = None) -> list[ContentVector]:
    """One model pass per text, batched, and shared with the other threads storing at the same time. A text
    longer than the model's window is read window by window, in the same batch: its vector is the unit mean of
    its windows' vectors, and its token count the harmonic mean of theirs, since a sector's offset moves each
    window's vector by 1/n of its own length n (see the module's docstring). With `reader`, that model embeds,
    in this thread (a re-embedding into it)."""
    windows = (reader.windows if reader else token_windows)(texts)
    flat = [piece for found in windows for piece, _ in found]
    vectors = reader.encode(flat) if reader else _writers.embed(flat)
    embedded, start = [], 0
    for pieces in windows:
        if len(pieces) == 1:
            embedded.append(ContentVector(vectors[start], pieces[0][1]))
        else:
            mean = np.mean(np.asarray(vectors[start:start + len(pieces)], dtype=np.float64), axis=0)
            tokens = round(len(pieces) / sum(1 / max(count, 1) for _, count in pieces))
            embedded.append(ContentVector((mean / np.linalg.norm(mean)).tolist(), tokens))
        start += len(pieces)
    return embedded


def mean_pair_cosine(*, dot: np.ndarray, own_shift: np.ndarray, own_tokens: int, their_shift: np.ndarray,
                     their_tokens: np.ndarray, shift_norms: np.ndarray) -> np.ndarray:
    """Mean over sectors of cos(sector(a), sector(b)) for one memory a against rows of others b, from numbers
    alone: dot = a.b per row, own_shift = a.A (per sector), their_shift = b.A (rows x sectors), the token
    counts, and shift_norms = A.A (per sector). Each sector: (a.b + a.A/nb + b.A/na + A.A/(na nb)) /
    (|a + A/na| |b + A/nb|)."""
    na = max(own_tokens, 1)
    nb = np.maximum(np.asarray(their_tokens, dtype=np.float64), 1)[:, None]
    numerator = dot[:, None] + own_shift[None, :] / nb + their_shift / na + shift_norms[None, :] / (na * nb)
    own_norm = np.sqrt(np.maximum(1 + 2 * own_shift / na + shift_norms / na ** 2, 1e-12))
    their_norm = np.sqrt(np.maximum(1 + 2 * their_shift / nb + shift_norms[None, :] / nb ** 2, 1e-12))
    return (numerator / (own_norm[None, :] * their_norm)).mean(axis=1)


def token_counts(texts: list[str]) -> list[int]:
    """How many tokens the model reads of each text (special tokens included, truncated as encode() does)."""
    return count_tokens(texts)


def sector_offsets() -> SectorOffsets:
    """Measured once per process, in one batched model call over PROBES' sector texts."""
    global _offsets
    if _offsets is None:
        with _lock:
            if _offsets is None:
                _offsets = _measure()
    return _offsets


def _measure() -> SectorOffsets:
    texts = []
    for index, content in enumerate(PROBES):
        valence, arousal = valence_arousal(content)
        by_sector = sector_texts(content=content, created_at=_PROBE_EPOCH + timedelta(days=index * 11, minutes=index * 37),
                                 session_id=f"session-{index % 7}" if index % 3 else "", valence=valence, arousal=arousal)
        texts.extend(by_sector[sector] for sector in SECTORS)
    vectors = np.asarray(embed_texts(texts), dtype=np.float32).reshape(len(PROBES), len(SECTORS), -1)
    shifts = vectors - vectors[:, [SECTORS.index(SEMANTIC)], :]
    tokens = np.asarray(token_counts(list(PROBES)), dtype=np.float32)
    return SectorOffsets(matrix=(shifts * tokens[:, None, None]).mean(axis=0))
