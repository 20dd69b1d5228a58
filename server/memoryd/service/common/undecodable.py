"""Reads that leave out a record which no longer decodes (domain.records.UndecodableRecord).

One such record must not turn a listing, a history or an export into an error for the
whole agent or tenant: it is skipped, logged and reported to the call as a degradation
(resilience/degradation.py), so the caller learns that something was left out and
which record, and an operator finds it in the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import structlog

from memoryd.domain.records import Record, UndecodableRecord
from memoryd.resilience.degradation import report

T = TypeVar("T")
log = structlog.get_logger("memoryd.records")

#: The component named in the degradation a skipped record reports.
COMPONENT = "stored_data"


def skipped(error: UndecodableRecord) -> None:
    """Log and report a record a read leaves out."""
    log.warning("undecodable record skipped", record=error.what, reason=error.reason)
    report(COMPONENT, error.message)


def decodable(records: Iterable[Record], decode: Callable[[Record], T]) -> list[T]:
    """``decode`` of each record, leaving out (and reporting) those that do not decode."""
    out: list[T] = []
    for record in records:
        try:
            out.append(decode(record))
        except UndecodableRecord as error:
            skipped(error)
    return out
