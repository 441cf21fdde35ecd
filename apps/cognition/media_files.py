"""The files that binary nodes keep under MEDIA_ROOT (NodeProfile.media, written by store_memory): removed once
their node is deleted for good (a hard forget, memory_delete(soft=False), the purge of an expired tombstone).

A recorder of memory changes (registered in apps.py, like the lineage's): a purge is reported inside its transaction,
before the row and its profile go, so the file names are read then and the files removed only after the commit. A
rolled-back delete keeps its file; a file that cannot be removed is logged, never raised, since the delete it
follows has committed already."""
from __future__ import annotations

import logging

from django.db import transaction

from apps.cognition.models import NodeProfile
from apps.memories.changes import Action, Change

logger = logging.getLogger(__name__)


def remove_media_of_purged(changes: list[Change]) -> None:
    purged = [change.memory_id for change in changes if change.action == Action.PURGED]
    if not purged:
        return
    names = list(NodeProfile.objects.filter(memory_id__in=purged).exclude(media="").values_list("media", flat=True))
    if names:
        transaction.on_commit(lambda: _remove(names))


def _remove(names: list[str]) -> None:
    storage = NodeProfile._meta.get_field("media").storage
    for name in names:
        try:
            storage.delete(name)
        except Exception:  # any storage's failure: the node is gone either way, so the file is only logged
            logger.warning("Could not remove the media file %s of a node deleted for good", name, exc_info=True)
