"""Mutations as write-ahead log entries: what they are and how they are encoded.

An entry is a list of operations applied in order (a transaction is several). The
encoding is msgpack; vectors travel as raw little-endian float32 bytes, instants as
microseconds since the epoch (UTC). Every operation is idempotent when replayed in
order: upserts by id, puts by (kind, key), deletes of absent ids or keys are no-ops.

An entry may also carry the audit events of the calls whose writes it holds (an item
``{"o": "audit", "e": [JSON line, ...]}``, first): they are durable with the entry
(security/admission.py). Entries of older daemons have none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgpack  # type: ignore[import-untyped]

from memoryd.domain.models import (
    Memory,
    Partition,
    SecurityLevel,
)
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import PartitionUpsert, Store, upsert_many
from memoryd.storage.memory_codec import (
    memory_doc,
    memory_from_doc,
    record_doc,
    record_from_doc,
)
from memoryd.storage.records import RecordStore, put_records_many

OpKind = Literal["upsert", "delete", "put_records", "delete_records"]


@dataclass(frozen=True, slots=True)
class Op:
    kind: OpKind
    partition: Partition
    memories: tuple[Memory, ...] = ()
    ids: tuple[str, ...] = ()
    records: tuple[Record, ...] = ()
    record_kind: RecordKind | None = None
    keys: tuple[str, ...] = ()
    #: A delete's security levels, one per id (``delete``) or key (``delete_records``)
    #: as stored when it was deleted; None where unknown (not stored, or not read: a
    #: transaction's delete). The change feed hides a deletion above a watcher's
    #: clearance like a read hides the item (docs/watch.md); entries of older daemons
    #: have none.
    levels: tuple[SecurityLevel | None, ...] = ()

    def level_at(self, index: int) -> SecurityLevel | None:
        """The level of the ``index``-th id or key deleted (None: unknown)."""
        return self.levels[index] if index < len(self.levels) else None


#: The operation name of the item holding an entry's audit events.
AUDIT = "audit"


def encode(ops: Sequence[Op], audit: Sequence[str] = ()) -> bytes:
    """One entry: ``ops`` in order, and ``audit`` (events' JSON lines) when given."""
    out: list[dict[str, Any]] = [{"o": AUDIT, "e": list(audit)}] if audit else []
    for op in ops:
        item: dict[str, Any] = {"o": op.kind, "p": [op.partition.tenant_id, op.partition.agent_id]}
        if op.kind == "upsert":
            item["m"] = [memory_doc(m) for m in op.memories]
        elif op.kind == "delete":
            item["i"] = list(op.ids)
        elif op.kind == "put_records":
            item["r"] = [record_doc(r) for r in op.records]
        else:
            assert op.record_kind is not None
            item["rk"] = op.record_kind.value
            item["k"] = list(op.keys)
        if op.levels:
            item["l"] = [None if level is None else int(level) for level in op.levels]
        out.append(item)
    try:
        packed: bytes = msgpack.packb(out, use_bin_type=True)
    except OverflowError as exc:  # an integer in a memory's metadata past 64 bits
        raise ValueError(f"a number cannot be logged: {exc}") from None
    return packed


def partition_marker(tenant_id: str, agent_id: str | None = None) -> bytes:
    """Bytes every entry with an operation on the agent's partition (None: on any of
    the tenant's) contains: how its partition is encoded. An entry without them has
    no operation there and need not be decoded (the change feed skips it)."""
    if agent_id is None:
        tenant: bytes = msgpack.packb(tenant_id, use_bin_type=True)
        return b"\x92" + tenant  # the start of [tenant, agent]
    marker: bytes = msgpack.packb([tenant_id, agent_id], use_bin_type=True)
    return marker


def decode(payload: bytes) -> list[Op]:
    """The operations of an entry."""
    return decode_entry(payload)[0]


def decode_entry(payload: bytes) -> tuple[list[Op], list[str]]:
    """The operations of an entry and the audit events it carries."""
    ops = []
    audit: list[str] = []
    for item in msgpack.unpackb(payload, raw=False, strict_map_key=False):
        kind = item["o"]
        if kind == AUDIT:
            audit.extend(str(line) for line in item["e"])
            continue
        partition = Partition(item["p"][0], item["p"][1])
        if kind == "upsert":
            ops.append(Op(kind, partition, memories=tuple(memory_from_doc(d) for d in item["m"])))
        elif kind == "delete":
            ops.append(Op(kind, partition, ids=tuple(item["i"]), levels=_levels(item)))
        elif kind == "put_records":
            ops.append(Op(kind, partition, records=tuple(record_from_doc(r) for r in item["r"])))
        elif kind == "delete_records":
            rk, keys = RecordKind(item["rk"]), tuple(item["k"])
            ops.append(Op(kind, partition, record_kind=rk, keys=keys, levels=_levels(item)))
        else:
            raise ValueError(f"unknown write-ahead log operation {kind!r}")
    return ops, audit


def _levels(item: dict[str, Any]) -> tuple[SecurityLevel | None, ...]:
    return tuple(None if v is None else SecurityLevel(v) for v in item.get("l", ()))


#: Memories, ids, records or keys merged into one store call by ``plan_calls`` (a replay of
#: 10k logged Remembers makes a few calls of this size, not 10k commits).
MAX_CALL_ITEMS = 4096


def size(op: Op) -> int:
    """Memories, ids, records or keys ``op`` carries."""
    return len(op.memories) + len(op.ids) + len(op.records) + len(op.keys)


def _merged(last: Op, op: Op) -> Op | None:
    """``last`` and ``op`` (the next operation on the same partition) as one store
    call, when they are of one kind (later writes of the same id or key win)."""
    if last.kind != op.kind or size(last) + size(op) > MAX_CALL_ITEMS:
        return None
    if op.kind == "upsert":
        by_id = {m.id: m for m in (*last.memories, *op.memories)}
        return Op("upsert", op.partition, memories=tuple(by_id.values()))
    if op.kind == "delete":
        ids, levels = _merged_levels(last, op, last.ids, op.ids)
        return Op("delete", op.partition, ids=ids, levels=levels)
    if op.kind == "put_records":
        by_key = {(r.kind, r.key): r for r in (*last.records, *op.records)}
        return Op("put_records", op.partition, records=tuple(by_key.values()))
    if last.record_kind == op.record_kind:
        keys, levels = _merged_levels(last, op, last.keys, op.keys)
        return Op(
            "delete_records", op.partition, record_kind=op.record_kind, keys=keys, levels=levels
        )
    return None


def _merged_levels(
    last: Op, op: Op, before: tuple[str, ...], after: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[SecurityLevel | None, ...]]:
    """Two deletes' ids (or keys) as one, each once where it came first, with the
    level either of them knew."""
    merged: dict[str, SecurityLevel | None] = {}
    for source, names in ((last, before), (op, after)):
        for index, name in enumerate(names):
            level = source.level_at(index)
            merged[name] = merged.get(name) if level is None else level
    return tuple(merged), tuple(merged.values())


#: Which store an operation writes: memories, or records. Their rows are independent.
_LANE = {
    "upsert": "memories",
    "delete": "memories",
    "put_records": "records",
    "delete_records": "records",
}


@dataclass(frozen=True, slots=True)
class StoreCall:
    """One store call of an apply: operations of one kind, one per partition, with
    the indices (into the planned list) of the logged operations each covers."""

    ops: tuple[Op, ...]
    covers: tuple[tuple[int, ...], ...]

    @property
    def indices(self) -> list[int]:
        return [i for covered in self.covers for i in covered]


def plan_calls(ops: Sequence[Op]) -> list[StoreCall]:
    """The store calls that apply ``ops`` (in log order). Each partition's memory
    writes and record writes are two lanes whose order is kept; adjacent operations of
    one kind in a lane merge into one (at most MAX_CALL_ITEMS). The lanes' k-th calls
    are independent of each other (different rows or different stores), so they are
    made together: upserts of every partition as one multi-partition upsert, record
    puts as one put; deletes one per partition. A burst of writes from many agents,
    keyed writes included (a key's records, then its mirror), costs a few store
    commits instead of a few per agent (issue 31: each LanceDB commit is a table
    version, and interleaved kinds made every SetMemory two commits of its own)."""
    lanes: dict[tuple[Partition, str], list[tuple[list[int], Op]]] = {}
    for index, op in enumerate(ops):
        mine = lanes.setdefault((op.partition, _LANE[op.kind]), [])
        merged = _merged(mine[-1][1], op) if mine else None
        if merged is None:
            mine.append(([index], op))
        else:
            mine[-1][0].append(index)
            mine[-1] = (mine[-1][0], merged)
    depth = max((len(calls) for calls in lanes.values()), default=0)
    out: list[StoreCall] = []
    for k in range(depth):
        wave = [calls[k] for calls in lanes.values() if k < len(calls)]
        for kind in ("upsert", "put_records"):
            together: list[tuple[list[int], Op]] = []
            for indices, op in (call for call in wave if call[1].kind == kind):
                if together and sum(size(o) for _, o in together) + size(op) > MAX_CALL_ITEMS:
                    out.append(_call(together))
                    together = []
                together.append((indices, op))
            if together:
                out.append(_call(together))
        out.extend(
            StoreCall((op,), (tuple(indices),))
            for indices, op in wave
            if op.kind not in ("upsert", "put_records")
        )
    return out


def _call(together: list[tuple[list[int], Op]]) -> StoreCall:
    return StoreCall(tuple(op for _, op in together), tuple(tuple(i) for i, _ in together))


async def apply_call(call: StoreCall, store: Store, records: RecordStore) -> None:
    """Make one planned store call."""
    if len(call.ops) == 1:
        await apply(call.ops[0], store, records)
    elif call.ops[0].kind == "upsert":
        await upsert_many(store, [PartitionUpsert(op.partition, op.memories) for op in call.ops])
    else:
        await put_records_many(records, [(op.partition, op.records) for op in call.ops])


async def apply(op: Op, store: Store, records: RecordStore) -> None:
    """Apply ``op`` to the store (memories) or the record store it is for."""
    if op.kind == "upsert":
        await store.upsert(op.partition, op.memories)
    elif op.kind == "delete":
        await store.delete(op.partition, op.ids)
    elif op.kind == "put_records":
        await records.put_records(op.partition, op.records)
    else:
        assert op.record_kind is not None
        await records.delete_records(op.partition, op.record_kind, op.keys)
