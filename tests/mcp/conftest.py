"""Fixtures of the MCP tests.

MCP tools reach the database from worker threads, which cannot see a test's open transaction,
so every MCP test uses ``django_db(transaction=True)``.
"""
import pytest

from tests.mcp.support import seed_json_block, seed_sections, serving
# trigger_dream without blocking queues its run through kombu, whose pooled connections would keep the test
# database from being dropped: every MCP test closes them after itself.
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401


@pytest.fixture(scope="session")
def seed_schemas() -> dict[str, dict]:
    return {name: seed_json_block(section, "Input Schema") for name, section in seed_sections().items()}


@pytest.fixture(scope="session")
def seed_examples() -> dict[str, dict]:
    return {name: seed_json_block(section, "Example Request") for name, section in seed_sections().items()}


@pytest.fixture
def alice_token(user, make_token):
    return make_token(user)


@pytest.fixture
def bob_token(other_user, make_token):
    return make_token(other_user)


@pytest.fixture
def alice_memory(user, store):
    return store(user, "User prefers dark mode for all applications", tags=["settings"],
                 keywords=["preference", "dark mode", "ui"])


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    """The whole ASGI application (config.asgi), as `manage.py serve` runs it: lifespan on."""
    with serving("config.asgi:application", lifespan="on") as url:
        yield url
