"""How a flash message carries an Undo button (apps.core.pages.offer_undo writes it, base.html draws it): its extra
tags are the tag, a space, then the URL the button posts to."""
from __future__ import annotations

UNDO_TAG = "undo"


def undo_tags(undo_url: str) -> str:
    return f"{UNDO_TAG} {undo_url}"


def undo_url_of(extra_tags: str | None) -> str:
    """The Undo URL of a message's extra tags, or "" (a message without one, or a URL that is not a local path)."""
    tag, _, url = (extra_tags or "").partition(" ")
    return url if tag == UNDO_TAG and url.startswith("/") and not url.startswith("//") else ""
