"""``Store.upsert_if`` on Qdrant, decided by the server among every replica.

Qdrant's conditional upsert judges each point on its own (insert only where absent,
update only where a filter matches) and does not say which points it wrote. So a
call here

1. reads the expected points (their versions, statistics, vectors and latest write
   ids) and answers at once if one has moved on;
2. writes the expected memories in one request per mode, each conditioned on its own
   version and access count (an update) or on its absence (an insert), all carrying
   one fresh write id;
3. reads them back: a point was written iff the write id is in the ids of its latest
   writes (``LINEAGE``, as records keep them: storage/qdrant/records.py);
4. deletes the expected ids to delete, each still at its version, and reads them back;
5. when every part landed, writes the unconditioned memories (new ids); otherwise
   takes back what did land (each point only while it still holds this write: a
   writer that built on it keeps its change) and reports the ids that moved.

Step 1 makes a partial landing rare (a write must get in between two requests); step
5 keeps the call all or nothing when one happens anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from qdrant_client import models

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import Memory, Partition
from memoryd.storage.conditional import ConditionalWrite, Counters, Expected, moved, with_counters
from memoryd.storage.qdrant.engine import Engine
from memoryd.storage.qdrant.filters import has_ids, match, scoped, value_range
from memoryd.storage.qdrant.schema import (
    LINEAGE,
    LINEAGE_LENGTH,
    WRITE_ID,
    in_partition,
    memory_from_point,
    memory_point_id,
)
from memoryd.storage.records import new_write_id

ToPoint = Callable[[Memory], models.PointStruct]


@dataclass(frozen=True, slots=True)
class _Stored:
    memory: Memory
    #: Ids of the point's latest conditional writes, oldest first.
    lineage: tuple[str, ...]


@dataclass(slots=True)
class _Call:
    """One ``upsert_if`` call's state, for the steps above."""

    engine: Engine
    name: str
    partition: Partition
    to_point: ToPoint
    write_id: str
    before: dict[str, _Stored]

    def point(self, memory: Memory, lineage: Sequence[str], write_id: str) -> models.PointStruct:
        point = self.to_point(memory)
        assert point.payload is not None
        point.payload[WRITE_ID] = write_id
        point.payload[LINEAGE] = [*lineage, write_id][-LINEAGE_LENGTH:]
        return point

    def lineage(self, memory_id: str) -> tuple[str, ...]:
        stored = self.before.get(memory_id)
        return () if stored is None else stored.lineage

    def ids(self, memory_ids: Sequence[str]) -> list[str]:
        return [memory_point_id(self.partition, i) for i in memory_ids]


async def upsert_if(
    engine: Engine, name: str, to_point: ToPoint, write: ConditionalWrite
) -> list[str]:
    """The steps of the module docstring; ``write.memories`` are checked and unique."""
    partition, expected, delete = write.partition, write.expected, write.delete
    before = await _read(engine, name, partition, list(expected))
    conflicts = moved(expected, {i: s.memory.version for i, s in before.items()})
    if conflicts:
        return conflicts
    call = _Call(engine, name, partition, to_point, new_write_id(), before)
    counters = {i: Counters.of(s.memory) for i, s in before.items()}
    kept = with_counters(write.memories, expected, counters)
    conditioned = [m for m in kept if m.id in expected]
    await _write_conditioned(call, conditioned, expected)
    landed, lost = await _confirm(call, [m.id for m in conditioned])
    deleted: list[str] = []
    if not lost and delete:
        deleted, lost = await _delete(call, {i: expected[i] for i in delete})
    if lost:
        await _take_back(call, landed, deleted)
        return lost
    plain = [call.to_point(m) for m in kept if m.id not in expected]
    if plain:
        await engine.upsert(name, plain)
    return []


