from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from apps.core import checks  # noqa: F401  (registers the system checks)
        from apps.core.api import schema  # noqa: F401  (registers the REST schema extensions)
