"""Dates a question names ("on 16 November, 2023", "in May 2022", "in 2023", "in June"), as the windows of time a
memory's created_at falls in when it is what the question asks about (docs/retrieval.md, "Boosts").

Only absolute dates: "last week" or "yesterday" are relative to when something was said, which the question does
not know. English month names only; a month named without a day or year must be capitalised and not open the
question ("May I ..." and "may" are not months)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
_MONTH = "(" + "|".join(MONTHS) + ")"
_ORDINAL = r"(?:st|nd|rd|th)?"
DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}){_ORDINAL}\s+{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)
MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}){_ORDINAL},?\s*(\d{{4}})\b", re.IGNORECASE)
MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)
MONTH_ALONE = re.compile(r"(?<=\S)\s+(" + "|".join(month.capitalize() for month in MONTHS) + r")\b")
YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
# A named day also matches the day before and after it: times are stored in UTC, and the day was someone's local one.
DAY_SLACK = timedelta(days=1)


@dataclass(frozen=True)
class DateWindows:
    starts: list[datetime]
    ends: list[datetime]  # exclusive
    months: list[int]  # months named without a year, any year's

    def __bool__(self) -> bool:
        return bool(self.starts or self.months)


def _month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1, tzinfo=timezone.utc)


def _next_month(year: int, month: int) -> datetime:
    return _month_start(year + month // 12, month % 12 + 1)


def date_windows(text: str) -> DateWindows:
    """The windows of the dates `text` names: a day (with DAY_SLACK on each side), a month of a year, a year, and the
    months named alone (any year's). Each form is read once: "May 3, 2023" is a day, not also May 2023 and 2023."""
    windows: list[tuple[datetime, datetime]] = []
    rest = text
    for pattern, order in ((DAY_MONTH_YEAR, "dmy"), (MONTH_DAY_YEAR, "mdy")):
        for match in pattern.finditer(rest):
            values = dict(zip(order, match.groups()))
            year, month = int(values["y"]), MONTHS.index(values["m"].lower()) + 1
            try:
                day = datetime(year, month, int(values["d"]), tzinfo=timezone.utc)
            except ValueError:  # "31 February": the month is still named
                windows.append((_month_start(year, month), _next_month(year, month)))
                continue
            windows.append((day - DAY_SLACK, day + timedelta(days=1) + DAY_SLACK))
        rest = pattern.sub(" ", rest)
    for match in MONTH_YEAR.finditer(rest):
        year, month = int(match.group(2)), MONTHS.index(match.group(1).lower()) + 1
        windows.append((_month_start(year, month), _next_month(year, month)))
    rest = MONTH_YEAR.sub(" ", rest)
    months = sorted({MONTHS.index(match.group(1).lower()) + 1 for match in MONTH_ALONE.finditer(rest)})
    rest = MONTH_ALONE.sub(" ", rest)
    for match in YEAR.finditer(rest):
        year = int(match.group(1))
        windows.append((datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc)))
    return DateWindows(starts=[start for start, _ in windows], ends=[end for _, end in windows], months=months)
