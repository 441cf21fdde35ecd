"""The flash messages' template helpers: the Undo URL a delete's message carries (apps.core.undo_messages)."""
from django import template

from apps.core.undo_messages import undo_url_of

register = template.Library()


@register.filter
def undo_url(message) -> str:
    return undo_url_of(message.extra_tags)
