"""What the gardener tests share: a fake clock (ticks at chosen moments, no sleeps), a user made idle for a while by
the ticks themselves, and links placed in the past (idle, or made long ago)."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from apps.cognition.models import ActivityState
from apps.cognition.services.gardener.activity import activity_tick
from apps.memories.models import Memory, MemoryLink


class FakeClock:
    """Moments handed to the tick and the cycle: starts at the real now (rows made by the test are older), moves only
    when told."""

    def __init__(self) -> None:
        self.now: datetime = timezone.now()

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now

    def tick(self, seconds: float = 30):
        return activity_tick(now=self.advance(seconds))


def idle_for(user, clock: FakeClock, seconds: float) -> ActivityState:
    """The user's state as if the ticks had found them idle ``seconds`` ago, with the last tick 30 s ago."""
    state, _ = ActivityState.objects.get_or_create(owner=user)
    ActivityState.objects.filter(pk=state.pk).update(activity=0.0, pending_queries=0,
                                                     low_since=clock.now - timedelta(seconds=seconds),
                                                     last_tick_at=clock.now - timedelta(seconds=30))
    return ActivityState.objects.get(pk=state.pk)


def age_link(link: MemoryLink, *, hours: float, activated: bool = True) -> MemoryLink:
    """The link last activated (or, with ``activated`` false, made and never activated) ``hours`` ago."""
    moment = timezone.now() - timedelta(hours=hours)
    if activated:
        MemoryLink.objects.filter(pk=link.pk).update(last_activated_at=moment)
    else:
        MemoryLink.objects.filter(pk=link.pk).update(last_activated_at=None, created_at=moment)
    link.refresh_from_db()
    return link


def age_node(memory: Memory, *, days: float) -> Memory:
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=days))
    memory.refresh_from_db()
    return memory
