"""The changes of one log entry, in the entry's order (docs/watch.md: the table)."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.domain.changes import Change, ChangeKind
from memoryd.domain.models import Memory, Partition, SecurityLevel
from memoryd.domain.records import RecordKind
from memoryd.durability.changes import LoggedEntry
from memoryd.durability.ops import Op
from memoryd.service.keyed.docs import decoded_entry, level_of


@dataclass(frozen=True, slots=True)
class Found:
    """One change of an entry, with where it happened and its security level (None:
    unknown, a deletion: the log keeps the id only)."""

    partition: Partition
    change: Change
    level: SecurityLevel | None


def changes_of(entry: LoggedEntry) -> list[Found]:
    """Every change of ``entry``, whoever may see it: a cursor counts into this list,
    so it must not depend on the caller."""
    return [found for op in entry.ops for found in _of_op(op)]


def _of_op(op: Op) -> list[Found]:
    p = op.partition
    if op.kind == "upsert":
        return [Found(p, _memory_change(m), m.security_level) for m in op.memories]
    if op.kind == "delete":
        return [
            Found(p, Change(ChangeKind.MEMORY_DELETED, p.agent_id, memory_id=i), None)
            for i in op.ids
        ]
    if op.kind == "put_records":
        out = []
        for record in op.records:
            entry = decoded_entry(record) if record.kind is RecordKind.KEY else None
            if entry is not None:
                kind = ChangeKind.KEY_SET if entry.valid else ChangeKind.KEY_DELETED
                change = Change(kind, p.agent_id, key=entry.key, key_entry=entry)
                out.append(Found(p, change, level_of(record)))
        return out
    if op.record_kind is RecordKind.KEY:
        return [Found(p, Change(ChangeKind.KEY_DELETED, p.agent_id, key=k), None) for k in op.keys]
    return []


def _memory_change(memory: Memory) -> Change:
    if memory.archived:
        kind = ChangeKind.MEMORY_ARCHIVED
    elif memory.version <= 1:
        kind = ChangeKind.MEMORY_CREATED
    else:
        kind = ChangeKind.MEMORY_UPDATED
    memory.vector = None  # decoded for this read alone; a watcher gets no vectors
    return Change(kind, memory.agent_id, memory_id=memory.id, memory=memory)
