"""Context Graph's status list tools run as many queries at 50 items as at 1 (no N+1), through the SDK's client
(the tools' service calls run on this thread: tests/mcp/test_query_counts_mcp.py says why)."""
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.cognition.models import CurationTask, ScratchpadItem
from apps.cognition.services.inbox import task_open
from apps.memories.services import memory_delete, memory_store
from tests.mcp.test_query_counts_mcp import call
from tests.query_counts import flat

pytestmark = pytest.mark.django_db(transaction=True)


def test_get_system_logs(user, make_token, django_assert_max_num_queries):
    token = make_token(user)

    def forget(start, count):
        for n in range(start, start + count):
            memory = memory_store(actor=user, content=f"Outdated runbook step {n}.").memory
            memory_delete(actor=user, memory_id=memory.pk)

    forget(0, 1)
    flat(lambda: call(token, "context-graph", "get_system_logs", {"limit": 100}), forget,
         lambda data: len(data["entries"]), django_assert_max_num_queries)


def test_temporary_scratchpad_retrieve(user, make_token, django_assert_max_num_queries):
    token, session = make_token(user), str(uuid.uuid4())
    arguments = {"action": "retrieve", "session_id": session, "agent_id": "planner"}

    def note(start, count):
        ScratchpadItem.objects.bulk_create([
            ScratchpadItem(owner=user, session_id=session, agent_id="planner", content=f"Note {n}.", delta_s=0.5,
                           expires_at=timezone.now() + timedelta(hours=1)) for n in range(start, start + count)])

    note(0, 1)
    flat(lambda: call(token, "context-graph", "temporary_scratchpad", arguments), note,
         lambda data: len(data["items"]), django_assert_max_num_queries)


def test_get_memetic_status_tasks(user, make_token, django_assert_max_num_queries):
    token = make_token(user)
    hub = memory_store(actor=user, content="The billing hub that every task names.").memory

    def tasks(start, count):
        for n in range(start, start + count):
            task_open(owner=user, task_type=CurationTask.TaskType.POTENTIAL_MERGE, node_ids=[hub.pk, uuid.uuid4()],
                      reason=f"Duplicate {n}.", suggested_tool="merge_concepts")

    tasks(0, 1)
    # The inbox shows the 20 most urgent tasks (and counts them all once there are that many).
    flat(lambda: call(token, "context-graph", "get_memetic_status", {}), tasks,
         lambda data: len(data["curation_tasks"]), lambda count: django_assert_max_num_queries(count + 1),
         shown_at_fifty=20)
