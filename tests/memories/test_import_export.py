"""import_memories and export_memories: round trip, bad lines, and whose memories they may touch."""
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from apps.cubes.models import Cube, CubeMembership
from apps.cubes.services import cube_ensure_personal
from apps.memories.models import Memory
from apps.memories.services import memory_delete

pytestmark = pytest.mark.django_db


def run(command, *args, **options):
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(command, *args, stdout=stdout, stderr=stderr, **options)
    return stdout.getvalue(), stderr.getvalue()


def write_lines(path, rows):
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return str(path)


def exported(user, **options):
    stdout, _ = run("export_memories", user=user.username, **options)
    return [json.loads(line) for line in stdout.splitlines()]


def comparable(line):
    return {name: value for name, value in line.items() if name != "deletedAt"}


def test_export_then_import_round_trips(user, other_user, store, tmp_path):
    store(user, "Deploys go out on Tuesdays after the review", primary_sector="procedural", session_id="s1",
          agent_id="agent-7", tags=["ops"], category="process", context="team wiki", importance=0.9,
          metadata={"source": "wiki"})
    store(user, "Alice prefers green tea in the afternoon", primary_sector="emotional", keywords=["tea"])
    gone = store(user, "The old staging server was retired")
    memory_delete(actor=user, memory_id=gone.pk)

    path = tmp_path / "alice.jsonl"
    run("export_memories", user=user.username, include_deleted=True, output=str(path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["content"] for line in lines] == [
        "Deploys go out on Tuesdays after the review", "Alice prefers green tea in the afternoon",
        "The old staging server was retired",
    ]
    assert [("deletedAt" in line) for line in lines] == [False, False, True]

    stdout, stderr = run("import_memories", str(path), user=other_user.username, batch_size=2)
    assert "Imported 3 memories." in stdout
    assert "import" in stderr  # the progress bar
    again = exported(other_user, include_deleted=True)
    assert [comparable(line) for line in again] == [comparable(line) for line in lines]
    assert [("deletedAt" in line) for line in again] == [False, False, True]
    assert Memory.objects.filter(owner=other_user, deleted_at__isnull=True).count() == 2
    assert all(hasattr(m, "vector") for m in Memory.objects.filter(owner=other_user))


def test_import_reads_snake_case_and_keeps_created_at(user, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [
        {"content": "Kickoff meeting with the design team", "primary_sector": "episodic",
         "session_id": "kick", "created_at": "2023-05-08T13:56:00Z"},
        "",
        {"content": "The API freeze is on Friday", "createdAt": "2023-05-09T09:00:00+02:00", "tags": ["release"]},
    ])
    run("import_memories", path, user=user.username, no_links=True)
    memories = {m.content: m for m in Memory.objects.filter(owner=user)}
    kickoff = memories["Kickoff meeting with the design team"]
    assert (kickoff.primary_sector, kickoff.session_id) == ("episodic", "kick")
    assert kickoff.created_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert memories["The API freeze is on Friday"].created_at.isoformat() == "2023-05-09T07:00:00+00:00"
    assert not kickoff.outgoing_links.exists()


def test_a_large_import_refreshes_the_planners_statistics(user, tmp_path, monkeypatch):
    from apps.memories.management.commands import import_memories

    def rows_estimated() -> float:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories_memory'::regclass")
            return cursor.fetchone()[0]

    path = write_lines(tmp_path / "in.jsonl", [{"content": f"Note {n} about the harbour"} for n in range(3)])
    monkeypatch.setattr(import_memories, "ANALYZE_AFTER", 4)
    run("import_memories", path, user=user.username, no_links=True)
    assert rows_estimated() < 3  # fewer than ANALYZE_AFTER: left to autovacuum
    monkeypatch.setattr(import_memories, "ANALYZE_AFTER", 3)
    run("import_memories", path, user=user.username, no_links=True)
    assert rows_estimated() == 6


@pytest.mark.parametrize(("bad_line", "expected"), [
    ({"content": "   "}, "line 4, field 'content': Content cannot be empty"),
    ({"text": "no content field"}, "line 4, field 'text': unknown field"),
    ({"primarySector": "semantic"}, "line 4, field 'content': Missing required parameter"),
    ({"content": "ok", "primarySector": "dreamy"}, "line 4, field 'primarySector': Invalid sector"),
    ({"content": "ok", "createdAt": "last tuesday"}, "line 4, field 'createdAt'"),
    ({"content": "ok", "importance": 7}, "line 4, field 'metadata.importance'"),
    ("{not json", "line 4: not valid JSON"),
    ("[1, 2]", "line 4: each line must be one JSON object"),
])
def test_bad_line_stops_with_its_number_and_leaves_its_batch_unwritten(user, tmp_path, bad_line, expected):
    path = write_lines(tmp_path / "in.jsonl", [
        {"content": "first memory"}, {"content": "second memory"}, {"content": "third memory"}, bad_line,
        {"content": "fifth memory"},
    ])
    with pytest.raises(CommandError) as error:
        run("import_memories", path, user=user.username, batch_size=2)
    message = str(error.value)
    assert expected in message
    assert "2 memories were imported before it" in message
    assert "--skip-invalid" in message
    # lines 1-2 were one batch and stay; line 3 shared the bad line's batch, so it was not written.
    assert sorted(Memory.objects.filter(owner=user).values_list("content", flat=True)) == [
        "first memory", "second memory",
    ]


def test_skip_invalid_imports_the_rest_and_lists_what_it_left_out(user, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [
        {"content": "kept one"}, {"content": ""}, "{oops", {"content": "kept two", "primarySector": "nope"},
        {"content": "kept three"},
    ])
    stdout, stderr = run("import_memories", path, user=user.username, batch_size=3, skip_invalid=True)
    assert "Imported 2 memories, skipped 3 invalid lines." in stdout
    assert "skipped line 2, field 'content'" in stderr
    assert "skipped line 3: not valid JSON" in stderr
    assert "skipped line 4, field 'primarySector'" in stderr
    assert sorted(Memory.objects.filter(owner=user).values_list("content", flat=True)) == ["kept one", "kept three"]


def test_export_holds_only_what_the_user_may_read(user, other_user, store):
    store(user, "alice's private plan")
    store(other_user, "bob's private plan")
    assert [line["content"] for line in exported(other_user)] == ["bob's private plan"]
    alice_cube = cube_ensure_personal(actor=user)
    with pytest.raises(CommandError, match=f"Cube '{alice_cube.pk}' not found"):
        run("export_memories", user=other_user.username, cube=alice_cube.pk)


def test_export_of_a_shared_cube_and_without_deleted(user, other_user, store):
    shared = Cube.objects.create(id="team", name="Team", owner=user)
    CubeMembership.objects.create(cube=shared, user=other_user, role=CubeMembership.Role.READER)
    store(user, "team fact", cube_id="team")
    hidden = store(user, "team fact, deleted", cube_id="team")
    memory_delete(actor=user, memory_id=hidden.pk)
    store(user, "alice only")
    assert [line["content"] for line in exported(other_user, cube="team")] == ["team fact"]
    assert [line["content"] for line in exported(other_user)] == ["team fact"]


def test_import_only_into_cubes_the_user_may_write(user, other_user, tmp_path):
    Cube.objects.create(id="alices", name="Alice's", owner=user)
    read_only = Cube.objects.create(id="readonly", name="Read only", owner=user)
    CubeMembership.objects.create(cube=read_only, user=other_user, role=CubeMembership.Role.READER)
    path = write_lines(tmp_path / "in.jsonl", [{"content": "an intrusion"}])
    with pytest.raises(CommandError, match="Cube 'alices' not found"):
        run("import_memories", path, user=other_user.username, cube="alices")
    with pytest.raises(CommandError, match="may read cube 'readonly' but not write"):
        run("import_memories", path, user=other_user.username, cube="readonly")
    assert not Memory.objects.filter(content="an intrusion").exists()


def test_unknown_user_and_missing_file_are_clear_errors(user, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [{"content": "x"}])
    with pytest.raises(CommandError, match="No user 'nobody'"):
        run("import_memories", path, user="nobody")
    with pytest.raises(CommandError, match="No file"):
        run("import_memories", str(tmp_path / "missing.jsonl"), user=user.username)
    with pytest.raises(CommandError, match="No user 'nobody'"):
        run("export_memories", user="nobody")
