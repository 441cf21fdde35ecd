"""Celery tasks of the memory core: thin wrappers that call services.

A task may run more than once (a worker killed under it: the broker delivers it again, docs/guarantees.md),
so each one is idempotent: it sets state from the data, never adds to it.
"""
import logging

from celery import shared_task

from apps.accounts.models import User
from apps.core.exceptions import DomainError
from apps.memories.models import ModelSwitch
from apps.memories.services import memory_decay, memory_reembed
from apps.memories.services.model_switch import switch_run

logger = logging.getLogger(__name__)


@shared_task(name="apps.memories.tasks.decay_memories")
def decay_memories() -> int:
    """Periodic (see CELERY_BEAT_SCHEDULE): bring every memory's strength up to date. Each run decays from the
    memory's last update point, so a second run of the same work changes nothing more."""
    return memory_decay()


@shared_task(name="apps.memories.tasks.reembed_memory")
def reembed_memory(memory_id: str, actor_id: int) -> None:
    """Recompute a memory's vectors and links as ``actor`` (after a model change, or for many memories at once).
    It replaces both in one transaction, so running it twice leaves what running it once does."""
    try:
        memory_reembed(actor=User.objects.get(pk=actor_id), memory_id=memory_id)
    except (DomainError, User.DoesNotExist) as exc:  # deleted, or no longer the actor's: nothing to do, ever
        logger.info("Not re-embedding memory %s: %s", memory_id, exc)


@shared_task(name="apps.memories.tasks.switch_embedding_model")
def switch_embedding_model(switch_id: str) -> None:
    """Move every stored vector to the switch's model (services/model_switch.py). Delivered again after a worker
    died under it, it goes on from the rows already staged."""
    run = ModelSwitch.objects.filter(pk=switch_id, active=True).first()
    if run is None:  # finished or failed already: a late redelivery
        logger.info("Model switch %s is not running: nothing to do.", switch_id)
        return
    switch_run(run)
