"""Time expressions in a query: the spans of time it asks about, relative to ``now``.

"What did Kate cook on 29 Dec 2023?", "where was I last week?", "上周三我去了哪里?":
a question that names a time asks about what happened then. ``time_spans`` finds
such expressions in English and Chinese and resolves each to a half-open UTC
interval [start, end) relative to a reference time (the request's ``now``, else the
server's clock). Recall then favours memories whose event time (``occurred_at``,
else ``created_at``) falls in a span (service/memories/temporal.py). Deterministic, no model:

- absolute dates: "29 Dec 2023", "December 29th, 2023", "the 5th of January 2024",
  "2024-01-02", "02.01.2024" (day first), "1/2/2024" (month first unless the first
  number is above 12), "3 March" (the year nearest ``now``), "2024年4月1日", "4月1号";
- months, years, seasons: "in May", "May 2024", "in 2017", "spring of 2024",
  "2024年4月", "去年", "今年", "上个月";
- relative days and weeks: "today", "yesterday", "the day before yesterday", "last
  night", "3 days ago", "two weeks ago", "last week", "this week", "last weekend",
  "last Monday", "on Friday", "昨天", "前天", "上周", "上周三", "3天前", "下周五";
- "before"/"after"/"since"/"until" a date or month open the span on one side.

A weekday alone ("on Friday") is relative to ``now``; in a query that also names an
absolute date it is more likely relative to that date, so it is dropped then. A
bare number is never taken for a year (quantities, prices); a month name alone only
after a preposition ("in May", not the verb "may").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime

from memoryd.text import when_en, when_zh
from memoryd.text.calendar import Span


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A half-open interval [start, end) in UTC; None is unbounded on that side."""

    start: datetime | None
    end: datetime | None
    #: The words it was read from ("last week"), for diagnostics.
    expression: str

    def contains(self, instant: datetime) -> bool:
        return (self.start is None or instant >= self.start) and (
            self.end is None or instant < self.end
        )


# --------------------------------------------------------------- the entry point

#: What every time expression holds one of (a digit, a time word's start, a CJK time
#: character): most queries have none and are passed over with this one search
#: instead of every rule's (~140 us per query).
_MAYBE = re.compile(
    r"\d|\b(?:today|tonight|yesterday|tomorrow|ago|last|this|next|past|previous|coming|"
    r"week|month|year|spring|summer|autumn|fall|winter|morning|afternoon|evening|night|"
    r"mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
    r"earlier|first|second|third|fourth|a\s+few|several|couple)|[\u4e00-\u9fff]",
    re.I,
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")

#: A sentence: up to its terminator (a period only before a space, so "24.01.2024"
#: stays whole) or the end of the text.
_SENTENCE = re.compile(r".*?(?:[!?\u3002\uff01\uff1f]+|\.(?=\s)|$)", re.S)


def asked_part(text: str) -> str:
    """The question sentences of ``text`` when it has other sentences as well; else all
    of it. "Nice weather today. Where was I last week?" asks about last week, not
    today: a time in a remark before the question is not what is asked about
    (MemDaily's noisy questions chat about yesterday before asking; reading those
    times cost its MRR 0.940 -> 0.927 with MiniLM, in process)."""
    sentences = [m.group(0).strip() for m in _SENTENCE.finditer(text)]
    sentences = [s for s in sentences if s]
    questions = [s for s in sentences if s.endswith(("?", "\uff1f"))]
    if len(sentences) > 1 and questions:
        return " ".join(questions)
    return text


def time_spans(text: str, now: datetime) -> list[TimeSpan]:
    """The spans of time ``text`` refers to, in order of appearance; [] for none.

    ``now`` (timezone-aware, or taken as UTC) anchors relative expressions. Spans of
    overlapping expressions are not repeated: the longest expression at a position
    wins ("29 Dec 2023" is one day, not also "Dec 2023").
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    today = now.astimezone(UTC).date()
    # NFKC: full-width digits and punctuation ("４月１日", typed on CJK keyboards)
    # become ASCII, so one set of patterns reads both.
    text = unicodedata.normalize("NFKC", text)
    if not _MAYBE.search(text):
        return []
    found: list[tuple[int, int, str, TimeSpan]] = []
    for kind, match, (start, end) in _matches(text, today):
        if any(s <= match.start() < e or match.start() <= s < match.end() for s, e, *_ in found):
            continue
        expression = match.group(0).strip()
        found.append((match.start(), match.end(), kind, TimeSpan(start, end, expression)))
    if any(kind == "absolute" for _, _, kind, _ in found):
        found = [f for f in found if f[2] != "weekday"]
    return [span for *_, span in sorted(found, key=lambda f: f[0])]


def _matches(text: str, today: date) -> Iterator[tuple[str, re.Match[str], Span]]:
    """Every rule's matches, longest first (so a longer expression claims its text)."""
    candidates = []
    rules = [*when_en.RULES, *when_zh.RULES] if _CJK.search(text) else when_en.RULES
    for kind, (pattern, resolve) in rules:
        for match in pattern.finditer(text):
            try:
                span = resolve(match, today)
            except (ValueError, OverflowError, KeyError):
                span = None
            if span is not None:
                candidates.append((kind, match, span))
    candidates.sort(key=lambda c: (-(c[1].end() - c[1].start()), c[1].start()))
    yield from candidates
