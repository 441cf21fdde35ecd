from django.apps import AppConfig


class CognitionConfig(AppConfig):
    name = "apps.cognition"
    label = "cognition"
    verbose_name = "Cognition (Context Graph)"

    def ready(self) -> None:
        from apps.cognition.lineage import record_changes
        from apps.cognition.media_files import remove_media_of_purged
        from apps.cognition.services.dream.wake import wake_on_query
        from apps.memories import changes, queries

        changes.register(record_changes)
        changes.register(remove_media_of_purged)
        queries.register(wake_on_query)
