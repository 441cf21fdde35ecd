from django.apps import AppConfig


class CognitionConfig(AppConfig):
    name = "apps.cognition"
    label = "cognition"
    verbose_name = "Cognition (Context Graph)"

    def ready(self) -> None:
        from apps.cognition.lineage import record_changes
        from apps.cognition.media_files import remove_media_of_purged
        from apps.cognition.selectors.immune import quarantined
        from apps.memories import changes, exclusions

        changes.register(record_changes)
        changes.register(remove_media_of_purged)
        exclusions.register(quarantined)
