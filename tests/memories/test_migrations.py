"""Migration 0006: each memory's five sector vectors become its one content vector, and back."""
import json

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.cubes.services import cube_ensure_personal
from apps.memories.embeddings import embed_texts
from apps.memories.models import Memory
from apps.memories.sectors import token_counts

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("memories", "0005_alter_memory_kind")]
AFTER = [("memories", "0006_one_vector_per_memory")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.fixture
def at_0005():
    migrate(BEFORE)
    yield
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_the_semantic_vector_and_its_token_count_are_kept(user, at_0005):
    contents = ["The ferry leaves at seven from pier 3", "ok"]
    vectors = embed_texts(contents)
    cube = cube_ensure_personal(actor=user)
    ids = [Memory.objects.create(cube=cube, owner=user, content=content).pk for content in contents]
    with connection.cursor() as cursor:
        for memory_id, vector in zip(ids, vectors):
            for sector in ("episodic", "semantic", "procedural", "emotional", "reflective"):
                stored = vector if sector == "semantic" else np.roll(vector, 1).tolist()
                cursor.execute("INSERT INTO memories_memoryembedding (memory_id, sector, embedding) VALUES (%s, %s, %s)",
                               [memory_id, sector, str(stored)])
    migrate(AFTER)
    with connection.cursor() as cursor:
        cursor.execute("SELECT memory_id, embedding::text, tokens FROM memories_memoryvector")
        rows = {memory_id: (np.array(json.loads(text)), tokens) for memory_id, text, tokens in cursor.fetchall()}
    assert set(rows) == set(ids)
    for memory_id, vector, tokens in zip(ids, vectors, token_counts(contents)):
        assert np.allclose(rows[memory_id][0], vector, atol=1e-3) and rows[memory_id][1] == tokens

    migrate(BEFORE)  # back: every sector gets the content's vector
    with connection.cursor() as cursor:
        cursor.execute("SELECT memory_id, count(*) FROM memories_memoryembedding GROUP BY memory_id")
        assert dict(cursor.fetchall()) == {memory_id: 5 for memory_id in ids}
