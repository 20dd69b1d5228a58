"""Remember-time deduplication: a new memory that repeats an existing one updates it.

A new memory is a duplicate of a *candidate* when both are in the same partition and
namespace, at the same security level, the candidate is live (not archived, not
expired), is not a keyed memory (a key owns its slot), and either

- exact: their contents are equal after NFKC, casefolding and whitespace collapsing
  (``memoryd.text.content_hash``), or
- near: the cosine similarity of their vectors is at least ``dedup.threshold``.

Candidates are looked up with the caller's clearance as the ceiling *and* must be at
the new memory's own level, so a deduplication never touches, or reveals, a memory
the caller cannot read, and never moves content across levels.

The candidate is updated in place (``merge``): same id, version + 1, newest content
and vector, union of tags, maximum importance and confidence, merged metadata, the
later expiry, the earlier creation time and the newer event time when it has one.
``supersedes`` is left alone: no memory was replaced. The replaced content and version are kept under the metadata key
``memoryd:dedup`` (with a count of absorbed duplicates).

Items of one batch collapse into each other the same way. Concurrent writes to one
partition plan under a per-partition lock and see each other's not yet committed
states, so two racing Remembers of the same text make one memory, not two.

A merge is a read-modify-write: the plan says which version of each memory it merged
into (``Plan.expected``) and the write is conditional on it (Store.upsert_if), so an
update landing between the lookup and the write makes the Remember plan again
instead of being overwritten. A merge into another request's uncommitted state waits
for that request (``Plan.settled``): if it did not commit, the state it merged into
never existed, and this plan starts over too.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memoryd.config import DedupSettings
from memoryd.domain import json_text
from memoryd.domain.limits import next_version
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    Partition,
    SecurityLevel,
    VectorHit,
    unit_queries,
)
from memoryd.domain.principal import CallScope
from memoryd.service.common.locks import KeyedLocks
from memoryd.storage.base import Nearest, Store
from memoryd.text import content_hash

#: Metadata key recording what deduplication replaced.
DEDUP_METADATA_KEY = "memoryd:dedup"
#: Nearest stored neighbours examined per new memory for a near-duplicate.
NEAR_CANDIDATES = 4
#: Batches up to this size get the one-product duplicate check (a B x B block).
_QUIET_CHECK_MAX = 2048

_Key = tuple[str, SecurityLevel, str]


def _key(m: Memory) -> _Key:
    return (m.namespace, m.security_level, content_hash(m.content))


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later expiry; None (never expires) wins."""
    return None if a is None or b is None else max(a, b)


def merge(base: Memory, new: Memory) -> Memory:
    """``base`` updated by its duplicate ``new`` (see the module docstring)."""
    record = dict(base.metadata.get(DEDUP_METADATA_KEY) or {})
    record["count"] = int(record.get("count", 0)) + 1
    if new.content != base.content:
        record["previous_content"] = base.content
        record["previous_version"] = base.version
    metadata = {**base.metadata, **new.metadata, DEDUP_METADATA_KEY: record}
    return dataclasses.replace(
        base,
        content=new.content,
        vector=new.vector,
        embedding_model=new.embedding_model,
        embedding_dimension=new.embedding_dimension,
        tags=tuple(dict.fromkeys((*base.tags, *new.tags))),
        importance=max(base.importance, new.importance),
        confidence=max(base.confidence, new.confidence),
        metadata=metadata,
        # Each side's members as their writer spelled them (the record is re-spelled).
        metadata_json=json_text.merge_objects(base.metadata_text(), new.metadata_text()),
        source=new.source or base.source,
        occurred_at=new.occurred_at or base.occurred_at,
        expires_at=_later(base.expires_at, new.expires_at),
        created_at=min(base.created_at, new.created_at),
        updated_at=max(base.updated_at, new.updated_at),
        version=next_version(base.version),
    )


@dataclass(slots=True)
class Plan:
    """What one Remember(Batch) writes: each id once, in its final state."""

    writes: list[Memory]
    #: Per request item: the id its memory has, and whether it was a duplicate.
    items: list[tuple[str, bool]]
    new_count: int
    #: The version of each memory a duplicate was merged into, as the merge read it.
    expected: dict[str, int | None] = field(default_factory=dict)
    #: Whether the other requests whose uncommitted states were merged into commit.
    depends: list[asyncio.Future[bool]] = field(default_factory=list)

    async def settled(self) -> bool:
        """Whether every request this plan merged into committed its state."""
        outcomes = [await asyncio.shield(f) for f in dict.fromkeys(self.depends)]
        return all(outcomes)

    def outcomes(self) -> list[tuple[Memory, bool]]:
        """Per request item: the final state of its memory, and whether it was a duplicate."""
        final = {m.id: m for m in self.writes}
        return [(final[memory_id], dup) for memory_id, dup in self.items]


