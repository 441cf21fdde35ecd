"""A binary node's file under MEDIA_ROOT goes once the node is deleted for good (the purge of its expired tombstone,
a hard forget, a plain hard delete), after the delete commits; a soft forget, a rolled-back delete and another
node's delete leave it; a file that cannot be removed is logged, not raised."""
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from apps.cognition.models import NodeProfile, Tombstone
from apps.cognition.services.curation import node_forget
from apps.cognition.services.purge import expired_purge
from apps.cognition.services.store import node_store
from apps.memories.models import Memory
from apps.memories.services import memory_delete
from tests.cognition.test_store import b64, png

pytestmark = pytest.mark.django_db

RATIONALE = "Architecture diagram of the reporting service, drawn in the design review"


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


def _image_node(user) -> tuple[Memory, Path]:
    stored = node_store(actor=user, rationale=RATIONALE, content_base64=b64(png(8, 6)), modality="image")
    path = Path(NodeProfile.objects.get(memory=stored.memory).media.path)
    assert path.is_file()
    return stored.memory, path


def test_the_purge_of_an_expired_tombstone_removes_the_file_after_commit(user, media_root,
                                                                         django_capture_on_commit_callbacks):
    memory, path = _image_node(user)
    kept, kept_path = _image_node(user)
    node_forget(actor=user, node_id=memory.pk, reason="obsolete")
    node_forget(actor=user, node_id=kept.pk, reason="obsolete")
    assert path.is_file()  # a soft forget keeps everything for the undo
    Tombstone.objects.filter(memory=memory).update(deadline=timezone.now() - timedelta(minutes=1))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert expired_purge().nodes_purged == 1
    assert path.is_file() and callbacks  # not before the commit
    for callback in callbacks:
        callback()
    assert not path.exists() and kept_path.is_file()
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_a_hard_forget_and_a_hard_delete_remove_the_file(user, media_root, django_capture_on_commit_callbacks):
    forgotten, forgotten_path = _image_node(user)
    deleted, deleted_path = _image_node(user)
    with django_capture_on_commit_callbacks(execute=True):
        node_forget(actor=user, node_id=forgotten.pk, reason="user_requested", soft_delete=False)
    assert not forgotten_path.exists() and deleted_path.is_file()
    with django_capture_on_commit_callbacks(execute=True):
        memory_delete(actor=user, memory_id=deleted.pk, soft=False)
    assert not deleted_path.exists()


def test_a_rolled_back_delete_keeps_the_file(user, media_root, django_capture_on_commit_callbacks):
    memory, path = _image_node(user)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            memory_delete(actor=user, memory_id=memory.pk, soft=False)
            raise RuntimeError("the transaction fails after the delete")
    assert not callbacks and path.is_file() and Memory.objects.filter(pk=memory.pk).exists()


def test_a_file_that_cannot_be_removed_is_logged_not_raised(user, media_root, monkeypatch, caplog,
                                                             django_capture_on_commit_callbacks):
    memory, path = _image_node(user)
    storage = NodeProfile._meta.get_field("media").storage

    def refuse(name):
        raise PermissionError(f"read-only volume: {name}")

    monkeypatch.setattr(storage, "delete", refuse)
    with caplog.at_level(logging.WARNING, logger="apps.cognition.media_files"), \
            django_capture_on_commit_callbacks(execute=True):
        node_forget(actor=user, node_id=memory.pk, reason="user_requested", soft_delete=False)
    assert not Memory.objects.filter(pk=memory.pk).exists() and path.is_file()
    assert "Could not remove the media file" in caplog.text
