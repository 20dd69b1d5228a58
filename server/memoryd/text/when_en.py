"""English time expressions: the rules of text/when.py for English queries."""

from __future__ import annotations

import re
from datetime import date, timedelta

from memoryd.text.calendar import (
    DAY,
    Rule,
    Span,
    ago_span,
    date_or_none,
    day_span,
    latest_month,
    midnight,
    month_span,
    nearest_year,
    opened,
    week_start,
)

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_WEEKDAYS = {
    name: number
    for number, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple of": 2,
    "a couple of": 2,
    "few": 3,
    "a few": 3,
    "several": 3,
}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?P<weekday>" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")s?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_OPEN = r"(?:(?P<side>before|after|since|until|till|by|prior to)\s+)?"


def _absolute_day(m: re.Match[str], today: date) -> Span | None:
    month = m["month"]
    month_number = _MONTHS[month.lower()] if not month.isdigit() else int(month)
    day_number = int(m["day"])
    year = int(m["year"]) if m["year"] else nearest_year(month_number, day_number, today)
    day = None if year is None else date_or_none(year, month_number, day_number)
    if day is None:
        return None
    return opened(m["side"], *day_span(day))


def _numeric_day(m: re.Match[str], today: date) -> Span | None:
    first, second, year = int(m["a"]), int(m["b"]), int(m["year"])
    if m["sep"] == ".":  # 02.01.2024: day first (European)
        day = date_or_none(year, second, first)
    else:  # 1/2/2024: month first unless the first number cannot be a month
        day = date_or_none(year, first, second) if first <= 12 else None
        day = day or date_or_none(year, second, first)
    return None if day is None else opened(m["side"], *day_span(day))


def _iso_day(m: re.Match[str], today: date) -> Span | None:
    day = date_or_none(int(m["year"]), int(m["b"]), int(m["c"]))
    return None if day is None else opened(m["side"], *day_span(day))


def _month_year(m: re.Match[str], today: date) -> Span | None:
    month = _MONTHS[m["month"].lower()]
    year = int(m["year"]) if m["year"] else latest_month(month, today)
    return opened(m["side"], *month_span(year, month))


def _year(m: re.Match[str], today: date) -> Span | None:
    year = int(m["year"])
    return opened(m["side"], midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1)))


def _season(m: re.Match[str], today: date) -> Span | None:
    first = _SEASONS[m["season"].lower()]
    year = int(m["year"]) if m["year"] else today.year
    start = month_span(year, first)[0]
    end_year, end_month = (year + 1, 3) if first == 12 else (year, first + 3)
    return opened(m["side"], start, month_span(end_year, end_month)[0])


def _week_of(m: re.Match[str], today: date) -> Span | None:
    if m["month"]:
        month = _MONTHS[m["month"].lower()]
        year = int(m["year"]) if m["year"] else latest_month(month, today)
        start, end = month_span(year, month)
    else:
        year = int(m["only_year"])
        start, end = midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1))
    if m["which"].lower() == "last":
        return end - 7 * DAY, end
    index = {"first": 0, "second": 1, "third": 2, "fourth": 3}[m["which"].lower()]
    return start + index * 7 * DAY, start + (index + 1) * 7 * DAY


_RELATIVE_DAYS = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "earlier today": 0,
    "yesterday": -1,
    "last night": -1,
    "the day before yesterday": -2,
    "tomorrow": 1,
    "the day after tomorrow": 2,
}


def _relative_day(m: re.Match[str], today: date) -> Span | None:
    offset = _RELATIVE_DAYS[re.sub(r"\s+", " ", m["rel"].lower())]
    return day_span(today + timedelta(days=offset))


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def _ago(m: re.Match[str], today: date) -> Span | None:
    fuzzy = m["count"].lower() in ("few", "a few", "several")
    return ago_span(_count(m["count"]), m["unit"].lower().rstrip("s"), fuzzy, today)


def _this_last_next(m: re.Match[str], today: date) -> Span | None:
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[
        m["which"].lower()
    ]
    unit = m["unit"].lower()
    if unit == "week":
        start = week_start(today) + timedelta(weeks=step)
        return midnight(start), midnight(start) + 7 * DAY
    if unit == "weekend":
        saturday = week_start(today) + timedelta(days=5)
        if step < 0 or (step == 0 and today < saturday and m["which"].lower() == "past"):
            saturday -= timedelta(weeks=1)
        elif step > 0 and today >= saturday:
            saturday += timedelta(weeks=1)
        return midnight(saturday), midnight(saturday) + 2 * DAY
    if unit == "month":
        index = today.year * 12 + today.month - 1 + step
        return month_span(index // 12, index % 12 + 1)
    year = today.year + step
    return midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1))


