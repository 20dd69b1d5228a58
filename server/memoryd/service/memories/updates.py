"""UpdateMemory's patch: checked once, then applied to whatever state the memory is
in when the write lands (service/common/memory_writes.py re-applies it after a lost
race, so a concurrent change of other fields is kept)."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from memoryd.config import LimitsSettings
from memoryd.domain.errors import FailedPrecondition, PermissionDenied
from memoryd.domain.limits import next_version
from memoryd.domain.models import Memory, Vector
from memoryd.domain.principal import CallScope
from memoryd.domain.relations import reserved
from memoryd.domain.requests import MemoryPatch
from memoryd.service.common import validation as check
from memoryd.service.common.validation import Violations


def check_patch(
    scope: CallScope, patch: MemoryPatch, limits: LimitsSettings, dimension: int, now: datetime
) -> None:
    """INVALID_ARGUMENT naming each bad field; PERMISSION_DENIED for a level above the
    caller's clearance."""
    values = patch.values
    v = Violations("memory.")
    if "content" in patch.fields:
        check.check_content(v, values["content"], limits)
    if "tags" in patch.fields:
        check.check_tags(v, values["tags"], limits)
    for name in ("importance", "confidence"):
        if name in patch.fields:
            check.check_unit_interval(v, values[name], name)
    if "namespace" in patch.fields:
        check.check_namespace(v, values["namespace"], limits)
    if "metadata" in patch.fields:
        check.check_metadata(v, values["metadata"], limits)
    if "source" in patch.fields:
        check.check_source(v, values["source"])
    if "expires_at" in patch.fields:
        check.check_future(v, values["expires_at"], now, "expires_at")
    top_level = Violations()
    check.check_embedding(top_level, patch.embedding, dimension, "embedding")
    v.extend(top_level.items)
    v.raise_if_any()
    level = values.get("security_level") if "security_level" in patch.fields else None
    if level is not None and level > scope.clearance:
        raise PermissionDenied(
            f"memory.security_level: {level.name} is above the caller's clearance"
        )


def check_version(patch: MemoryPatch, current: Memory) -> None:
    """FAILED_PRECONDITION when the caller's ``if_version`` is not the stored version."""
    if patch.if_version is not None and patch.if_version != current.version:
        raise FailedPrecondition(
            f"if_version {patch.if_version} does not match the current version {current.version}"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class NewVector:
    """The vector of new content (or the caller's embedding), made once per update."""

    vector: Vector
    space: str
    dimension: int


def patched(current: Memory, patch: MemoryPatch, now: datetime, vector: NewVector | None) -> Memory:
    """``current`` with the patch applied: version + 1, updated now."""
    changes = {name: patch.values[name] for name in patch.fields}
    if "metadata" in changes:
        # Relations and links are the daemon's; new metadata does not erase them.
        changes["metadata"] = {**reserved(current.metadata), **changes["metadata"]}
    if "tags" in changes:
        changes["tags"] = normalise_tags(changes["tags"])
    updated = dataclasses.replace(
        current, **changes, updated_at=now, version=next_version(current.version)
    )
    if "metadata" in changes:
        updated.metadata_json = patch.metadata_json
    if vector is not None:
        updated.vector = vector.vector
        updated.embedding_model = vector.space
        updated.embedding_dimension = vector.dimension
    return updated


def normalise_tags(tags: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Trimmed, de-duplicated, order kept."""
    return tuple(dict.fromkeys(t.strip() for t in tags))
