"""Typed readers for settings that come from environment variables."""
import os

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_required(name: str, hint: str) -> str:
    value = env_str(name)
    if value is None:
        raise ImproperlyConfigured(f"{name} must be set: {hint}")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    value = env_str(name)
    if value is None:
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean: use true or false")


def env_list(name: str, default: list[str]) -> list[str]:
    value = env_str(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_int(name: str, default: int) -> int:
    value = env_str(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from exc


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = (env_str(name) or default).lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={os.environ.get(name)!r} is not one of: {', '.join(choices)}")
    return value
