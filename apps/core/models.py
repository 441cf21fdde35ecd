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
