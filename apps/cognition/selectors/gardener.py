"""What the gardener page and REST show of one user's gardener: their activity, the last cycle (or the one under
way) and what it changed, and why the gardener is waiting now. Only the actor's own state is read."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.accounts.models import User
from apps.cognition.models import ActivityState, ConsolidationRun, UndoEntry
from apps.cognition.services.gardener import limits
from apps.cognition.services.gardener.activity import cycle_running, dream_since, readiness
from apps.cubes.access import cube_ids_writable
from apps.cubes.models import Cube
from apps.memories.models import Memory


@dataclass(frozen=True)
class GardenerStatus:
    state: ActivityState
    nodes: int
    running: bool
    dream_active: bool
    cycle_due: bool
    dream_due: bool
    waiting: list[str]
    # The last cycle's report (or the running or queued one's progress), and whether its undo can still be applied.
    last_cycle: dict
    undoable: bool
    # The owner's own cubes: a cycle's gardener.changed events (its progress) are published in each.
    own_cube_ids: list[str]

    @property
    def idle(self) -> bool:
        return self.state.low_since is not None and self.state.activity < limits.IDLE_ACTIVITY

    @property
    def queued_lost(self) -> bool:
        """A cycle asked for that no worker started before its lease lapsed."""
        return self.last_cycle.get("status") == "queued" and not self.running

    @property
    def windows(self) -> int:
        """About how many cycles a round over the whole graph takes: each tends a window of MAX_NODES nodes."""
        return max(1, -(-self.nodes // limits.MAX_NODES))

    @property
    def last_cycle_started(self) -> datetime | None:
        started = self.last_cycle.get("started_at")
        return parse_datetime(started) if started else None


def gardener_status(*, actor: User, now: datetime | None = None) -> GardenerStatus:
    """The actor's gardener: six queries (their state, their live nodes, their dreams, the last cycle's undo, their
    cubes)."""
    now = now or timezone.now()
    state = ActivityState.objects.filter(owner=actor).first() or ActivityState(owner=actor)
    nodes = Memory.objects.filter(owner=actor, cube_id__in=cube_ids_writable(actor=actor),
                                  deleted_at__isnull=True).count()
    dreams = ConsolidationRun.objects.filter(owner=actor)
    dream_active = dreams.filter(status__in=ConsolidationRun.ACTIVE).exists()
    latest = dreams.order_by("-updated_at").values_list("updated_at", flat=True).first()
    ready = readiness(state, now=now, dream_active=dream_active, dream_since_idle=dream_since(state, latest))
    last = state.last_cycle or {}
    undoable = bool(last.get("reversal_hash")) and UndoEntry.objects.filter(
        pk=last["reversal_hash"], owner=actor, used_at__isnull=True, expires_at__gt=timezone.now()).exists()
    return GardenerStatus(state=state, nodes=nodes, running=cycle_running(state), dream_active=dream_active,
                          cycle_due=ready.cycle_due, dream_due=ready.dream_due, waiting=ready.waiting,
                          last_cycle=last, undoable=undoable,
                          own_cube_ids=sorted(str(pk) for pk in Cube.objects.filter(owner=actor).values_list(
                              "pk", flat=True)))
