"""One half-precision vector per memory, with its token count, instead of five single-precision sector
vectors.

The semantic sector's vector is the plain content's, which is what MemoryVector holds; the other four
are derived from it and the token count at query time (apps/memories/sectors.py). The index is built
after the copy: one build is far faster than inserting row by row into the HNSW graph."""
import django.db.models.deletion
import pgvector.django
from django.conf import settings
from django.db import migrations, models

BATCH = 2000
# Going back, every sector gets the content's vector: `memory_reembed` (or the admin's "Re-embed") restores
# the prefixed ones.
UNCOPY = ("INSERT INTO memories_memoryembedding (memory_id, sector, embedding) "
          "SELECT v.memory_id, s.sector, v.embedding::vector FROM memories_memoryvector v "
          "CROSS JOIN unnest(ARRAY['episodic', 'semantic', 'procedural', 'emotional', 'reflective']) AS s(sector)")


def copy_semantic_vectors(apps, schema_editor):
    """Each memory's semantic vector and its content's token count (the tokenizer loads only when there are any)."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT e.memory_id, m.content FROM memories_memoryembedding e "
                       "JOIN memories_memory m ON m.id = e.memory_id WHERE e.sector = 'semantic' ORDER BY e.memory_id")
        rows = cursor.fetchall()
    if not rows:
        return
    from apps.memories.sectors import token_counts

    for start in range(0, len(rows), BATCH):
        batch = rows[start:start + BATCH]
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO memories_memoryvector (memory_id, embedding, tokens) "
                "SELECT e.memory_id, e.embedding::halfvec, t.tokens FROM memories_memoryembedding e "
                "JOIN unnest(%s::uuid[], %s::int[]) AS t(memory_id, tokens) ON t.memory_id = e.memory_id "
                "WHERE e.sector = 'semantic'",
                [[memory_id for memory_id, _ in batch], token_counts([content for _, content in batch])],
            )


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0005_alter_memory_kind'),
    ]

    operations = [
        migrations.CreateModel(
            name='MemoryVector',
            fields=[
                ('memory', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                                related_name='vector', serialize=False, to='memories.memory')),
                ('embedding', pgvector.django.HalfVectorField(dimensions=settings.ENGRAM_EMBEDDING_DIMENSIONS)),
                ('tokens', models.PositiveSmallIntegerField()),
            ],
        ),
        migrations.RunPython(copy_semantic_vectors, migrations.RunPython.noop),
        migrations.RunSQL(migrations.RunSQL.noop, UNCOPY),
        migrations.AddIndex(
            model_name='memoryvector',
            index=pgvector.django.HnswIndex(ef_construction=64, fields=['embedding'], m=16, name='memory_vector_hnsw',
                                            opclasses=['halfvec_cosine_ops']),
        ),
        migrations.DeleteModel(
            name='MemoryEmbedding',
        ),
    ]
