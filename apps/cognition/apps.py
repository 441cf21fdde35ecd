from django.apps import AppConfig


class CognitionConfig(AppConfig):
    name = "apps.cognition"
    label = "cognition"
    verbose_name = "Cognition (Context Graph)"

    def ready(self) -> None:
        from apps.cognition.lineage import record_changes
        from apps.cognition.media_files import remove_media_of_purged
        from apps.cognition.selectors.immune import quarantined
        from apps.cognition.services.dream.wake import wake_on_query
        from apps.cognition.services.gardener.activity import count_query
        from apps.cognition.models import SessionItem
        from apps.memories import changes, exclusions, queries, vector_tables

        changes.register(record_changes)
        changes.register(remove_media_of_purged)
        exclusions.register(quarantined)
        queries.register(wake_on_query)
        queries.register(count_query)
        # A model switch re-embeds the session items' texts too: dreams replay them against the memories' vectors.
        vector_tables.register(vector_tables.VectorTable(
            table=SessionItem._meta.db_table, key="id", column="vector", text_sql="t.text"))
