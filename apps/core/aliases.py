"""An edge's names for a service's arguments. Services take and report their own keyword argument names; each
edge declares one ``Aliases`` table next to its input models, serializers or forms, and uses it both to call the
service and to report the service's errors under the name its caller used."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from apps.core.exceptions import DomainError


class Aliases:
    """``Aliases({"primary_sector": "primarySector", ...})``: the service's name -> the caller's. A name left out
    is the same on both sides. Service names may be paths (``date_start`` -> ``dateRange.start``); several
    service names may stand for one caller name (an error about a pair shown at one input)."""

    def __init__(self, names: Mapping[str, str]):
        self.to_caller = dict(names)
        self.to_service: dict[str, str] = {}
        for service, caller in names.items():
            self.to_service.setdefault(caller, service)
        # Longest first, so that a path is renamed whole before the name it starts with.
        quoted = sorted(names, key=len, reverse=True)
        self._quoted = re.compile(r"(?<![\w.])(%s)(?!\w)" % "|".join(map(re.escape, quoted))) if quoted else None

    def arguments(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The caller's arguments under the service's keyword names."""
        return {self.to_service.get(name, name): value for name, value in data.items()}

    def caller_name(self, name: str | None) -> str | None:
        """The caller's name for a service's field, also within a path (``cube_ids[2]``)."""
        return self.caller_message(name) if name is not None else None

    def caller_message(self, message: str, *, field: str | None = None,
                       spell: Callable[[str], str] | None = None) -> str:
        """The message with each service name it quotes as the caller's name (``spell`` turns that name into
        what the caller reads, a form's label). A plain word is a name where it is the message's first word or
        the error's ``field`` ("text has at most ...", "Each of tags ..."); elsewhere it is prose ("the limit
        is ...")."""
        if self._quoted is None:
            return message
        spell = spell or (lambda name: name)

        def rename(match: re.Match) -> str:
            name = match.group(1)
            quoted = match.start() == 0 or name == field or "_" in name or "." in name
            return spell(self.to_caller[name]) if quoted else name

        return self._quoted.sub(rename, message)

    def report(self, error: DomainError) -> None:
        """Rename the error's field, and the names its message quotes, to the caller's."""
        field = error.extra.get("field")
        if field is not None:
            error.extra["field"] = self.caller_name(field)
        error.message = self.caller_message(error.message, field=field)
        error.args = (error.message, *error.args[1:])

    @contextmanager
    def reported(self) -> Iterator[None]:
        """A service's DomainError raised inside is reported in the caller's names."""
        try:
            yield
        except DomainError as exc:
            self.report(exc)
            raise
