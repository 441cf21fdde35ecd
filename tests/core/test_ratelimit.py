"""The per-user rate limit itself (apps/core/ratelimit.py), on both counters: the database always, Redis
when a Redis server answers at TEST_REDIS_URL (the optional group `redis`, tests/optional.py). Time is passed in (``now``), so the
windows are stepped through exactly, with no sleeping and no wall-clock assertion."""
import json
import logging
import os
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from apps.core.exceptions import RateLimited
from apps.core.models import RateLimitCounter
from apps.core.ratelimit import rate_limit_check, rate_limit_take
from tests.optional import TEST_REDIS_URL

# A Unix time at which a minute and a 10-second window both begin.
T0 = 1_800_000_000.0
RATE_SETTINGS = ("ENGRAM_RATE_LIMIT_ENABLED", "ENGRAM_RATE_LIMIT_PER_MINUTE", "ENGRAM_RATE_LIMIT_BURST",
                 "ENGRAM_RATE_LIMIT_BURST_SECONDS", "ENGRAM_RATE_LIMIT_REDIS_PREFIX", "REDIS_URL")


@pytest.fixture(params=["database", pytest.param("redis", marks=pytest.mark.redis)])
def limits(request, settings):
    """Small limits (5 a minute, 3 in 10 seconds) on one of the two counters."""
    settings.ENGRAM_RATE_LIMIT_ENABLED = True
    settings.ENGRAM_RATE_LIMIT_PER_MINUTE = 5
    settings.ENGRAM_RATE_LIMIT_BURST = 3
    settings.ENGRAM_RATE_LIMIT_BURST_SECONDS = 10
    settings.REDIS_URL = TEST_REDIS_URL if request.param == "redis" else None
    # Test databases restart their user ids: a prefix of its own keeps every test's keys apart.
    settings.ENGRAM_RATE_LIMIT_REDIS_PREFIX = f"engram-test:{uuid.uuid4().hex}"
    return request.param


def take(user, at: float):
    return rate_limit_take(user_id=user.pk, now=at)


def figures(decision) -> tuple:
    return decision.allowed, decision.limit, decision.remaining, decision.reset_seconds, decision.retry_after


def test_the_limits_are_on_by_default_and_off_only_in_the_test_settings():
    from config.settings import base

    assert base.ENGRAM_RATE_LIMIT_ENABLED is True
    assert (base.ENGRAM_RATE_LIMIT_PER_MINUTE, base.ENGRAM_RATE_LIMIT_BURST, base.ENGRAM_RATE_LIMIT_BURST_SECONDS) == (
        100, 20, 10)
    assert base.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] == ["apps.core.api.throttling.UserRateLimitThrottle"]
    assert django_settings.ENGRAM_RATE_LIMIT_ENABLED is False


def test_the_burst_window_counts_down_then_refuses_until_it_resets(limits, user):
    # Burst 3 binds before the minute's 5: remaining and reset are the burst window's.
    assert [figures(take(user, T0 + i)) for i in range(4)] == [
        (True, 3, 2, 10, 0), (True, 3, 1, 9, 0), (True, 3, 0, 8, 0), (False, 3, 0, 7, 7)]
    assert figures(take(user, T0 + 9.5)) == (False, 3, 0, 1, 1)
    # A new burst window: room again, and now the minute (5 - 4 taken) binds.
    assert figures(take(user, T0 + 10)) == (True, 5, 1, 50, 0)


def test_the_minute_window_refuses_across_bursts_until_the_next_minute(limits, user):
    for at in (T0, T0 + 1, T0 + 2, T0 + 10, T0 + 11):
        assert take(user, at).allowed
    refused = take(user, T0 + 20)
    assert figures(refused) == (False, 5, 0, 40, 40)
    assert refused.window_seconds == 60
    assert figures(take(user, T0 + 60)) == (True, 3, 2, 10, 0)


def test_a_refused_call_spends_nothing(limits, user):
    for i in range(3):
        take(user, T0 + i)
    assert not any(take(user, T0 + 5).allowed for _ in range(5))
    # Had the five refusals counted in the minute, it would be full: it has one call left after this.
    assert figures(take(user, T0 + 10)) == (True, 5, 1, 50, 0)


def test_each_user_has_a_budget_of_their_own(limits, user, other_user):
    for _ in range(3):
        take(user, T0)
    assert not take(user, T0).allowed
    assert figures(take(other_user, T0)) == (True, 3, 2, 10, 0)


