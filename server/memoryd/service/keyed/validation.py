"""A SetMemory request checked: every violation at once, and the content as stored.

Content arrives checked (domain/json_text.Json, made by the adapter) and is kept as
its text, so it reads back as written. Every write names its ``source``
(tombstones too); keys under ``/kb/`` need a full provenance.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.config import KeysSettings, LimitsSettings
from memoryd.domain import json_text
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.locator import locates
from memoryd.domain.models import PROVENANCE_REQUIRED_KINDS
from memoryd.service.common import validation as check
from memoryd.service.common.validation import Violations
from memoryd.service.keyed.docs import MirrorFields, mirror_fields
from memoryd.service.keyed.keys import needs_provenance


@dataclass(frozen=True, slots=True)
class KeyContent:
    """A write's content as stored (text) and as data; mirror fields of a value."""

    text: str
    value: json_text.JsonValue
    mirror: MirrorFields | None


def validated_content(
    write: KeyWrite, key: str, keys: KeysSettings, limits: LimitsSettings
) -> KeyContent:
    """``write``'s content as stored; InvalidArgument naming every bad field."""
    v = Violations()
    text, value = write.content.text, write.content.value
    mirror = None
    size = len(text.encode("utf-8"))
    if size > keys.max_content_bytes:
        v.add(
            "content",
            f"is {size} bytes as JSON; the limit is {keys.max_content_bytes} "
            "(keys.max_content_bytes)",
        )
    if value is not None:
        mirror = mirror_fields(value, limits, v)
        if needs_provenance(key):
            _require_provenance(v, write, key)
    if write.source is None:
        v.add(
            "source",
            "is required on every keyed write, tombstones included: say where the "
            "value comes from (kind user, agent, tool, web, file or system)",
        )
    check.check_source(v, write.source)
    check.check_namespace(v, write.namespace, limits)
    if write.if_version is not None and write.if_version < 0:
        v.add("if_version", "must not be negative (0: the key was never written)")
    v.raise_if_any()
    return KeyContent(text, value, mirror)


def _require_provenance(v: Violations, write: KeyWrite, key: str) -> None:
    source = write.source
    if source is not None and source.kind in PROVENANCE_REQUIRED_KINDS:
        return  # check_source reports what is missing
    present = {
        "name": source is not None and bool(source.name.strip()),
        "retrieved_at": source is not None and source.retrieved_at is not None,
        "locator": source is not None and locates(source.locator),
    }
    for name, ok in present.items():
        if not ok:
            v.add(f"source.{name}", f"is required for keys under /kb/ ({key})")