class _States:
    """Memory states a new memory may duplicate besides stored ones: other requests'
    uncommitted writes and this plan's own, looked up by key and by vector."""

    def __init__(self, capacity: int, dimension: int | None) -> None:
        self.by_id: dict[str, Memory] = {}
        self._by_key: dict[_Key, str] = {}
        self._key_of: dict[str, _Key] = {}
        self._row: dict[str, int] = {}
        self._ids: list[str] = []
        self._matrix = (
            None if dimension is None else np.zeros((capacity, dimension), dtype=np.float32)
        )

    def put(self, m: Memory, key: _Key | None = None) -> None:
        self.by_id[m.id] = m
        if m.key:
            return
        old = self._key_of.get(m.id)
        if old is not None and self._by_key.get(old) == m.id:
            del self._by_key[old]
        key = key or _key(m)
        self._key_of[m.id] = key
        self._by_key[key] = m.id
        if self._matrix is not None and m.vector is not None:
            row = self._row.get(m.id)
            if row is None:
                row = self._row[m.id] = len(self._ids)
                self._ids.append(m.id)
            self._matrix[row] = m.vector

    def any_close(self, vectors: npt.NDArray[np.float32], threshold: float) -> bool:
        """Whether any of ``vectors`` is at or above ``threshold`` to a state held now
        or to another of them: one product answers the common case (no duplicate at
        all) that otherwise costs a lookup per memory. Too big a batch says "maybe"."""
        if self._matrix is None or len(vectors) > _QUIET_CHECK_MAX:
            return True
        held = self._matrix[: len(self._ids)]
        if len(held) and float((vectors @ held.T).max()) >= threshold:
            return True
        if len(vectors) < 2:
            return False
        own = vectors @ vectors.T
        np.fill_diagonal(own, -np.inf)
        return float(own.max()) >= threshold

    def exact(self, key: _Key) -> Memory | None:
        memory_id = self._by_key.get(key)
        return None if memory_id is None else self.by_id[memory_id]

    def nearest(self, new: Memory, threshold: float) -> tuple[float, Memory] | None:
        if self._matrix is None or not self._ids:
            return None
        sims = self._matrix[: len(self._ids)] @ np.asarray(new.vector, dtype=np.float32)
        best: tuple[float, Memory] | None = None
        for row in np.flatnonzero(sims >= threshold):
            state = self.by_id[self._ids[row]]
            if _eligible(state, new):
                best = _better(best, float(sims[row]), state)
        return best


@dataclass(slots=True)
class _Pending:
    """Uncommitted memory states of one partition: what concurrent planners see."""

    by_id: dict[str, Memory] = field(default_factory=dict)
    #: The outcome of the request writing each state: True once it committed.
    owner: dict[str, asyncio.Future[bool]] = field(default_factory=dict)