def _weekday(m: re.Match[str], today: date) -> Span | None:
    target = _WEEKDAYS[m["weekday"].lower()]
    which = (m["which"] or "").lower()
    if which == "next":
        ahead = (target - today.weekday()) % 7 or 7
        return day_span(today + timedelta(days=ahead))
    if which == "this":
        return day_span(week_start(today) + timedelta(days=target))
    back = (today.weekday() - target) % 7
    if which == "last" and back == 0:
        back = 7
    return day_span(today - timedelta(days=back))


RULES: list[tuple[str, Rule]] = [
    (
        "absolute",
        (
            re.compile(
                rf"\b{_OPEN}(?:the\s+)?(?P<day>\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH}"
                rf"(?:,?\s+{_YEAR})?\b",
                re.I,
            ),
            _absolute_day,
        ),
    ),
    (
        "absolute",
        (
            re.compile(
                rf"\b{_OPEN}{_MONTH}\s+(?:the\s+)?(?P<day>\d{{1,2}}){_ORD}(?![\d:])"
                rf"(?:,?\s+{_YEAR})?\b",
                re.I,
            ),
            _absolute_day,
        ),
    ),
    (
        "absolute",
        (
            re.compile(
                rf"\b{_OPEN}(?P<year>(?:19|20)\d\d)-(?P<b>\d{{1,2}})-(?P<c>\d{{1,2}})\b", re.I
            ),
            _iso_day,
        ),
    ),
    (
        "absolute",
        (
            re.compile(
                rf"\b{_OPEN}(?P<a>\d{{1,2}})(?P<sep>[./])(?P<b>\d{{1,2}})(?P=sep)"
                rf"(?P<year>(?:19|20)\d\d)\b",
                re.I,
            ),
            _numeric_day,
        ),
    ),
    (
        "absolute",
        (
            re.compile(
                rf"\b(?P<which>first|second|third|fourth|last)\s+week\s+of\s+"
                rf"(?:{_MONTH}(?:,?\s+{_YEAR})?|(?P<only_year>(?:19|20)\d\d))\b",
                re.I,
            ),
            _week_of,
        ),
    ),
    (
        "period",
        (
            re.compile(
                rf"\b{_OPEN}(?:(?:in|during|of|early|late|mid|throughout)\s+)?{_MONTH},?\s+"
                rf"{_YEAR}\b",
                re.I,
            ),
            _month_year,
        ),
    ),
    (
        "period",
        (
            re.compile(
                rf"\b(?:(?:in|during|throughout|early|late|mid)(?:-|\s+)|(?P<side>before|"
                rf"after|since|until|till|prior to)\s+){_MONTH}(?P<year>)\b(?!\s+\d)",
                re.I,
            ),
            _month_year,
        ),
    ),
    (
        "period",
        (
            re.compile(
                rf"\b{_OPEN}(?:the\s+)?(?P<season>spring|summer|autumn|fall|winter)(?:\s+of)?"
                rf"\s+{_YEAR}\b",
                re.I,
            ),
            _season,
        ),
    ),
    (
        "period",
        (
            re.compile(
                rf"\b(?:(?:in|during|of|throughout)\s+|(?P<side>before|after|since|until|"
                rf"till|by|prior to)\s+){_YEAR}\b(?![-./]\d)",
                re.I,
            ),
            _year,
        ),
    ),
    (
        "relative",
        (
            re.compile(
                r"\b(?P<rel>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|"
                r"earlier\s+today|this\s+(?:morning|afternoon|evening)|last\s+night|"
                r"today|tonight|yesterday|tomorrow)\b",
                re.I,
            ),
            _relative_day,
        ),
    ),
    (
        "relative",
        (
            re.compile(rf"\b{_COUNT}\s+(?P<unit>days?|weeks?|months?|years?)\s+ago\b", re.I),
            _ago,
        ),
    ),
    (
        "relative",
        (
            re.compile(
                r"\b(?P<which>last|past|previous|this|next|coming)\s+"
                r"(?P<unit>week|weekend|month|year)\b",
                re.I,
            ),
            _this_last_next,
        ),
    ),
    (
        "weekday",
        (
            re.compile(rf"\b(?:(?P<which>last|this|next|on|past)\s+)?{_WEEKDAY}\b", re.I),
            _weekday,
        ),
    ),
]
