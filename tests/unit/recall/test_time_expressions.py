"""Time expressions in queries (memoryd.text.when): what each resolves to, relative to
a fixed reference time, in English and Chinese, and what is not a time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from memoryd.text.when import asked_part, time_spans

#: A Thursday.
NOW = datetime(2024, 1, 25, 15, 30, tzinfo=UTC)


def _days(query: str, now: datetime = NOW) -> list[tuple[date | None, date | None]]:
    """Each span as (first day, last day); None for an open side."""
    return [
        (
            None if s.start is None else s.start.date(),
            None if s.end is None else (s.end - timedelta(microseconds=1)).date(),
        )
        for s in time_spans(query, now)
    ]


D = date


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # absolute days, in the forms REALTALK's questions use
        ("What kind of pasta did Kate make on 29 Dec 2023?", (D(2023, 12, 29), D(2023, 12, 29))),
        ("Where is Paola going on the 10th of February 2024?", (D(2024, 2, 10), D(2024, 2, 10))),
        ("What did Paola explore on 24.01.2024?", (D(2024, 1, 24), D(2024, 1, 24))),
        ("naps on January 6 2024", (D(2024, 1, 6), D(2024, 1, 6))),
        ("on December 23rd, 2023", (D(2023, 12, 23), D(2023, 12, 23))),
        ("the 31 of December 2023", (D(2023, 12, 31), D(2023, 12, 31))),
        ("on 2024-01-02", (D(2024, 1, 2), D(2024, 1, 2))),
        ("on 1/2/2024", (D(2024, 1, 2), D(2024, 1, 2))),
        ("on 13/2/2024", (D(2024, 2, 13), D(2024, 2, 13))),
        # no year: the one nearest now
        ("on 3 March", (D(2024, 3, 3), D(2024, 3, 3))),
        ("on Dec 30", (D(2023, 12, 30), D(2023, 12, 30))),
        # months, years, seasons, weeks of them
        ("in May", (D(2023, 5, 1), D(2023, 5, 31))),
        ("in January", (D(2024, 1, 1), D(2024, 1, 31))),
        ("in January 2024", (D(2024, 1, 1), D(2024, 1, 31))),
        ("in 2017", (D(2017, 1, 1), D(2017, 12, 31))),
        ("in the spring of 2024", (D(2024, 3, 1), D(2024, 5, 31))),
        ("in winter 2021 - 2022", (D(2021, 12, 1), D(2022, 2, 28))),
        ("in the first week of 2024", (D(2024, 1, 1), D(2024, 1, 7))),
        # relative to now
        ("today", (D(2024, 1, 25), D(2024, 1, 25))),
        ("what did I eat yesterday", (D(2024, 1, 24), D(2024, 1, 24))),
        ("last night", (D(2024, 1, 24), D(2024, 1, 24))),
        ("the day before yesterday", (D(2024, 1, 23), D(2024, 1, 23))),
        ("three days ago", (D(2024, 1, 22), D(2024, 1, 22))),
        ("2 weeks ago", (D(2024, 1, 8), D(2024, 1, 14))),
        ("last week", (D(2024, 1, 15), D(2024, 1, 21))),
        ("this week", (D(2024, 1, 22), D(2024, 1, 28))),
        ("last weekend", (D(2024, 1, 20), D(2024, 1, 21))),
        ("last month", (D(2023, 12, 1), D(2023, 12, 31))),
        ("last year", (D(2023, 1, 1), D(2023, 12, 31))),
        ("on Monday", (D(2024, 1, 22), D(2024, 1, 22))),
        ("last Thursday", (D(2024, 1, 18), D(2024, 1, 18))),
        ("next Friday", (D(2024, 1, 26), D(2024, 1, 26))),
        # open on one side
        ("before January 4th, 2024", (None, D(2024, 1, 3))),
        ("after 5 Jan 2024", (D(2024, 1, 6), None)),
        ("since May 2023", (D(2023, 5, 1), None)),
        # Chinese
        ("上周三我去了哪里?", (D(2024, 1, 17), D(2024, 1, 17))),
        ("我昨天吃了什么", (D(2024, 1, 24), D(2024, 1, 24))),
        ("前天", (D(2024, 1, 23), D(2024, 1, 23))),
        ("上周", (D(2024, 1, 15), D(2024, 1, 21))),
        ("上个星期", (D(2024, 1, 15), D(2024, 1, 21))),
        ("下下周一晚上七点", (D(2024, 2, 5), D(2024, 2, 5))),
        ("上个月", (D(2023, 12, 1), D(2023, 12, 31))),
        ("去年", (D(2023, 1, 1), D(2023, 12, 31))),
        ("3天前", (D(2024, 1, 22), D(2024, 1, 22))),
        ("三天前", (D(2024, 1, 22), D(2024, 1, 22))),
        ("2024年4月1日", (D(2024, 4, 1), D(2024, 4, 1))),
        ("十月二十三号", (D(2023, 10, 23), D(2023, 10, 23))),
        ("２０２４年４月１日", (D(2024, 4, 1), D(2024, 4, 1))),
        ("2023年5月", (D(2023, 5, 1), D(2023, 5, 31))),
        ("4月份", (D(2023, 4, 1), D(2023, 4, 30))),
        ("2024年4月1日之前", (None, D(2024, 3, 31))),
    ],
)
def test_resolves(query: str, expected: tuple[date | None, date | None]) -> None:
    assert _days(query) == [expected]


@pytest.mark.parametrize(
    "query",
    [
        "What may have inspired Elise to create an abstract art work?",
        "They march to the stadium",
        "I paid 2024 dollars for it",
        "How many times has Elise been to Turks and Caicos?",
        "Where are Kate and Elise planning to celebrate New Year 2025?",
        "一个月",
        "几个月",
        "我的手机是OPPOReno7。",
        "",
    ],
)
def test_not_a_time(query: str) -> None:
    assert time_spans(query, NOW) == []


def test_several_expressions_in_order_and_the_longest_claims_its_words() -> None:
    spans = time_spans("between 29 Dec 2023 and last week", NOW)
    assert [s.expression for s in spans] == ["29 Dec 2023", "last week"]


def test_a_weekday_beside_an_absolute_date_is_left_out() -> None:
    # "Friday before 10.01.2024" is relative to that date, not to now.
    spans = time_spans("What did she make on Friday before 10.01.2024?", NOW)
    assert [s.expression for s in spans] == ["before 10.01.2024"]


def test_relative_expressions_follow_the_reference_time_and_its_offset() -> None:
    assert _days("yesterday", datetime(2024, 4, 6, 8, tzinfo=UTC)) == [
        (D(2024, 4, 5), D(2024, 4, 5))
    ]
    # 23:30 on the 5th at UTC-5 is the 6th in UTC: days are UTC days.
    late = datetime(2024, 4, 5, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert _days("today", late) == [(D(2024, 4, 6), D(2024, 4, 6))]
    # A naive reference time is taken as UTC.
    assert _days("today", datetime(2024, 4, 5, 12)) == [(D(2024, 4, 5), D(2024, 4, 5))]


def test_contains_is_half_open() -> None:
    (span,) = time_spans("on 29 Dec 2023", NOW)
    assert span.contains(datetime(2023, 12, 29, tzinfo=UTC))
    assert span.contains(datetime(2023, 12, 29, 23, 59, 59, tzinfo=UTC))
    assert not span.contains(datetime(2023, 12, 30, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("I was tired. What did I eat yesterday?", "What did I eat yesterday?"),
        # A time in a remark before the question is not what is asked about.
        ("Nice weather today. Where was I last week?", "Where was I last week?"),
        ("Yesterday was long. What did I eat?", "What did I eat?"),
        (
            "今天天气真好。我真正想问的是\uff1a那个生日是10月23日的人是谁\uff1f",
            "我真正想问的是\uff1a那个生日是10月23日的人是谁\uff1f",
        ),
        # One sentence, or no question mark: all of it ("24.01.2024" is no sentence end).
        ("What did Paola explore on 24.01.2024?", "What did Paola explore on 24.01.2024?"),
        ("on 24.01.2024 what did Paola explore", "on 24.01.2024 what did Paola explore"),
        ("Went out. Ate well.", "Went out. Ate well."),
        ("Really? What happened on 3 March?", "Really? What happened on 3 March?"),
    ],
)
def test_asked_part(text: str, asked: str) -> None:
    assert asked_part(text) == asked
