"""kombu's SQLAlchemy transport (Engram's broker without Redis), made to redeliver what a dead worker took.

kombu 5.7's transport marks a message ``visible = false`` when a worker takes it and never looks at it again:
an ack only forgets the delivery tag in the worker's memory, and the unacked messages are put back only by the
worker itself at a clean shutdown. A worker killed with SIGKILL (or the OOM killer, or a lost machine) loses
them for good, late ack or not; and every delivered message stays in the table forever.

This transport keeps kombu's table and its polling, and adds what Redis's transport has:
- an ack (or a reject) deletes the message's row;
- a message taken but neither acked nor rejected within ``visibility_timeout`` seconds (transport option,
  ENGRAM_BROKER_VISIBILITY_TIMEOUT) is visible again, so the next poll of any worker redelivers it;
- a message put back (reject with requeue, a worker's clean shutdown) becomes visible in place, in one UPDATE,
  rather than as a copy next to a row that would come back after the timeout;
- its tables are its own (engram_broker_queue, engram_broker_message): kombu's kombu_message holds every
  message ever delivered, invisible, and reading it with a visibility timeout would run them all again.
A task still running after the timeout is delivered a second time, as with Redis: Engram's tasks are
idempotent, and the timeout (an hour by default) is far longer than any of them.

config/celery.py makes the ``sqla`` and ``sqlalchemy`` URL schemes use it.
"""
from __future__ import annotations

from json import loads
from queue import Empty

from kombu.transport import sqlalchemy as kombu_sqlalchemy
from kombu.utils.encoding import bytes_to_str
from sqlalchemy import create_engine, func, text

DEFAULT_VISIBILITY_TIMEOUT = 3600
# Transport options that are not create_engine() arguments (kombu's own list, and ours).
NOT_ENGINE_OPTIONS = {"queue_tablename", "message_tablename", "callback", "errback", "max_retries", "interval_start",
                      "interval_step", "interval_max", "retry_errors", "visibility_timeout"}


class Channel(kombu_sqlalchemy.Channel):
    def __init__(self, connection, **kwargs):
        self.visibility_timeout = float(connection.client.transport_options.get("visibility_timeout",
                                                                                DEFAULT_VISIBILITY_TIMEOUT))
        self._row_ids: dict[str, int] = {}  # delivery tag -> message row, for messages this channel took
        super().__init__(connection, **kwargs)

    def _configure_entity_tablenames(self, opts):
        self.queue_tablename = opts.get("queue_tablename", "engram_broker_queue")
        self.message_tablename = opts.get("message_tablename", "engram_broker_message")
        self.queue_cls and self.message_cls  # kombu's way of declaring the models before create_engine

    def _engine_from_config(self):
        conninfo = self.connection.client
        options = {key: value for key, value in conninfo.transport_options.items() if key not in NOT_ENGINE_OPTIONS}
        return create_engine(conninfo.hostname, **options)

    def _get(self, queue):
        queue_row = self._get_or_create(queue)
        message_cls = self.message_cls
        try:
            self._make_expired_visible(queue_row.id)
            # SKIP LOCKED: two workers polling at once take different messages instead of waiting on each other.
            message = (self.session.query(message_cls).with_for_update(skip_locked=True)
                       .filter(message_cls.queue_id == queue_row.id, message_cls.visible != False)  # noqa: E712
                       .order_by(message_cls.sent_at, message_cls.id).limit(1).first())
            if message is None:
                raise Empty()
            message.visible = False
            # The claim's time, on the database's clock (every worker shares it), for the visibility timeout.
            message.sent_at = func.timezone("UTC", func.now())
            payload = loads(bytes_to_str(message.payload))
            self._row_ids[payload["properties"]["delivery_tag"]] = message.id
            return payload
        finally:
            self.session.commit()

    @property
    def _table(self) -> str:
        # The mapped class's table: kombu declares one Message class per process, named by the first channel.
        return self.message_cls.__table__.name

    def _make_expired_visible(self, queue_id: int) -> None:
        self.session.execute(
            text(f"UPDATE {self._table} SET visible = true, version = version + 1 "
                 "WHERE queue_id = :queue AND visible = false "
                 "AND timestamp < timezone('UTC', now()) - make_interval(secs => :timeout)"),
            {"queue": queue_id, "timeout": self.visibility_timeout},
        )

    def basic_ack(self, delivery_tag, multiple=False):
        super().basic_ack(delivery_tag, multiple=multiple)
        self._delete(delivery_tag)

    def basic_reject(self, delivery_tag, requeue=False):
        # With requeue, the QoS calls _restore (below), which makes the row visible and forgets it.
        super().basic_reject(delivery_tag, requeue=requeue)
        self._delete(delivery_tag)

    def _restore(self, message):
        row_id = self._row_ids.pop(message.delivery_tag, None)
        if row_id is None:  # not taken by this channel: kombu's own way, a copy
            return super()._restore(message)
        self._run(f"UPDATE {self._table} SET visible = true, version = version + 1 WHERE id = :id",
                  row_id)

    def _delete(self, delivery_tag) -> None:
        row_id = self._row_ids.pop(delivery_tag, None)
        if row_id is not None:
            self._run(f"DELETE FROM {self._table} WHERE id = :id", row_id)

    def _run(self, statement: str, row_id: int) -> None:
        try:
            self.session.execute(text(statement), {"id": row_id})
            self.session.commit()
        except Exception:
            self.session.rollback()
            raise


class Transport(kombu_sqlalchemy.Transport):
    Channel = Channel
