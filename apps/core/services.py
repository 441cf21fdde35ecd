"""Writes that belong to no single app: bootstrapping a fresh installation."""
from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction

from apps.core.exceptions import Conflict

ADMIN_USERNAME = "admin"


@transaction.atomic
def admin_ensure() -> tuple[AbstractUser, str | None]:
    """Make sure the installation has a superuser, so that a fresh `make run` can be logged into.

    Returns ``(user, password)``: a new ``admin`` with a random password, shown to nobody but the
    caller, or the first existing superuser and ``None``.
    """
    user_model = get_user_model()
    existing = user_model.objects.filter(is_superuser=True).order_by("pk").first()
    if existing is not None:
        return existing, None
    if user_model.objects.filter(username=ADMIN_USERNAME).exists():
        raise Conflict(
            f"There is no superuser and the name {ADMIN_USERNAME!r} is taken by an ordinary account: "
            "create one with `python manage.py createsuperuser`.",
            code="admin_name_taken",
        )
    password = secrets.token_urlsafe(16)
    user = user_model.objects.create_superuser(username=ADMIN_USERNAME, email="", password=password)
    return user, password
