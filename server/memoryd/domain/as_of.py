"""As-of reads (docs/as-of.md): which moment of the past a read is answered as of."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class AsOf:
    """A past instant, or a position of the write-ahead log as a Watch cursor (sealed:
    the log's sequence counts every tenant's writes), exactly one of them; the
    service checks it (INVALID_ARGUMENT naming ``as_of``)."""

    instant: datetime | None = None
    cursor: str | None = None