class Deduplicator:
    def __init__(self, store: Store, settings: DedupSettings, *, dimension: int) -> None:
        self._store = store
        self._settings = settings
        #: Of the stores' vectors (the embedder's): new memories' are searched with.
        self._dimension = dimension
        self._locks = KeyedLocks()
        self._pending: dict[Partition, _Pending] = {}

    @property
    def enabled(self) -> bool:
        return self._settings.enabled

    @property
    def _near(self) -> bool:
        return 0 < self._settings.threshold <= 1

    @asynccontextmanager
    async def plan(
        self, scope: CallScope, memories: Sequence[Memory], now: datetime
    ) -> AsyncIterator[Plan]:
        """Resolve duplicates for ``memories`` (new records, with vectors). Their final
        states stay visible to concurrent planners until the block exits, so write
        them inside it."""
        partition = scope.partition
        outcome: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        async with self._locks.hold(partition):
            pending = self._pending.setdefault(partition, _Pending())
            try:
                plan = await self._resolve(scope, memories, now, pending)
            except BaseException:
                if not pending.by_id:
                    del self._pending[partition]
                raise
            for m in plan.writes:
                pending.by_id[m.id] = m
                pending.owner[m.id] = outcome
        committed = False
        try:
            yield plan
            committed = True
        finally:
            outcome.set_result(committed)
            for m in plan.writes:
                if pending.by_id.get(m.id) is m:
                    del pending.by_id[m.id]
                    del pending.owner[m.id]
            if not pending.by_id and self._pending.get(partition) is pending:
                del self._pending[partition]

    async def _resolve(
        self, scope: CallScope, memories: Sequence[Memory], now: datetime, pending: _Pending
    ) -> Plan:
        keys = [_key(m) for m in memories]
        live = MemoryFilter(max_security_level=scope.clearance, not_expired_at=now)
        exact = self._store.find_by_content(scope.partition, list({key[2] for key in keys}), live)
        near: list[list[VectorHit]] | None = None
        if self._near and self._store.capabilities.shared:
            # A server other replicas share: both lookups in one round trip. (An
            # embedded store answers in place; planning stays one step there, which
            # keeps concurrent Remembers' writes coalescing into few commits.)
            found, near = await asyncio.gather(exact, self._near_candidates(scope, memories, live))
        else:
            found = await exact
            near = await self._near_candidates(scope, memories, live) if self._near else None
        stored: dict[_Key, Memory] = {}
        # Oldest first, so a pre-existing pile of duplicates always feeds the same one.
        for m in sorted(found, key=lambda m: (m.created_at, m.id)):
            if not m.key:
                stored.setdefault(_key(m), m)

        dimension = None
        if near is not None and memories:
            dimension = int(np.asarray(memories[0].vector).shape[0])
        states = _States(len(pending.by_id) + len(memories), dimension)
        for m in pending.by_id.values():
            states.put(m)
        # Without any duplicate (exact or near, stored or in flight) no state changes
        # while planning, so no memory can have a near twin among the states: one
        # check for the whole batch replaces a lookup per memory.
        quiet = (
            near is not None
            and not any(near)
            and len(set(keys)) == len(keys)
            and not any(states.exact(key) or key in stored for key in keys)
            and not states.any_close(
                np.asarray([m.vector for m in memories], dtype=np.float32),
                self._settings.threshold,
            )
        )
        writes: dict[str, Memory] = {}  # this plan's, by id, in first-write order
        items: list[tuple[str, bool]] = []
        expected: dict[str, int | None] = {}
        depends: list[asyncio.Future[bool]] = []
        for i, (m, key) in enumerate(zip(memories, keys, strict=True)):
            target = states.exact(key) or stored.get(key)
            if target is None and near is not None and not quiet:
                target = self._nearest(m, near[i], states)
            if target is None:
                writes[m.id] = m
                states.put(m, key)
                items.append((m.id, False))
                continue
            base = states.by_id.get(target.id, target)
            if target.id not in writes:  # the first merge into it reads it
                expected[target.id] = base.version
                if target.id in pending.owner:
                    depends.append(pending.owner[target.id])
            writes[target.id] = merged = merge(base, m)
            states.put(merged)
            items.append((target.id, True))
        new_count = sum(1 for _, dup in items if not dup)
        return Plan(list(writes.values()), items, new_count, expected, depends)

    def _nearest(self, m: Memory, stored: list[VectorHit], states: _States) -> Memory | None:
        threshold = self._settings.threshold
        best = states.nearest(m, threshold)
        for hit in stored:
            if hit.similarity >= threshold and _eligible(hit.memory, m):
                best = _better(best, hit.similarity, hit.memory)
        return None if best is None else best[1]

    async def _near_candidates(
        self, scope: CallScope, memories: Sequence[Memory], live: MemoryFilter
    ) -> list[list[VectorHit]]:
        """Stored nearest neighbours of each new memory, one batched search per namespace."""
        out: list[list[VectorHit]] = [[] for _ in memories]
        by_namespace: dict[str, list[int]] = {}
        for i, m in enumerate(memories):
            by_namespace.setdefault(m.namespace, []).append(i)
        for namespace, indexes in by_namespace.items():
            ceiling = max(memories[i].security_level for i in indexes)
            flt = dataclasses.replace(
                live, namespace=namespace, max_security_level=min(ceiling, scope.clearance)
            )
            vectors = unit_queries([memories[i].vector for i in indexes], self._dimension)
            best = Nearest(NEAR_CANDIDATES, min_similarity=self._settings.threshold)
            found = await self._store.search_many(scope.partition, vectors, flt, best)
            for i, hits in zip(indexes, found, strict=True):
                out[i] = hits
        return out


def _eligible(candidate: Memory, new: Memory) -> bool:
    return (
        candidate.id != new.id
        and not candidate.key
        and candidate.namespace == new.namespace
        and candidate.security_level == new.security_level
    )


def _better(
    best: tuple[float, Memory] | None, similarity: float, memory: Memory
) -> tuple[float, Memory]:
    if best is None or similarity > best[0]:
        return (similarity, memory)
    return best
