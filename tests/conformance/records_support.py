"""Builders for the record-store conformance tests."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from memoryd.domain.records import Record, RecordKind

BASE = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
_counter = itertools.count()


def rec(
    key: str,
    doc: dict[str, Any] | None = None,
    *,
    kind: RecordKind = RecordKind.KEY,
    version: int | None = None,
    expires_at: datetime | None = None,
) -> Record:
    n = next(_counter)
    return Record(
        kind=kind,
        key=key,
        doc={"n": n} if doc is None else doc,
        version=n if version is None else version,
        updated_at=BASE + timedelta(seconds=n, microseconds=n % 997),
        expires_at=expires_at,
    )


def utf8_sorted(keys: list[str]) -> list[str]:
    return sorted(keys, key=lambda k: k.encode("utf-8"))
