"""Admin pieces every app's curation uses."""
from collections.abc import Callable

from django.contrib import admin, messages

from apps.core.exceptions import DomainError


def run_for_each(modeladmin: admin.ModelAdmin, request, queryset, call: Callable[[object], object], done: str) -> None:
    """Call the service for each selected row as the curator; report how many succeeded and why others failed."""
    succeeded, failures = 0, []
    for pk in queryset.values_list("pk", flat=True):
        try:
            call(pk)
        except DomainError as error:
            failures.append(error.message)
        else:
            succeeded += 1
    noun = modeladmin.model._meta.verbose_name if succeeded == 1 else modeladmin.model._meta.verbose_name_plural
    if succeeded:
        modeladmin.message_user(request, f"{done} {succeeded} {noun}.", messages.SUCCESS)
    if failures:
        modeladmin.message_user(request, f"{len(failures)} failed: {'; '.join(sorted(set(failures)))}", messages.ERROR)
