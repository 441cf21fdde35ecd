"""Celery tasks of the memory core: thin wrappers that call services."""
from celery import shared_task

from apps.memories.services import memory_decay


@shared_task(name="apps.memories.tasks.decay_memories")
def decay_memories() -> int:
    """Periodic (see CELERY_BEAT_SCHEDULE): bring every memory's strength up to date."""
    return memory_decay()
