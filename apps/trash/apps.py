from django.apps import AppConfig


class TrashConfig(AppConfig):
    name = "apps.trash"
    label = "trash"
    verbose_name = "Trash (everything deleted that can come back)"
