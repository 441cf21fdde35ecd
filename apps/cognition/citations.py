"""Citation tags: how inject_context's text names the node each passage came from, `[node_<12 hex>]` (the first
hex digits of the node's id, dashes left out), and how hydrate_citation reads them back."""
from __future__ import annotations

import re
import uuid

from apps.cognition.limits import CITATION_HEX

_TAG = re.compile(r"\[?node_([0-9a-fA-F]{%d})\]?" % CITATION_HEX)


def citation_tag(node_id) -> str:
    return f"[node_{uuid.UUID(str(node_id)).hex[:CITATION_HEX]}]"


def citation_prefix(tag: str) -> str | None:
    """The hex prefix a tag names ("[node_0123456789ab]", or without brackets), or None if it is no tag."""
    found = _TAG.fullmatch(tag.strip())
    return found.group(1).lower() if found else None


def id_range(prefix: str) -> tuple[uuid.UUID, uuid.UUID]:
    """The lowest and highest node ids that start with ``prefix``: a range the primary key's index answers."""
    rest = 32 - len(prefix)
    return uuid.UUID(prefix + "0" * rest), uuid.UUID(prefix + "f" * rest)
