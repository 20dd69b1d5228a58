"""Calendar arithmetic shared by the time-expression rules (text/when.py): days,
weeks, months and years as half-open UTC intervals."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

DAY = timedelta(days=1)

#: [start, end); None is unbounded on that side.
Span = tuple[datetime | None, datetime | None]


def midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def day_span(day: date) -> tuple[datetime, datetime]:
    return midnight(day), midnight(day) + DAY


def month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = midnight(date(year, month, 1))
    after = date(year + (month == 12), month % 12 + 1, 1)
    return start, midnight(after)


def nearest_year(month: int, day: int, today: date) -> int | None:
    """The year putting month/day nearest ``today`` (a date without a year)."""
    best: tuple[int, int] | None = None
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            distance = abs((date(year, month, day) - today).days)
        except ValueError:
            continue
        if best is None or distance < best[0]:
            best = (distance, year)
    return None if best is None else best[1]


def latest_month(month: int, today: date) -> int:
    """The year of the latest ``month`` that has begun by ``today``."""
    return today.year if month <= today.month else today.year - 1


def week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def opened(side: str | None, start: datetime, end: datetime) -> Span:
    """[start, end) opened on one side by "before"/"after"/"since"/"until"."""
    if side in ("before", "prior to"):
        return None, start
    if side == "after":
        return end, None
    if side == "since":
        return start, None
    if side in ("until", "till", "by"):
        return None, end
    return start, end


def date_or_none(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def ago_span(n: int, unit: str, fuzzy: bool, today: date) -> Span:
    """``n`` days / weeks / months / years before ``today`` (wider when ``fuzzy``)."""
    if unit == "day":
        centre = today - timedelta(days=n)
        reach = timedelta(days=2 if fuzzy else 0)
        return midnight(centre) - reach, midnight(centre) + DAY + reach
    if unit == "week":
        start = week_start(today - timedelta(weeks=n))
        return midnight(start), midnight(start) + (2 if fuzzy else 1) * 7 * DAY
    if unit == "month":
        month_index = today.year * 12 + today.month - 1 - n
        return month_span(month_index // 12, month_index % 12 + 1)
    year = today.year - n
    return midnight(date(year - fuzzy, 1, 1)), midnight(date(year + 1 + fuzzy, 1, 1))


#: A pattern and how to resolve its match against today's date (None: not a date).
Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], Span | None]]
