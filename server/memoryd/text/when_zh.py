"""Chinese time expressions: the rules of text/when.py for Chinese queries."""

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

_CN_DIGITS = {"零": 0, "\u3007": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS.update({"六": 6, "七": 7, "八": 8, "九": 9})
_CN_NUM_CHARS = "0-9零\u3007一二两三四五六七八九十"
_CN_NUM = rf"[{_CN_NUM_CHARS}]{{1,3}}"
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}


def _cn_number(text: str) -> int | None:
    """Arabic or Chinese numerals up to 99 (十一, 二十三, 三十)."""
    if text.isascii() and text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, units = text.partition("十")
        high = 1 if not tens else _CN_DIGITS.get(tens)
        low = 0 if not units else _CN_DIGITS.get(units)
        return None if high is None or low is None else high * 10 + low
    if len(text) == 1 and text in _CN_DIGITS:
        return _CN_DIGITS[text]
    return None


def _cn_full_date(m: re.Match[str], today: date) -> Span | None:
    month, day = _cn_number(m["month"]), _cn_number(m["day"])
    if month is None or day is None:
        return None
    year = int(m["year"]) if m["year"] else nearest_year(month, day, today)
    found = None if year is None else date_or_none(year, month, day)
    return None if found is None else opened(_cn_side(m), *day_span(found))


def _cn_side(m: re.Match[str]) -> str | None:
    after = m["after"] if "after" in m.re.groupindex else None
    return {"以前": "before", "之前": "before", "以后": "after", "之后": "after"}.get(after or "")


def _cn_month(m: re.Match[str], today: date) -> Span | None:
    month = _cn_number(m["month"])
    if month is None or not 1 <= month <= 12:
        return None
    year = int(m["year"]) if m["year"] else latest_month(month, today)
    return opened(_cn_side(m), *month_span(year, month))


def _cn_year(m: re.Match[str], today: date) -> Span | None:
    year = int(m["year"])
    return opened(_cn_side(m), midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1)))


_CN_DAYS = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "昨晚": -1, "今天": 0, "今日": 0}
_CN_DAYS.update({"今早": 0, "今晚": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3})


def _cn_day(m: re.Match[str], today: date) -> Span | None:
    return day_span(today + timedelta(days=_CN_DAYS[m["rel"]]))


def _cn_week(m: re.Match[str], today: date) -> Span | None:
    step = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[m["which"]]
    start = week_start(today) + timedelta(weeks=step)
    if m["weekday"]:
        day = start + timedelta(days=_CN_WEEKDAY[m["weekday"]])
        if m["weekday"] == "末":
            return midnight(day), midnight(day) + 2 * DAY
        return day_span(day)
    return midnight(start), midnight(start) + 7 * DAY


def _cn_bare_weekday(m: re.Match[str], today: date) -> Span | None:
    day = week_start(today) + timedelta(days=_CN_WEEKDAY[m["weekday"]])
    return day_span(day)


def _cn_month_rel(m: re.Match[str], today: date) -> Span | None:
    step = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1}[m["which"]]
    index = today.year * 12 + today.month - 1 + step
    return month_span(index // 12, index % 12 + 1)


def _cn_year_rel(m: re.Match[str], today: date) -> Span | None:
    year = today.year + {"前": -2, "去": -1, "今": 0, "明": 1}[m["which"]]
    return midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1))


def _cn_ago(m: re.Match[str], today: date) -> Span | None:
    fuzzy = m["count"] == "几"
    n = 3 if fuzzy else _cn_number(m["count"])
    if n is None:
        return None
    unit = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week"}.get(
        m["unit"], "month" if "月" in m["unit"] else "year"
    )
    return ago_span(n, unit, fuzzy, today)


_CN_AFTER = r"(?P<after>以前|之前|以后|之后)?"
RULES: list[tuple[str, Rule]] = [
    (
        "absolute",
        (
            re.compile(
                rf"(?:(?P<year>(?:19|20)\d\d)年)?(?P<month>{_CN_NUM})月(?P<day>{_CN_NUM})[日号]"
                + _CN_AFTER
            ),
            _cn_full_date,
        ),
    ),
    (
        "period",
        (
            re.compile(
                rf"(?P<year>(?:19|20)\d\d)年(?P<month>{_CN_NUM})月(?![{_CN_NUM_CHARS}]*[日号])"
                + _CN_AFTER
            ),
            _cn_month,
        ),
    ),
    (
        "period",
        (re.compile(rf"(?P<year>(?:19|20)\d\d)年(?![{_CN_NUM_CHARS}]*月)" + _CN_AFTER), _cn_year),
    ),
    (
        "period",
        (
            re.compile(
                rf"(?<![个几上下这本{_CN_NUM_CHARS}])(?P<year>)(?P<month>{_CN_NUM})月份?"
                rf"(?![{_CN_NUM_CHARS}]*[日号])" + _CN_AFTER
            ),
            _cn_month,
        ),
    ),
    (
        "relative",
        (
            re.compile(
                r"(?P<rel>大前天|前天|昨天|昨日|昨晚|今天|今日|今早|今晚|大后天|后天|明天|明日)"
            ),
            _cn_day,
        ),
    ),
    (
        "relative",
        (
            re.compile(
                r"(?P<which>上上|下下|上|这|本|下)个?(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天末])?"
            ),
            _cn_week,
        ),
    ),
    ("relative", (re.compile(r"(?P<which>上上|上|这|本|下)个?月"), _cn_month_rel)),
    ("relative", (re.compile(r"(?P<which>前|去|今|明)年"), _cn_year_rel)),
    (
        "relative",
        (
            re.compile(
                rf"(?P<count>{_CN_NUM}|几)(?P<unit>天|日|周|个星期|星期|个月|年)(?:以前|之前|前)"
            ),
            _cn_ago,
        ),
    ),
    (
        "weekday",
        (
            re.compile(r"(?<![上下这本])(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])"),
            _cn_bare_weekday,
        ),
    ),
]
