"""Instants as every backend keeps them: integer microseconds since the Unix epoch,
in UTC (exact, ordered, range-filterable; naive datetimes are taken as UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(value: datetime) -> int:
    """Microseconds since the Unix epoch; naive datetimes are taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(value: int) -> datetime:
    """The UTC instant ``value`` microseconds after the epoch."""
    return _EPOCH + timedelta(microseconds=int(value))


def optional_micros(value: datetime | None) -> int | None:
    """``to_micros`` of an instant that may be absent."""
    return None if value is None else to_micros(value)


def optional_instant(value: int | None) -> datetime | None:
    """``from_micros`` of a stored value that may be absent."""
    return None if value is None else from_micros(value)
