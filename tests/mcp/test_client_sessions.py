"""The MCP edge's record of its clients (apps/mcp/models.py): calls counted, cubes named kept in first-use order."""
import pytest

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
