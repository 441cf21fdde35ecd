"""The MCP edge's record of its clients (apps/mcp/models.py): calls counted, cubes named kept in first-use order."""
import threading

import pytest
from django.db import connection

from apps.mcp.models import McpClientSession

pytestmark = pytest.mark.django_db


def test_calls_are_counted_and_named_cubes_kept_once_in_first_use_order(user, django_assert_num_queries):
    McpClientSession.objects.record_call(key="token-1", user_id=user.pk)
    McpClientSession.objects.record_call(key="token-1", user_id=user.pk, cube_ids=["notes", "ideas", "notes"])
    with django_assert_num_queries(1):
        McpClientSession.objects.record_call(key="token-1", user_id=user.pk, cube_ids=["work", "ideas"])
    session = McpClientSession.objects.get(key="token-1")
    assert (session.tool_calls_count, session.active_cubes, session.user_id) == (3, ["notes", "ideas", "work"], user.pk)
    assert session.created_at <= session.last_activity


def test_each_client_has_its_own_record(user):
    McpClientSession.objects.record_call(key="token-1", user_id=user.pk, cube_ids=["notes"])
    McpClientSession.objects.record_call(key="token-1:session-a", user_id=user.pk)
    assert {session.key: (session.tool_calls_count, session.active_cubes)
            for session in McpClientSession.objects.all()} == {"token-1": (1, ["notes"]), "token-1:session-a": (1, [])}


@pytest.mark.django_db(transaction=True)
def test_two_first_calls_of_one_client_racing_are_both_counted_in_one_record(user, monkeypatch):
    """Both calls find no row to update; one creates it, the other's create loses and updates it instead."""
    both_found_no_row = threading.Barrier(2, timeout=30)
    get_or_create = McpClientSession.objects.get_or_create

    def after_both_updates_missed(**kwargs):
        both_found_no_row.wait()
        return get_or_create(**kwargs)

    monkeypatch.setattr(McpClientSession.objects, "get_or_create", after_both_updates_missed)
    failures = []

    def first_call(cube: str) -> None:
        try:
            McpClientSession.objects.record_call(key="token-1", user_id=user.pk, cube_ids=[cube])
        except Exception as exc:  # reported below: a lost call or an IntegrityError is the failure looked for
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=first_call, args=(cube,)) for cube in ("notes", "ideas")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    session = McpClientSession.objects.get(key="token-1")
    assert session.tool_calls_count == 2
    assert sorted(session.active_cubes) == ["ideas", "notes"]
