"""The SQL broker (apps/core/broker.py) in process: an ack deletes the message, a requeue makes the same row
visible again, and a message taken but never acked comes back after the visibility timeout, to another consumer.
tests/memories/test_faults_worker.py kills real workers on it."""
import pytest
from django.conf import settings
from django.db import connection
from kombu import Connection

from apps.core.broker import Transport
from tests.broker_support import close_broker_connections

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="the SQL broker only; REDIS_URL is set"),
]

QUEUE = "faults-broker-test"


@pytest.fixture
def broker():
    connections = []

    def open_connection(visibility_timeout: float = 3600) -> Connection:
        opened = Connection(settings.CELERY_BROKER_URL, transport_options={"visibility_timeout": visibility_timeout})
        connections.append(opened)
        return opened

    yield open_connection
    for opened in connections:
        opened.release()
    if "engram_broker_message" not in connection.introspection.table_names():
        return  # no message was ever sent in this database
    with connection.cursor() as cursor:  # the broker's tables are not Django's: the flush leaves them
        cursor.execute("DELETE FROM engram_broker_message WHERE queue_id IN "
                       "(SELECT id FROM engram_broker_queue WHERE name = %s)", [QUEUE])
    close_broker_connections()


def rows() -> list[bool]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT m.visible FROM engram_broker_message m JOIN engram_broker_queue q ON q.id = m.queue_id "
                       "WHERE q.name = %s ORDER BY m.id", [QUEUE])
        return [row[0] for row in cursor.fetchall()]


def test_the_sql_urls_use_engrams_transport(broker):
    assert isinstance(broker().transport, Transport)


def test_an_ack_deletes_the_message(broker):
    queue = broker().SimpleQueue(QUEUE)
    queue.put({"n": 1})
    message = queue.get(timeout=10)
    assert rows() == [False]  # taken, held until acked
    message.ack()
    assert rows() == []


def test_a_requeue_makes_the_same_row_visible_again(broker):
    queue = broker().SimpleQueue(QUEUE)
    queue.put({"n": 2})
    queue.get(timeout=10).requeue()
    assert rows() == [True]
    again = queue.get(timeout=10)
    assert again.payload == {"n": 2}
    again.ack()
    assert rows() == []


def test_a_message_never_acked_comes_back_after_the_visibility_timeout(broker):
    first = broker(visibility_timeout=1).SimpleQueue(QUEUE)
    first.put({"n": 3})
    first.get(timeout=10)  # taken and never acked: its consumer is gone as far as the broker can tell
    with connection.cursor() as cursor:
        # Claimed a minute ago, on the database's clock: past the timeout without waiting for it.
        cursor.execute("UPDATE engram_broker_message SET timestamp = timezone('UTC', now()) - interval '1 minute'")
    second = broker(visibility_timeout=1).SimpleQueue(QUEUE)
    redelivered = second.get(timeout=10)
    assert redelivered.payload == {"n": 3}
    redelivered.ack()
    assert rows() == []


def test_a_message_within_its_visibility_timeout_is_not_delivered_twice(broker):
    first = broker().SimpleQueue(QUEUE)
    first.put({"n": 4})
    first.get(timeout=10)
    second = broker().SimpleQueue(QUEUE)
    with pytest.raises(second.Empty):
        second.get(timeout=2)
    assert rows() == [False]