def test_rate_limit_check_raises_an_error_that_names_the_limit_and_the_wait(limits, user):
    for _ in range(3):
        assert rate_limit_check(user_id=user.pk, now=T0 + 3).allowed
    with pytest.raises(RateLimited) as refused:
        rate_limit_check(user_id=user.pk, now=T0 + 3)
    assert refused.value.code == "rate_limited"
    assert refused.value.message == ("Rate limit exceeded: at most 3 calls in 10 seconds per user (REST and MCP "
                                     "together). Retry in 7 seconds.")
    assert refused.value.extra == {"retry_after": 7, "limit": 3, "window_seconds": 10, "reset_seconds": 7,
                                   "suggestion": "Wait 7 seconds before the next call."}


def test_decision_headers_report_the_binding_window(limits, user):
    assert take(user, T0 + 4).headers() == {"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "2",
                                            "X-RateLimit-Reset": "6"}


def test_switched_off_every_call_is_allowed_and_nothing_is_counted(settings, user):
    settings.ENGRAM_RATE_LIMIT_ENABLED = False
    settings.ENGRAM_RATE_LIMIT_BURST = 1
    decisions = [take(user, T0) for _ in range(5)]
    assert all(decision.allowed and not decision.enforced for decision in decisions)
    assert decisions[0].headers() == {}
    assert not RateLimitCounter.objects.exists()


@pytest.mark.parametrize("setting", ["ENGRAM_RATE_LIMIT_PER_MINUTE", "ENGRAM_RATE_LIMIT_BURST",
                                     "ENGRAM_RATE_LIMIT_BURST_SECONDS"])
def test_a_limit_below_one_is_a_configuration_error_naming_the_setting(limits, settings, user, setting):
    setattr(settings, setting, 0)
    with pytest.raises(ImproperlyConfigured, match=f"{setting}=0 must be at least 1"):
        take(user, T0)


def test_the_database_counter_is_one_statement_and_two_rows_per_user(settings, user, django_assert_max_num_queries):
    settings.ENGRAM_RATE_LIMIT_ENABLED = True
    settings.REDIS_URL = None
    take(user, T0)
    # The upsert, between the savepoint and its release (the test runs in a transaction).
    with django_assert_max_num_queries(3):
        take(user, T0 + 1)
    take(user, T0 + 600)
    rows = {row.window_name: (row.window_start, row.count) for row in RateLimitCounter.objects.filter(user=user)}
    assert rows == {"minute": (int(T0) + 600, 1), "burst": (int(T0) + 600, 1)}


def test_without_an_answer_from_redis_calls_are_allowed_and_a_warning_logged(settings, user, caplog):
    settings.ENGRAM_RATE_LIMIT_ENABLED = True
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    caplog.set_level(logging.WARNING, logger="apps.core.ratelimit")
    decision = take(user, T0)
    assert decision.allowed and not decision.enforced
    assert "Rate limits not applied: Redis at REDIS_URL did not answer" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_concurrent_calls_never_overspend(limits, user):
    def take_and_release() -> bool:
        try:
            return take(user, T0 + 1).allowed
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        allowed = list(pool.map(lambda _: take_and_release(), range(24)))
    assert allowed.count(True) == 3


# The child uses the test database, as pytest-django does for this process, and the parent's limits.
TAKE_IN_ANOTHER_PROCESS = """
import json
import sys
import django
from django.conf import settings
settings.DATABASES["default"]["NAME"] = sys.argv[1]
for name, value in json.loads(sys.argv[2]).items():
    setattr(settings, name, value)
django.setup()
from apps.core.ratelimit import rate_limit_take
print(sum(rate_limit_take(user_id=int(sys.argv[3]), now=float(sys.argv[4])).allowed for _ in range(2)))
"""


@pytest.mark.django_db(transaction=True)
def test_another_process_spends_the_same_budget(limits, user):
    overrides = json.dumps({name: getattr(django_settings, name) for name in RATE_SETTINGS})
    child = subprocess.run(
        [sys.executable, "-c", TAKE_IN_ANOTHER_PROCESS, django_settings.DATABASES["default"]["NAME"], overrides,
         str(user.pk), str(T0)],
        cwd=django_settings.BASE_DIR, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "2"
    assert figures(take(user, T0)) == (True, 3, 0, 10, 0)
    assert not take(user, T0).allowed
