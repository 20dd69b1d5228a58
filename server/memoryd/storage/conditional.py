"""The rules of ``Store.upsert_if`` that every backend and layer shares.

A read-modify-write of a memory (an update, an archive, a consolidation, a relation)
is written with ``upsert_if``: the change lands only if every memory it was computed
from is still stored at the version it was read at, else nothing is written and the
caller reads again. Three rules make that exact on every backend:

- *Versions identify states.* Every write that changes what a memory says moves its
  version (``domain.limits.next_version``); access statistics do not (they are not
  an edit), and neither does re-embedding (same text, another vector).
- *All or nothing.* The memories, the deletes and the conditions of one call are one
  change: a consolidation's derived memory never lands without its originals
  archived.
- *Counters are merged, not overwritten.* Access statistics are flushed behind the
  reads (service/memories/access_stats.py), so one may land between a change's read
  and its write: a conditioned memory keeps the stored ``access_count`` and
  ``accessed_at`` where they are higher than the ones written. Counters only grow
  through reads and merges (compaction sums them), so the larger is the newer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from memoryd.domain.models import Memory, Partition

#: What a caller expects of each id: the version it read, or None (not stored).
Expected = Mapping[str, int | None]


@dataclasses.dataclass(frozen=True, slots=True)
class ConditionalWrite:
    """One call of ``Store.upsert_if``: upsert ``memories`` and delete the ids
    ``delete`` in ``partition``, all or nothing, only if every id of ``expected`` is
    still stored at the version it maps to. A delete without a condition, or of an id
    also written, is a caller bug refused on construction (ValueError), so no backend
    or layer has to remember to check it."""

    partition: Partition
    memories: Sequence[Memory]
    expected: Expected
    delete: Sequence[str] = ()

    def __post_init__(self) -> None:
        written = {m.id for m in self.memories}
        for memory_id in self.delete:
            if memory_id not in self.expected:
                raise ValueError(f"delete of {memory_id!r} has no expected version")
            if memory_id in written:
                raise ValueError(f"{memory_id!r} is both written and deleted")

    @property
    def ids(self) -> list[str]:
        """Every id the write touches: the written ones, then the deleted ones."""
        return [*(m.id for m in self.memories), *self.delete]

    def with_memories(self, memories: Sequence[Memory]) -> ConditionalWrite:
        """The same write of ``memories`` instead (as a layer admitted them)."""
        return dataclasses.replace(self, memories=memories)


@dataclasses.dataclass(frozen=True, slots=True)
class Counters:
    """The access statistics a store holds for a memory (what ``upsert_if`` keeps)."""

    count: int
    accessed_at: datetime | None

    @classmethod
    def of(cls, memory: Memory) -> Counters:
        return cls(memory.access_count, memory.accessed_at)


def moved(expected: Expected, stored: Mapping[str, int]) -> list[str]:
    """The ids of ``expected`` whose stored version (``stored``: id -> version of the
    memories the partition holds) is not the expected one, in ``expected``'s order."""
    return [i for i, version in expected.items() if stored.get(i) != version]


def keep_counters(memory: Memory, stored: Counters | None) -> Memory:
    """``memory`` with the stored access statistics where they are higher (a copy when
    anything changes)."""
    if stored is None:
        return memory
    count = max(memory.access_count, stored.count)
    accessed = _later(memory.accessed_at, stored.accessed_at)
    if count == memory.access_count and accessed == memory.accessed_at:
        return memory
    out = memory.copy()
    out.access_count, out.accessed_at = count, accessed
    return out


def with_counters(
    memories: Sequence[Memory], expected: Expected, stored: Mapping[str, Counters]
) -> list[Memory]:
    """``keep_counters`` for every conditioned memory of ``memories``."""
    return [keep_counters(m, stored.get(m.id)) if m.id in expected else m for m in memories]


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return a if _utc(a) >= _utc(b) else b


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
