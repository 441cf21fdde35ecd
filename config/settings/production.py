"""Settings for a deployment: everything secret or host-specific comes from the environment."""
from config.env import env_bool, env_int, env_required

from .base import *  # noqa: F401,F403

DEBUG = False
SECRET_KEY = env_required(
    "DJANGO_SECRET_KEY", "generate one with `python -c 'import secrets; print(secrets.token_urlsafe(50))'`"
)

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
# Load balancers and container health checks probe over plain HTTP from inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
