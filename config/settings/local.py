"""Settings for running Engram on a workstation (the `make run` default)."""
from config.env import env_bool, env_str

from .base import *  # noqa: F401,F403
from .base import VAR_DIR

DEBUG = env_bool("DJANGO_DEBUG", False)


def _local_secret_key() -> str:
    # A workstation keeps one random key in var/ so that sessions survive restarts.
    import secrets

    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env_str("DJANGO_SECRET_KEY") or _local_secret_key()

# Notebook cells run code with node: fine on your own machine, off in production unless enabled there.
ENGRAM_NOTEBOOK_EXECUTION = env_bool("ENGRAM_NOTEBOOK_EXECUTION", True)
