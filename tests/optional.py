"""Optional groups: tests that need what a fresh machine may lack. A test marked with a group's marker runs when
the group's probe finds the resource, and is skipped with the probe's reason otherwise (``make test`` prints it
in its summary). Each probe is quick, runs at most once a session, and only when a collected test needs it.

- ``redis``: a Redis server at TEST_REDIS_URL (the one place the tests take a Redis URL from; `make test-redis`
  reads the same variable).
- ``network``: the npm registry (npm install of real packages).
- ``netns``: network namespaces (the notebook sandbox's no-network guarantee can only be shown where one can be
  made). Probed with unshare itself, not with the sandbox's own probe, so that a broken probe fails those tests.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or "redis://127.0.0.1:6379/15"


@functools.cache
def redis_missing() -> str | None:
    import redis

    try:
        if redis.Redis.from_url(TEST_REDIS_URL, socket_connect_timeout=1, socket_timeout=2).ping():
            return None
    except redis.RedisError:
        pass
    return f"optional group redis: no Redis server answers at TEST_REDIS_URL={TEST_REDIS_URL}"


@functools.cache
def npm_registry_missing() -> str | None:
    if shutil.which("npm") is None:
        return "optional group network: npm is not installed"
    try:
        # npm's own configuration (registry, proxy) decides, as it does for the installs under test.
        subprocess.run(["npm", "ping", "--fetch-retries=0", "--fetch-timeout=5000", "--loglevel=error"],
                       capture_output=True, timeout=20, check=True, stdin=subprocess.DEVNULL)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return "optional group network: the npm registry does not answer (npm ping)"
    return None


@functools.cache
def netns_missing() -> str | None:
    if shutil.which("unshare") is not None:
        for command in (["unshare", "--net", "--", "true"], ["unshare", "--map-root-user", "--net", "--", "true"]):
            if subprocess.run(command, capture_output=True, timeout=10, stdin=subprocess.DEVNULL).returncode == 0:
                return None
    return "optional group netns: this host cannot create a network namespace (unshare --net)"


PROBES = {"redis": redis_missing, "network": npm_registry_missing, "netns": netns_missing}


def skip_missing(items) -> None:
    """Mark each collected test of a group whose resource is missing as skipped, with the reason."""
    import pytest

    for item in items:
        for group, probe in PROBES.items():
            if item.get_closest_marker(group) is not None and (reason := probe()) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
