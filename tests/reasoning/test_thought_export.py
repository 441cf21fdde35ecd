"""The seed's Session Export Format, with integrity, and writing it under the user's own export folder."""
import json
import re

import pytest

from apps.core.exceptions import DomainError, InvalidInput, NotFound
from apps.reasoning.models import Thought
from apps.reasoning.services.thoughts import session_export, session_export_write
from tests.reasoning.thought_support import CLIENT, branched_session, think

pytestmark = pytest.mark.django_db
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
def export_root(settings, tmp_path):
    settings.ENGRAM_EXPORT_DIR = tmp_path / "exports"
    return settings.ENGRAM_EXPORT_DIR


def test_export_has_the_seed_format(user):
    steps = branched_session(user)
    ids = [str(step.thought.pk) for step in steps]
    export = session_export(actor=user, session_id=steps[0].session.pk)
    assert list(export) == ["version", "exportedAt", "session", "thoughts", "integrity"]
    assert export["version"] == "1.0" and ISO.fullmatch(export["exportedAt"])
    session = export["session"]
    assert list(session) == ["id", "title", "tags", "createdAt", "updatedAt"]
    assert session["id"] == str(steps[0].session.pk) and session["title"] == "Debugging memory leak"
    assert session["tags"] == ["project:myapp", "task:debugging"]
    one, two, branch, revision, final = export["thoughts"]
    assert one == {
        "id": ids[0], "thought": {"number": 1, "content": "First, let me understand the problem...",
                                  "timestamp": one["thought"]["timestamp"]},
        "prev": None, "next": [ids[1]], "contentHash": steps[0].thought.content_hash, "parentHash": "genesis",
    }
    assert ISO.fullmatch(one["thought"]["timestamp"])
    assert two["prev"] == ids[0] and set(two["next"]) == {ids[2], ids[3]}
    assert "branchOrigin" not in two and "revisesNode" not in two and "branchId" not in two["thought"]
    assert branch["thought"]["branchId"] == "caching-approach"
    assert branch["branchOrigin"] == ids[1] and branch["prev"] == ids[1] and branch["next"] == []
    assert revision["thought"]["isRevision"] is True and revision["thought"]["revisesThought"] == 2
    assert revision["revisesNode"] == ids[1] and revision["next"] == [ids[4]]
    assert final["prev"] == ids[3] and final["next"] == []
    assert export["integrity"] == {"algorithm": "sha256", "valid": True, "checked": 5, "broken": [],
                                   "headHash": steps[-1].thought.content_hash}
    json.dumps(export)  # plain JSON all the way down


def test_export_reports_tampering(user):
    steps = branched_session(user)
    Thought.objects.filter(pk=steps[2].thought.pk).update(thought="Edited later.")
    integrity = session_export(actor=user, session_id=steps[0].session.pk)["integrity"]
    assert integrity["valid"] is False
    assert [(b["thoughtNumber"], b["reason"]) for b in integrity["broken"]] == [(3, "content_hash_mismatch")]


def test_export_defaults_to_the_clients_latest_session_even_when_completed(user):
    think(user, 1, session_title="Older", client_key="other-client")
    finished = branched_session(user)[0].session
    think(user, 1, session_title="Someone else's client", client_key="third-client")
    assert session_export(actor=user, client_key=CLIENT)["session"]["id"] == str(finished.pk)
    assert session_export(actor=user)["session"]["title"] == "Someone else's client"


def test_export_without_any_session_is_session_not_found(user, other_user):
    think(other_user, 1)
    with pytest.raises(NotFound) as error:
        session_export(actor=user, client_key=CLIENT)
    assert error.value.code == "session_not_found"
    with pytest.raises(NotFound):
        session_export(actor=user)


def test_bob_cannot_export_alices_session(user, other_user, export_root):
    session = think(user, 1, "Alice's secret.").session
    for export in (session_export, session_export_write):
        with pytest.raises(NotFound) as error:
            export(actor=other_user, session_id=session.pk)
        assert error.value.code == "session_not_found"
    with pytest.raises(NotFound):
        session_export(actor=other_user, client_key=CLIENT)
    assert not export_root.exists()


def test_export_write_puts_a_named_json_file_in_the_users_folder(user, export_root):
    steps = branched_session(user)
    written = session_export_write(actor=user, client_key=CLIENT)
    folder = export_root / str(user.pk) / "thoughtbox"
    assert written.path.parent == folder
    assert re.fullmatch(r"thoughtbox-debugging-memory-leak-\d{8}T\d{6}\.json", written.filename)
    assert written.filename == written.path.name
    assert json.loads(written.path.read_text(encoding="utf-8")) == written.export
    assert written.export["session"]["id"] == str(steps[0].session.pk)
    again = session_export_write(actor=user, client_key=CLIENT)
    assert again.path != written.path and again.path.parent == folder
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(("destination", "relative"), [
    ("debugging", "debugging"), ("team/2026", "team/2026"), ("reviews/", "reviews"),
    ("~/.thoughtbox/exports/", ""), ("", ""),
])
def test_export_write_destination_is_a_sub_folder(user, export_root, destination, relative):
    think(user, 1)
    written = session_export_write(actor=user, destination=destination)
    expected = export_root / str(user.pk) / "thoughtbox"
    assert written.path.parent == (expected / relative if relative else expected)


@pytest.mark.parametrize("destination", [
    "/etc", "/tmp/elsewhere", "..", "../other-user", "a/../../b", "./here", "~/Documents", "~", "a//b",
    "with space", "c:\\windows", 42,
])
def test_export_write_refuses_paths_outside_the_users_folder(user, export_root, destination):
    think(user, 1)
    with pytest.raises(InvalidInput) as error:
        session_export_write(actor=user, destination=destination)
    assert error.value.field == "destination"
    assert not export_root.exists()


def test_export_write_failure_is_export_failed(user, export_root):
    think(user, 1)
    export_root.mkdir(parents=True)
    (export_root / str(user.pk)).write_text("a file where the user's folder should be")
    with pytest.raises(DomainError) as error:
        session_export_write(actor=user)
    assert error.value.code == "export_failed"
    assert "ENGRAM_EXPORT_DIR" in error.value.message

