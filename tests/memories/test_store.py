import pytest

from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
import numpy as np

from apps.memories.embeddings import embed_texts
from apps.memories.models import Memory, MemoryVector
from apps.memories.services import memory_store, memory_store_many


def test_store_writes_node_and_its_content_vector(user):
    content = "User prefers dark mode for all applications"
    result = memory_store(actor=user, content=content, primary_sector="semantic")
    memory = result.memory
    assert result.embeddings_generated == 5  # the five sector vectors, all derived from the one stored
    stored = MemoryVector.objects.get(memory=memory).embedding
    assert np.allclose(stored, embed_texts([content])[0], atol=1e-3)  # half precision
    assert memory.cube.owner == user and memory.cube.is_personal
    assert memory.strength == 1.0
    assert set(memory.keywords) >= {"dark", "mode", "applications"}


def test_given_keywords_are_kept_and_not_extracted(user):
    memory = memory_store(actor=user, content="Dark mode everywhere", keywords=["ui", "theme"]).memory
    assert memory.keywords == ["ui", "theme"]


@pytest.mark.parametrize(("content", "importance", "expected"), [
    ("Plain note about lunch", None, 0.5),
    ("Important: the deadline is critical", None, 0.8),
    ("Plain note about lunch", 0.9, 0.7),
    ("Urgent urgent urgent urgent urgent urgent", None, 1.0),
])
def test_salience_counts_urgency_words_and_averages_importance(user, content, importance, expected):
    memory = memory_store(actor=user, content=content, importance=importance).memory
    assert memory.salience == pytest.approx(expected)


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"content": ""}, "content", "Content cannot be empty"),
    ({"content": "   \n\t "}, "content", "Content cannot be empty"),
    ({"content": "bad\x00byte"}, "content", "NUL"),
    ({"content": "x" * 20001}, "content", "limit is 20000"),
    ({"content": 42}, "content", "must be a string"),
    ({"content": "ok", "primary_sector": "dreamy"}, "primary_sector", "Invalid sector"),
    ({"content": "ok", "importance": 1.5}, "importance", "between 0 and 1"),
    ({"content": "ok", "importance": "high"}, "importance", "number"),
    ({"content": "ok", "tags": "not-a-list"}, "tags", "list of strings"),
    ({"content": "ok", "tags": ["x" * 101]}, "tags", "at most 100"),
    ({"content": "ok", "metadata": ["not", "an", "object"]}, "metadata", "object"),
    ({"content": "ok", "session_id": "s" * 201}, "session_id", "at most 200"),
])
def test_bad_input_names_the_field_and_writes_nothing(user, fields, field, message):
    fields.setdefault("primary_sector", "semantic")
    with pytest.raises(InvalidInput) as caught:
        memory_store(actor=user, **fields)
    assert caught.value.field == field
    assert message in caught.value.message
    assert Memory.objects.count() == 0


def test_store_into_a_cube_needs_write_access(user, other_user):
    cube = Cube.objects.create(id="team", name="Team", owner=other_user)
    with pytest.raises(NotFound) as not_member:
        memory_store(actor=user, content="hello", cube_id="team")
    assert "not found" in str(not_member.value)
    CubeMembership.objects.create(cube=cube, user=user, role="reader")
    with pytest.raises(PermissionDenied):
        memory_store(actor=user, content="hello", cube_id="team")
    CubeMembership.objects.filter(cube=cube, user=user).update(role="writer")
    assert memory_store(actor=user, content="hello", cube_id="team").memory.cube_id == "team"


def test_store_many_validates_everything_before_writing(user):
    with pytest.raises(InvalidInput) as caught:
        memory_store_many(actor=user, items=[{"content": "fine"}, {"content": ""}])
    assert caught.value.extra["index"] == 1
    assert "Item 1" in caught.value.message
    assert Memory.objects.count() == 0


def test_store_many_keeps_imported_timestamps(user):
    from datetime import datetime, timezone

    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    [result] = memory_store_many(actor=user, items=[{"content": "Old memory", "created_at": when}])
    assert Memory.objects.get(pk=result.memory.pk).created_at == when
