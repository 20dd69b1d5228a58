"""Semantic validation of service inputs. Every failure names the request field."""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import numpy as np

from memoryd.config import LimitsSettings
from memoryd.domain.conversation import MAX_CONTEXT_WINDOW, SEQUENCE_KEY, SESSION_ID_KEY
from memoryd.domain.errors import FieldViolation, InvalidArgument
from memoryd.domain.limits import MAX_LOCATOR_BYTES
from memoryd.domain.locator import locates
from memoryd.domain.models import PROVENANCE_REQUIRED_KINDS, Provenance, Vector, finite_nonzero


def has_control_chars(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


class Violations:
    """Collects field violations; ``raise_if_any`` raises one InvalidArgument for all."""

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self.items: list[FieldViolation] = []

    def add(self, field: str, description: str) -> None:
        self.items.append(FieldViolation(f"{self._prefix}{field}", description))

    def extend(self, other: Iterable[FieldViolation]) -> None:
        self.items.extend(other)

    def raise_if_any(self) -> None:
        if self.items:
            raise InvalidArgument(self.items)


def check_content(
    v: Violations, content: str, limits: LimitsSettings, field: str = "content"
) -> None:
    if not content.strip():
        v.add(field, "must not be empty")
        return
    size = len(content.encode("utf-8"))
    if size > limits.max_content_bytes:
        v.add(
            field,
            f"is {size} bytes; the limit is {limits.max_content_bytes} (limits.max_content_bytes)",
        )
    if "\x00" in content:
        v.add(field, "must not contain NUL characters")


def check_tags(
    v: Violations, tags: Iterable[str], limits: LimitsSettings, field: str = "tags"
) -> None:
    tags = list(tags)
    if len(tags) > limits.max_tags:
        v.add(field, f"has {len(tags)} tags; the limit is {limits.max_tags}")
    for i, tag in enumerate(tags):
        if not tag.strip():
            v.add(f"{field}[{i}]", "must not be empty")
        elif len(tag.encode()) > limits.max_tag_bytes:
            v.add(f"{field}[{i}]", f"longer than {limits.max_tag_bytes} bytes")
        elif has_control_chars(tag):
            v.add(f"{field}[{i}]", "must not contain control characters")


def check_unit_interval(v: Violations, value: float | None, field: str) -> None:
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        v.add(field, f"must be between 0 and 1, got {value}")


def check_namespace(
    v: Violations, namespace: str | None, limits: LimitsSettings, field: str = "namespace"
) -> None:
    if namespace is None:
        return
    if len(namespace.encode()) > limits.max_namespace_bytes:
        v.add(field, f"longer than {limits.max_namespace_bytes} bytes")
    if has_control_chars(namespace):
        v.add(field, "must not contain control characters")


def check_metadata(
    v: Violations, metadata: dict[str, Any], limits: LimitsSettings, field: str = "metadata"
) -> None:
    if not metadata:
        return
    try:
        encoded = json.dumps(metadata, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        v.add(field, f"is not valid JSON: {exc}")
        return
    if len(encoded.encode()) > limits.max_metadata_bytes:
        v.add(
            field,
            f"is {len(encoded.encode())} bytes as JSON; the limit is {limits.max_metadata_bytes}",
        )
    wide = _integer_past_64_bits(metadata)
    if wide is not None:
        v.add(field, f"holds the integer {wide}, past 64 bits: send it as a string")


def check_session_position(
    v: Violations,
    session_id: str,
    sequence: int,
    metadata: dict[str, Any],
    limits: LimitsSettings,
) -> None:
    """A Remember's session and turn number (domain/conversation.py): a bounded id
    without control characters, a sequence not negative and only with a session, and
    neither contradicting what ``metadata`` already says under the same keys."""
    if len(session_id.encode()) > limits.max_namespace_bytes:
        v.add("session_id", f"longer than {limits.max_namespace_bytes} bytes")
    if has_control_chars(session_id):
        v.add("session_id", "must not contain control characters")
    if sequence < 0:
        v.add("sequence", "must not be negative")
    elif sequence and not session_id:
        v.add("sequence", "needs session_id")
    for field, value, key in (
        ("session_id", session_id, SESSION_ID_KEY),
        ("sequence", sequence, SEQUENCE_KEY),
    ):
        if value and key in metadata and metadata[key] != value:
            v.add(field, f"differs from metadata.{key} ({metadata[key]!r})")


def check_context_window(v: Violations, window: int | None, field: str = "context_window") -> None:
    if window is not None and not 0 <= window <= MAX_CONTEXT_WINDOW:
        v.add(field, f"must be between 0 and {MAX_CONTEXT_WINDOW}")


#: The integers every store and the write-ahead log hold (signed and unsigned 64-bit).
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _integer_past_64_bits(value: Any) -> int | None:
    """The first integer in ``value`` (JSON data) outside 64 bits; None when none is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if not _INT_MIN <= value <= _INT_MAX else None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        found = _integer_past_64_bits(item)
        if found is not None:
            return found
    return None


def check_source(v: Violations, source: Provenance | None, field: str = "source") -> None:
    if source is None:
        return
    size = len(source.locator.encode("utf-8"))
    if size > MAX_LOCATOR_BYTES:
        v.add(f"{field}.locator", f"is {size} bytes; the limit is {MAX_LOCATOR_BYTES}")
    if source.kind not in PROVENANCE_REQUIRED_KINDS:
        return
    missing = [
        name
        for name, present in (
            ("name", bool(source.name.strip())),
            ("retrieved_at", source.retrieved_at is not None),
            ("locator", locates(source.locator)),
        )
        if not present
    ]
    for name in missing:
        v.add(f"{field}.{name}", f"is required for provenance kind {source.kind.value}")


def check_future(v: Violations, when: datetime | None, now: datetime, field: str) -> None:
    if when is not None and when <= now:
        v.add(field, "must be in the future")


def check_embedding(v: Violations, embedding: Vector | None, dimension: int, field: str) -> None:
    if embedding is None:
        return
    if embedding.shape != (dimension,):
        v.add(
            field,
            f"has dimension {embedding.shape[0] if embedding.ndim else 0}; this daemon embeds in {dimension}",
        )
    elif finite_nonzero(embedding):
        return
    elif not np.isfinite(embedding).all():
        v.add(field, "contains NaN or infinite values")
    else:
        v.add(field, "must not be the zero vector")


def check_limit(v: Violations, value: int | None, maximum: int, field: str) -> None:
    if value is not None and not 1 <= value <= maximum:
        v.add(field, f"must be between 1 and {maximum}, got {value}")