async def _read(
    engine: Engine, name: str, partition: Partition, memory_ids: Sequence[str]
) -> dict[str, _Stored]:
    """The stored points of ``memory_ids`` in ``partition``, with their vectors."""
    if not memory_ids:
        return {}
    found: dict[str, _Stored] = {}
    point_ids = [memory_point_id(partition, i) for i in memory_ids]
    for point in await engine.retrieve(name, point_ids, with_vectors=True):
        if in_partition(point.payload, partition):
            assert point.payload is not None
            memory = memory_from_point(point.payload, point.vector)
            writes = point.payload.get(LINEAGE)
            lineage = tuple(str(i) for i in writes) if isinstance(writes, list) else ()
            found[memory.id] = _Stored(memory, lineage)
    return found


def _at_versions(
    call: _Call, versions: Mapping[str, int | None], *, counted: bool = False
) -> models.Filter:
    """Points of ``versions``' ids, each only while at its version (and, ``counted``,
    at the access count read: a flush of access statistics landing in between would
    otherwise be overwritten by the count this write kept; the caller reads again)."""
    each: list[models.Condition] = []
    for memory_id, version in versions.items():
        conditions: list[models.Condition] = [
            has_ids(call.ids([memory_id])),
            value_range("version", gte=version, lte=version),
        ]
        if counted:
            count = call.before[memory_id].memory.access_count
            conditions.append(value_range("access_count", gte=count, lte=count))
        each.append(models.Filter(must=conditions))
    return models.Filter(must=scoped(call.partition).must, should=each)


async def _write_conditioned(call: _Call, memories: Sequence[Memory], expected: Expected) -> None:
    inserts = [m for m in memories if expected[m.id] is None]
    updates = [m for m in memories if expected[m.id] is not None]
    if inserts:
        points = [call.point(m, (), call.write_id) for m in inserts]
        await call.engine.upsert_if(call.name, points, None)
    if updates:
        points = [call.point(m, call.lineage(m.id), call.write_id) for m in updates]
        condition = _at_versions(call, {m.id: expected[m.id] for m in updates}, counted=True)
        await call.engine.upsert_if(call.name, points, condition)


async def _confirm(call: _Call, memory_ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """(written, not written) of ``memory_ids``, from the ids of their latest writes."""
    after = await _read(call.engine, call.name, call.partition, memory_ids)
    landed: list[str] = []
    lost: list[str] = []
    for memory_id in memory_ids:
        stored = after.get(memory_id)
        lineage = () if stored is None else stored.lineage
        if call.write_id in lineage:
            landed.append(memory_id)
            continue
        lost.append(memory_id)
        previous = call.lineage(memory_id)
        # Every write since the state read is listed while that state's own id still
        # is (or while the list is not full): then this one is not among them.
        if len(lineage) >= LINEAGE_LENGTH and (not previous or previous[-1] not in lineage):
            raise Unavailable(
                f"memory {memory_id!r}: {LINEAGE_LENGTH} writes raced this one; it may or "
                "may not have been applied (read it before writing again)"
            )
    return landed, lost


async def _delete(call: _Call, versions: Mapping[str, int | None]) -> tuple[list[str], list[str]]:
    """Delete each id still at its version: (deleted, still there)."""
    await call.engine.delete(call.name, _at_versions(call, versions))
    left = await _read(call.engine, call.name, call.partition, list(versions))
    return [i for i in versions if i not in left], [i for i in versions if i in left]


async def _take_back(call: _Call, landed: Sequence[str], deleted: Sequence[str]) -> None:
    """Undo the parts of a call that landed while another did not: a written point
    goes back to what it held (or away, if it was new) while it still holds this
    call's write; a deleted one comes back unless its id was taken meanwhile."""
    undo_id = new_write_id()
    restored = [i for i in landed if i in call.before]
    inserted = [i for i in landed if i not in call.before]
    ours = match(WRITE_ID, call.write_id)
    if inserted:
        await call.engine.delete(
            call.name, scoped(call.partition, has_ids(call.ids(inserted)), ours)
        )
    if restored:
        points = [
            call.point(call.before[i].memory, (*call.lineage(i), call.write_id), undo_id)
            for i in restored
        ]
        condition = scoped(call.partition, has_ids(call.ids(restored)), ours)
        await call.engine.upsert_if(call.name, points, condition)
    if deleted:
        points = [call.point(call.before[i].memory, call.lineage(i), undo_id) for i in deleted]
        await call.engine.upsert_if(call.name, points, None)
