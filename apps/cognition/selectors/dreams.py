"""The actor's dream runs, for the REST list and the dream runs page."""
from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from apps.accounts.models import User
from apps.cognition.models import ConsolidationRun
from apps.cognition.selectors.listings import PAGE_SIZE


def dream_list(*, actor: User) -> QuerySet[ConsolidationRun]:
    """The actor's dream runs, newest first (one query a page: a run's answer reads only its own row)."""
    return ConsolidationRun.objects.filter(owner=actor).order_by("-created_at", "-id")


def dreams_page(*, actor: User, page=1) -> Page:
    """A page of the actor's dream runs, newest first, for the dream runs page."""
    return Paginator(dream_list(actor=actor), PAGE_SIZE).get_page(page)
