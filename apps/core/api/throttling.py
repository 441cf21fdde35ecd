"""The platform rate limit (apps/core/ratelimit.py) on every API view: REST_FRAMEWORK's default throttle."""
from rest_framework.throttling import BaseThrottle


class UserRateLimitThrottle(BaseThrottle):
    """Counts each call of an authenticated user against the budget REST and MCP share. Anonymous
    requests are not counted: authentication refuses them anyway, or the view is public.

    Every answer carries X-RateLimit-Limit, -Remaining and -Reset (the view's ``headers``, which DRF
    puts on whatever response it finalizes, errors included). A refusal raises ``RateLimited``, which
    the API's exception handler turns into 429 with the usual envelope; Retry-After goes with it."""

    def allow_request(self, request, view) -> bool:
        from apps.core.ratelimit import rate_limit_take  # imports models: not at settings-loading time

        if not request.user or not request.user.is_authenticated:
            return True
        decision = rate_limit_take(user_id=request.user.pk)
        view.headers.update(decision.headers())
        if not decision.allowed:
            view.headers["Retry-After"] = str(decision.retry_after)
            raise decision.error()
        return True
