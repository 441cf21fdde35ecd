"""What tests that reach the Celery broker share."""
from __future__ import annotations


def close_broker_connections() -> None:
    """Close what the test process opened to the broker and forget it, so the next test starts afresh: kombu's
    pooled connections (the app's producer pool too: a closed one left in place makes the next send_task fail with
    "Acquire on closed pool"), and the SQLAlchemy engines kombu caches on its channel class, whose open connections
    would keep the test database from being dropped at the end of the run."""
    from kombu import pools
    from kombu.transport.sqlalchemy import Channel

    from config.celery import app

    pools.reset()
    app._pool = app.amqp._producer_pool = None
    for engine, _ in Channel._engines.values():
        engine.dispose()
    Channel._engines.clear()
