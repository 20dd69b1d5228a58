"""Relations between memories, kept in each memory's metadata.

A relation is stored on both memories it links, each side with its own kind
(``supersedes`` on the newer, ``superseded_by`` on the older), so reading either one
tells the story. They live under reserved metadata keys, so every backend, export and
import keeps them without a schema change:

- ``memoryd:relations``: a list of ``{"kind", "memory_id", "at", "reason",
  "strength"}`` (strength 0..1: how closely the two are related, the cosine of their
  vectors where a rule or the LLM judged them, 1 for a memory derived from another;
  0.5, the layered-memory design's default, where nothing measured it);
- ``memoryd:superseded_by``: the id of the memory that replaced this one (set while it
  is archived because of that; cleared when it is restored);
- ``memoryd:derived_from``: the ids a consolidated (or compacted) memory was made from.

Metadata keys starting with ``memoryd:`` are the daemon's: UpdateMemory keeps them
when it replaces the metadata.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoryd.domain.models import Memory

RELATIONS_KEY = "memoryd:relations"
SUPERSEDED_BY_KEY = "memoryd:superseded_by"
DERIVED_FROM_KEY = "memoryd:derived_from"
RESERVED_PREFIX = "memoryd:"
#: Relations kept per memory (the newest): metadata must stay small.
MAX_RELATIONS = 50
#: The strength of a relation nothing measured (the layered-memory design's default).
DEFAULT_STRENGTH = 0.5


class RelationKind(enum.StrEnum):
    """How one memory relates to another; each kind has an inverse stored on the other."""

    SUPERSEDES = "supersedes"
    SUPERSEDED_BY = "superseded_by"
    CONTRADICTS = "contradicts"
    CONTRADICTED_BY = "contradicted_by"
    SUPPORTS = "supports"
    SUPPORTED_BY = "supported_by"
    REFINES = "refines"
    REFINED_BY = "refined_by"
    DERIVED_FROM = "derived_from"
    CONSOLIDATED_INTO = "consolidated_into"

    @property
    def inverse(self) -> RelationKind:
        """The kind the other memory records."""
        return _INVERSE[self]


_INVERSE = {
    RelationKind.SUPERSEDES: RelationKind.SUPERSEDED_BY,
    RelationKind.CONTRADICTS: RelationKind.CONTRADICTED_BY,
    RelationKind.SUPPORTS: RelationKind.SUPPORTED_BY,
    RelationKind.REFINES: RelationKind.REFINED_BY,
    RelationKind.DERIVED_FROM: RelationKind.CONSOLIDATED_INTO,
}
_INVERSE.update({v: k for k, v in list(_INVERSE.items())})

#: Kinds by which the newer memory replaces the older one (which is archived).
REPLACING = frozenset({RelationKind.SUPERSEDES, RelationKind.CONTRADICTS})


@dataclass(frozen=True, slots=True)
class Relation:
    """One relation of a memory to another."""

    kind: RelationKind
    memory_id: str
    created_at: datetime | None = None
    #: Why it was recorded ("rule: ...", "llm", "consolidation"), never content.
    reason: str = ""
    #: How closely the two are related, 0..1 (see the module docstring).
    strength: float = DEFAULT_STRENGTH

    def as_doc(self) -> dict[str, Any]:
        """The relation as its metadata document."""
        doc: dict[str, Any] = {"kind": self.kind.value, "memory_id": self.memory_id}
        if self.created_at is not None:
            doc["at"] = self.created_at.isoformat()
        if self.reason:
            doc["reason"] = self.reason
        doc["strength"] = round(self.strength, 4)
        return doc


def relations_of(metadata: Mapping[str, Any]) -> list[Relation]:
    """The relations recorded in a memory's metadata (malformed entries skipped)."""
    out = []
    raw = metadata.get(RELATIONS_KEY)
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping):
            continue
        try:
            kind = RelationKind(str(item.get("kind")))
        except ValueError:
            continue
        at = item.get("at")
        try:
            created = datetime.fromisoformat(at) if isinstance(at, str) else None
        except ValueError:
            created = None
        out.append(
            Relation(
                kind,
                str(item.get("memory_id", "")),
                created,
                str(item.get("reason", "")),
                _strength(item.get("strength")),
            )
        )
    return out


def _strength(value: Any) -> float:
    """A stored strength, or the default for one missing or out of range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return DEFAULT_STRENGTH
    return float(value) if 0.0 <= value <= 1.0 else DEFAULT_STRENGTH


def superseded_by(metadata: Mapping[str, Any]) -> str:
    """The id of the memory that superseded this one ("" when none), from its metadata."""
    value = metadata.get(SUPERSEDED_BY_KEY)
    return value if isinstance(value, str) else ""


def derived_from(metadata: Mapping[str, Any]) -> list[str]:
    """The ids a consolidated memory was derived from, from its metadata."""
    value = metadata.get(DERIVED_FROM_KEY)
    return [str(v) for v in value] if isinstance(value, list) else []


def with_relations(metadata: Mapping[str, Any], added: Iterable[Relation]) -> dict[str, Any]:
    """``metadata`` with ``added`` recorded (a relation already there is not repeated)."""
    current = relations_of(metadata)
    seen = {(r.kind, r.memory_id) for r in current}
    for relation in added:
        if (relation.kind, relation.memory_id) not in seen:
            current.append(relation)
            seen.add((relation.kind, relation.memory_id))
    return {**metadata, RELATIONS_KEY: [r.as_doc() for r in current[-MAX_RELATIONS:]]}


def link(
    newer: Memory,
    older: Memory,
    kind: RelationKind,
    at: datetime,
    reason: str,
    strength: float = DEFAULT_STRENGTH,
) -> None:
    """Record ``newer`` --kind--> ``older`` on both (in place), ``strength`` 0..1; a
    replacing kind also sets ``older``'s superseded_by and ``newer``'s supersedes."""
    strength = min(1.0, max(0.0, strength))
    forward = Relation(kind, older.id, at, reason, strength)
    newer.metadata = with_relations(newer.metadata, [forward])
    backward = Relation(kind.inverse, newer.id, at, reason, strength)
    older.metadata = with_relations(older.metadata, [backward])
    if kind in REPLACING:
        older.metadata = {**older.metadata, SUPERSEDED_BY_KEY: newer.id}
        newer.supersedes = newer.supersedes or older.id


def reserved(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The daemon's own metadata entries (kept across UpdateMemory)."""
    return {k: v for k, v in metadata.items() if k.startswith(RESERVED_PREFIX)}


def restored(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata of a memory brought back from archive: no longer superseded."""
    return {k: v for k, v in metadata.items() if k != SUPERSEDED_BY_KEY}
