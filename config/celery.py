import logging
import os

from celery import Celery, bootsteps
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

logger = logging.getLogger(__name__)

# kombu's SQLAlchemy transport never redelivers a message whose worker died; Engram's does (apps/core/broker.py).
# Every sqla+... URL of every process (web, worker, commands, /healthz) gets it, as Django imports this module.
TRANSPORT_ALIASES["sqla"] = TRANSPORT_ALIASES["sqlalchemy"] = "apps.core.broker:Transport"

app = Celery("engram")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class Heartbeat(bootsteps.StartStopStep):
    """Writes this worker's heartbeat row (apps.core.models.WorkerHeartbeat) when it starts and then on the
    worker's timer, and deletes it on a clean stop, so that /healthz can tell that a worker is alive."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self.timer_entry = None

    def start(self, worker):
        from django.conf import settings

        self._beat(worker.hostname)
        self.timer_entry = worker.timer.call_repeatedly(settings.ENGRAM_WORKER_HEARTBEAT_SECONDS, self._beat,
                                                        (worker.hostname,), priority=10)

    def stop(self, worker):
        if self.timer_entry is not None:
            self.timer_entry.cancel()
        self._database(worker.hostname, "worker_gone")

    terminate = stop  # a cold shutdown (a second SIGTERM, SIGQUIT) is as clean for the heartbeat

    def _beat(self, hostname: str) -> None:
        self._database(hostname, "worker_heartbeat")

    @staticmethod
    def _database(hostname: str, action: str) -> None:
        from django.db import connection

        from apps.core import health

        # The timer's thread has a connection of its own: give it back after each beat. A database that
        # does not answer must not stop the worker; /healthz reports the missed beats instead.
        try:
            getattr(health, action)(hostname)
        except Exception:
            logger.warning("Could not record the worker's heartbeat (%s)", action, exc_info=True)
        finally:
            connection.close()


app.steps["worker"].add(Heartbeat)
