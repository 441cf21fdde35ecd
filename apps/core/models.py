from django.conf import settings
from django.db import models


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class RateLimitCounter(models.Model):
    """Calls a user made in the current fixed window of one rate limit (apps/core/ratelimit.py, which
    writes it with one upsert). A new window overwrites the row, so there are at most two per user."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    window_name = models.CharField(max_length=16)
    window_start = models.BigIntegerField(help_text="Unix time at which the counted window began.")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "window_name"], name="core_ratelimit_user_window")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.window_name}@{self.window_start}: {self.count}"


class WorkerHeartbeat(models.Model):
    """When each Celery worker last said it was alive: written every ENGRAM_WORKER_HEARTBEAT_SECONDS by a
    worker bootstep (config/celery.py), read by /healthz. The SQL broker has no fanout exchange, so Celery's
    own heartbeat events and `inspect ping` cannot reach a web process; a row in the database always can."""

    hostname = models.CharField(max_length=255, primary_key=True)
    pid = models.PositiveIntegerField()
    last_seen = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.hostname} (pid {self.pid}) at {self.last_seen:%Y-%m-%d %H:%M:%S}"
