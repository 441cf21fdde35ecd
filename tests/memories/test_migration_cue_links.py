"""Migration 0009: causal links that a cue word alone typed on store become semantic; links made by hand stay."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.memories.models import MemoryLink
from tests.cognition.curation_support import nodes

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target] if target else executor.loader.graph.leaf_nodes())


def test_cue_made_causal_links_become_semantic_and_the_count_is_reported(user, capsys):
    a, b, c = nodes(user, "The deploy failed because the cache was stale.", "The cache was stale.", "Deploy notes.")
    migrate(("memories", "0008_link_origin"))
    try:
        with connection.cursor() as cursor:  # as the old store path and a person left them
            cursor.execute(f"INSERT INTO {MemoryLink._meta.db_table} (source_id, target_id, link_type, weight, origin, "
                           "traversal_count, created_at, updated_at) VALUES (%s, %s, 'causal', 0.7, 'store', 0, now(), "
                           "now()), (%s, %s, 'causal', 0.6, 'manual', 0, now(), now())", [a.pk, b.pk, c.pk, a.pk])
        migrate(("memories", "0009_retype_cue_links"))
    finally:
        migrate(None)
    assert MemoryLink.objects.get(source=a, target=b).link_type == "semantic"
    assert MemoryLink.objects.get(source=c, target=a).link_type == "causal"
    assert "1 causal link(s) typed by a cue word alone are now semantic" in capsys.readouterr().out
