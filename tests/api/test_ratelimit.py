"""The platform rate limit on the REST API: headers on every answer, 429 in the envelope on refusal, one
budget per user across views (and with MCP: tests/mcp/test_ratelimit.py)."""
import pytest

from apps.core.ratelimit import rate_limit_take
from apps.memories.models import Memory
from tests.api.envelope import assert_error

DAY = 86400
pytestmark = pytest.mark.django_db

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@pytest.fixture
def limits(settings):
    """Two calls a day, on the database counter. Real time passes in these tests (the first MCP call loads the
    embedding model): a day-long window makes a boundary between two calls all but impossible."""
    settings.ENGRAM_RATE_LIMIT_ENABLED = True
    settings.ENGRAM_RATE_LIMIT_PER_MINUTE = 100
    settings.ENGRAM_RATE_LIMIT_BURST = 2
    settings.ENGRAM_RATE_LIMIT_BURST_SECONDS = DAY
    settings.REDIS_URL = None


def test_answers_carry_the_limit_headers(limits, api):
    answers = [api.get("/api/v1/cubes/"), api.get("/api/v1/memories/")]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert [answer["X-RateLimit-Limit"] for answer in answers] == ["2", "2"]
    assert [answer["X-RateLimit-Remaining"] for answer in answers] == ["1", "0"]
    assert all(1 <= int(answer["X-RateLimit-Reset"]) <= DAY for answer in answers)
    assert "Retry-After" not in answers[0]


def test_beyond_the_limit_the_answer_is_429_with_retry_after_in_the_envelope(limits, api):
    api.get("/api/v1/cubes/")
    api.get("/api/v1/cubes/")
    refused = api.post("/api/v1/memories/", {"content": "Not stored: the budget is spent"}, format="json")
    error = assert_error(refused, 429, code="rate_limited")
    retry_after = error["details"]["retry_after"]
    assert 1 <= retry_after <= DAY
    assert refused["Retry-After"] == str(retry_after)
    assert refused["X-RateLimit-Remaining"] == "0"
    assert refused["X-RateLimit-Reset"] == str(retry_after)
    assert error["message"].startswith("Rate limit exceeded: at most 2 calls in 86400 seconds per user")
    assert f"Retry in {retry_after} second" in error["message"]
    assert error["details"]["limit"] == 2
    assert not Memory.objects.exists()


def test_errors_within_the_budget_carry_the_headers_too(limits, api):
    answer = api.get("/api/v1/cubes/no-such-cube/")
    assert_error(answer, 404)
    assert answer["X-RateLimit-Remaining"] == "1"


def test_the_budget_is_per_user(limits, api, other_user, api_client_for):
    api.get("/api/v1/cubes/")
    api.get("/api/v1/cubes/")
    assert api.get("/api/v1/cubes/").status_code == 429
    answer = api_client_for(other_user).get("/api/v1/cubes/")
    assert answer.status_code == 200
    assert answer["X-RateLimit-Remaining"] == "1"


def test_calls_outside_rest_spend_the_same_budget(limits, api, user):
    rate_limit_take(user_id=user.pk)
    rate_limit_take(user_id=user.pk)
    assert_error(api.get("/api/v1/cubes/"), 429, code="rate_limited")


def test_anonymous_requests_are_refused_by_authentication_and_not_counted(limits, anonymous):
    answer = anonymous.get("/api/v1/cubes/")
    assert_error(answer, 401, code="not_authenticated")
    assert not any(header in answer for header in RATE_HEADERS)


def test_with_limits_off_there_are_no_headers(settings, api):
    settings.ENGRAM_RATE_LIMIT_ENABLED = False
    answer = api.get("/api/v1/cubes/")
    assert answer.status_code == 200
    assert not any(header in answer for header in RATE_HEADERS)
