"""The changes of one log entry, in the entry's order (docs/watch.md: the table).

Every change carries the security level it was written at (``Found.level``): a
memory's or a key's own, the level a deletion logged for what it deleted, or for a
keyed transaction's mirror deletion (not read before it was deleted) the level of the
key written with it. What stays unknown (entries of older daemons) counts as the
highest level. ``visible_to`` is the one rule every change passes before a watcher
gets it.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.domain.changes import Change, ChangeKind
from memoryd.domain.keyed import level_of
from memoryd.domain.models import Memory, Partition, SecurityLevel
from memoryd.domain.principal import CallScope
from memoryd.domain.records import RecordKind
from memoryd.durability.changes import LoggedEntry
from memoryd.durability.ops import Op
from memoryd.service.changes.state_events import STATE_LEVEL, state_deleted, state_written
from memoryd.service.keyed.docs import decoded_entry

#: The level of a change whose level is not known: only the highest clearance sees it.
UNKNOWN_LEVEL = max(SecurityLevel)


@dataclass(frozen=True, slots=True)
class Found:
    """One change of an entry, with where it happened and the security level of what
    it changed."""

    partition: Partition
    change: Change
    level: SecurityLevel


def visible_to(scope: CallScope, tenant_wide: bool, found: Found) -> bool:
    """Whether the caller may learn of ``found`` at all: its tenant, its agent (or any
    of the tenant's for a tenant-wide watch), at most its clearance, for every kind
    of change alike (a deletion of what it may not read is not even shown to have
    happened)."""
    partition = found.partition
    if partition.tenant_id != scope.partition.tenant_id:
        return False
    if not tenant_wide and partition.agent_id != scope.partition.agent_id:
        return False
    return found.level <= scope.clearance


def changes_of(entry: LoggedEntry) -> list[Found]:
    """Every change of ``entry``, whoever may see it: a cursor counts into this list,
    so it must not depend on the caller. A session changed by several records of one
    entry (its record, a message, an attachment) is one SESSION_UPDATED."""
    written_keys = _key_levels(entry.ops)
    out: list[Found] = []
    sessions: set[tuple[Partition, str]] = set()
    for op in entry.ops:
        for found in _of_op(op, written_keys.get(op.partition)):
            change = found.change
            if change.kind is ChangeKind.SESSION_UPDATED:
                if (found.partition, change.session_id) in sessions:
                    continue
                sessions.add((found.partition, change.session_id))
            out.append(found)
    return out


def _key_levels(ops: list[Op]) -> dict[Partition, SecurityLevel]:
    """The highest level of the keys each partition's operations write in the entry: a
    keyed transaction (one key and its mirror memory) deletes the mirror without
    reading it, and the mirror is at its key's level."""
    out: dict[Partition, SecurityLevel] = {}
    for op in ops:
        for record in op.records:
            if record.kind is RecordKind.KEY:
                out[op.partition] = max(
                    out.get(op.partition, SecurityLevel.PUBLIC), level_of(record)
                )
    return out


def _of_op(op: Op, key_level: SecurityLevel | None) -> list[Found]:
    p = op.partition
    if op.kind == "upsert":
        return [Found(p, _memory_change(m), m.security_level) for m in op.memories]
    if op.kind == "delete":
        return [
            Found(
                p,
                Change(ChangeKind.MEMORY_DELETED, p.agent_id, memory_id=i),
                op.level_at(index) or key_level or UNKNOWN_LEVEL,
            )
            for index, i in enumerate(op.ids)
        ]
    if op.kind == "put_records":
        return _of_put(op)
    if op.record_kind is RecordKind.KEY:
        return [
            Found(
                p,
                Change(ChangeKind.KEY_DELETED, p.agent_id, key=k),
                op.level_at(index) or UNKNOWN_LEVEL,
            )
            for index, k in enumerate(op.keys)
        ]
    assert op.record_kind is not None
    return [
        Found(p, change, STATE_LEVEL)
        for k in op.keys
        if (change := state_deleted(p.agent_id, op.record_kind, k)) is not None
    ]


def _of_put(op: Op) -> list[Found]:
    """The changes of a record put: keys set or tombstoned, and agent state written."""
    p, out = op.partition, []
    for record in op.records:
        if record.kind is not RecordKind.KEY:
            written = state_written(p.agent_id, record)
            if written is not None:
                out.append(Found(p, written, STATE_LEVEL))
            continue
        entry = decoded_entry(record)
        if entry is not None:
            kind = ChangeKind.KEY_SET if entry.valid else ChangeKind.KEY_DELETED
            change = Change(kind, p.agent_id, key=entry.key, key_entry=entry)
            out.append(Found(p, change, level_of(record)))
    return out


def _memory_change(memory: Memory) -> Change:
    if memory.archived:
        kind = ChangeKind.MEMORY_ARCHIVED
    elif memory.version <= 1:
        kind = ChangeKind.MEMORY_CREATED
    else:
        kind = ChangeKind.MEMORY_UPDATED
    memory.vector = None  # decoded for this read alone; a watcher gets no vectors
    return Change(kind, memory.agent_id, memory_id=memory.id, memory=memory)
