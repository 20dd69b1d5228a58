"""Time-aware recall: a query that names a time favours memories of that time.

"What did Kate cook on 29 Dec 2023?" asks about what happened then, and the turn that
answers it ("made pasta with ham and peas yesterday") shares few words with it. The
times the query names (memoryd.text.when, relative to the request's ``now``) are
compared with each candidate's event time (``occurred_at``, else ``created_at``):
``temporal`` is 1 for a memory inside a span, widened by ``temporal_before_hours``
before it and ``temporal_after_hours`` after it (people tell of a day's events that
evening or the next days, and of plans the days before), else 0. Relevance becomes
(1 - w) * relevance + w * temporal, w = ``recall.temporal_weight``: a boost, not a
filter, so a misread expression costs order, never a result. When no candidate falls
in a span (a time the memories do not cover) nothing changes; a time mentioned in a
remark before the question ("Nice weather today. Where was I last week?") is not read
(memoryd.text.when.asked_part).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from memoryd.config import RecallSettings
from memoryd.domain.models import Memory
from memoryd.text.when import TimeSpan, asked_part, time_spans


class TimeQuery:
    """The spans a query names, widened by the configured slack, and the weight."""

    def __init__(self, query: str, now: datetime, settings: RecallSettings) -> None:
        self.weight = settings.temporal_weight
        before = timedelta(hours=settings.temporal_before_hours)
        after = timedelta(hours=settings.temporal_after_hours)
        spans = time_spans(asked_part(query), now) if self.weight > 0 and query else []
        self.spans: list[TimeSpan] = [
            TimeSpan(
                None if s.start is None else s.start - before,
                None if s.end is None else s.end + after,
                s.expression,
            )
            for s in spans
        ]

    def __bool__(self) -> bool:
        return bool(self.spans)

    def matches(self, memories: Sequence[Memory]) -> list[float]:
        """1.0 for each memory whose event time falls in a (widened) span, else 0.0."""
        return [1.0 if any(s.contains(m.event_time) for s in self.spans) else 0.0 for m in memories]

    def relevance(self, relevance: float, temporal: float) -> float:
        return (1.0 - self.weight) * relevance + self.weight * temporal
