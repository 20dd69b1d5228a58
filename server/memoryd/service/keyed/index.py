"""The default-read index: each partition's valid keys, ranked without reading them all.

Ranking (DefaultRead, docs/guide.md "Default read")::

    score = w_r * 2^(-age / half_life) + w_i * importance + w_t * overlap

``age`` counts from the key's last write, ``importance`` is the content's (0..1,
0.5 when unset), ``overlap`` the share of the request's tags the content carries (0
without request tags). With the defaults (0.6, 0.25, 0.15, half-life 24 h) recency
leads: a day's difference (0.3) outweighs any importance difference, but among keys
written within hours of each other importance and tags decide.

Index. Per partition, every valid key sits in one time-ordered list: the list of its
(tag set, security level, importance rounded to a hundredth). Everything in a list
shares its tag overlap with any request and its importance to a hundredth, so the
newest entry bounds the score of the whole list; a read merges the lists best bound
first and yields a key once no unread entry can beat it (the threshold algorithm).
With importances in hundredths (the 0-10 scale and 0.1 steps included) it scores
about as many keys as it returns, plus one list head per distinct (tag set, level,
importance): that count, not the number of keys, is the per-read overhead. A read under a
prefix scores the keys of that subtree only (a sorted key list).

Each entry also holds what its line shows (type, summary, and the content's JSON
text when it is at most ``CACHED_CONTENT_BYTES``), so a read touches the store only
for bigger contents.

The index is fed by the keyed service's writes (a KeyObserver), loaded from the
store on first use and dropped when lifecycle operations rewrite the partition's
keys. On a store other processes may write to (Qdrant: replicas), each read first
checks the partition's version counter in the store and reloads on a difference; on
LanceDB the data directory has one writer (its lock), this process, and the check is
skipped.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import math
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass
from datetime import UTC, datetime, timedelta

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.config import LimitsSettings
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Clock, Partition, Provenance, SecurityLevel, utcnow
from memoryd.domain.records import RecordKind
from memoryd.service.common import scanning
from memoryd.service.common.undecodable import decodable
from memoryd.service.common.validation import Violations
from memoryd.service.keyed.docs import COUNTER_KEY, entry_from, mirror_fields
from memoryd.storage.records import RecordStore

log = structlog.get_logger(__name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Importance buckets: hundredths.
_BUCKETS = 100
#: Records per store read while loading (a page costs about the same at 1,000 or
#: 10,000 on LanceDB, which sorts the key range for each).
LOAD_BATCH = 10_000
#: Contents up to this many bytes of JSON text are kept in the index.
CACHED_CONTENT_BYTES = 1024
_SPACE = re.compile(r"\s+")
ELLIPSIS = "…"


def micros(when: datetime) -> int:
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@dataclass(frozen=True, slots=True)
class Ranking:
    """The weights of the default-read score and the recency half-life."""

    recency_weight: float = 0.6
    importance_weight: float = 0.25
    tag_weight: float = 0.15
    half_life_hours: float = 24.0


def one_line(text: str, max_chars: int) -> str:
    """``text`` on one line, whitespace collapsed, cut to ``max_chars`` with "…"."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= max_chars:
        return flat
    return flat[: max_chars - 1].rstrip() + ELLIPSIS


@dataclass(frozen=True, slots=True)
class IndexedKey:
    key: str
    version: int
    #: updated_at in microseconds since the epoch.
    ts: int
    importance: float
    tags: frozenset[str]
    level: int
    #: content.expired_at in microseconds; None: never.
    expires: int | None
    #: The line: the content's own "type" ("" when none) and its summary.
    type: str = ""
    summary: str = ""
    #: The content's JSON text when small (else None: read from the store).
    content_json: str | None = None
    #: The write's source: rendered with the line (tool, web and file content as
    #: quoted data), logged as keyed.docs.source_summary shows it.
    provenance: Provenance | None = None

    @property
    def updated_at(self) -> datetime:
        return _EPOCH + timedelta(microseconds=self.ts)


def indexed(entry: KeyEntry, limits: LimitsSettings, summary_chars: int = 160) -> IndexedKey | None:
    """What the index keeps of an entry; None for a tombstone."""
    if not entry.valid:
        return None
    # Stored content passed validation when written: a reserved field that is
    # unusable here only falls back to its default.
    fields = mirror_fields(entry.content, limits, Violations())
    content = entry.content
    kind = content.get("type") if isinstance(content, dict) else None
    text = entry.content_json
    return IndexedKey(
        key=entry.key,
        version=entry.version,
        ts=micros(entry.updated_at),
        importance=fields.importance,
        tags=frozenset(fields.tags),
        level=int(entry.security_level),
        expires=None if fields.expires_at is None else micros(fields.expires_at),
        type=one_line(kind, 40) if isinstance(kind, str) else "",
        summary=one_line(fields.text, summary_chars),
        content_json=text if len(text.encode("utf-8")) <= CACHED_CONTENT_BYTES else None,
        provenance=entry.source,
    )


def _bucket(importance: float) -> int:
    return min(_BUCKETS, max(0, round(importance * _BUCKETS)))


ListId = tuple[frozenset[str], int, int]  # (tag set, security level, importance bucket)


class PartitionIndex:
    """The ranked index of one partition (see the module docstring)."""

    def __init__(self) -> None:
        self.keys: dict[str, IndexedKey] = {}
        #: Each list: (ts, key) ascending.
        self._lists: dict[ListId, list[tuple[int, str]]] = {}
        self._sorted: list[str] = []
        self._expiry: list[tuple[int, str, int]] = []
        #: The highest version applied (compared with the store's counter).
        self.version = 0
        #: Exact scores the last ranked read computed (its cost, for tests).
        self.scored = 0
        #: Bumped by every change of the lists (a ranking in progress is then stale).
        self.changes = 0

    def __len__(self) -> int:
        return len(self.keys)

    # ------------------------------------------------------------------ updates

    def apply(self, entry: KeyEntry, item: IndexedKey | None) -> None:
        """A write (``item`` None: a tombstone), applied if newer than what is held."""
        old = self.keys.get(entry.key)
        self.version = max(self.version, entry.version)
        if old is not None and old.version >= entry.version:
            return
        if old is not None:
            self._remove(old)
        if item is not None:
            self._add(item)

    def load(self, items: list[IndexedKey], version: int) -> None:
        """Fill an empty index at once (a sort per list instead of an insert per key)."""
        assert not self.keys
        for item in items:
            self.keys[item.key] = item
            self._lists.setdefault(self._list_id(item), []).append((item.ts, item.key))
            if item.expires is not None:
                self._expiry.append((item.expires, item.key, item.version))
        for entries in self._lists.values():
            entries.sort()
        self._sorted = sorted(self.keys)
        heapq.heapify(self._expiry)
        self.version = max(self.version, version)

    @staticmethod
    def _list_id(item: IndexedKey) -> ListId:
        return (item.tags, item.level, _bucket(item.importance))

    def _add(self, item: IndexedKey) -> None:
        self.changes += 1
        self.keys[item.key] = item
        bisect.insort(self._lists.setdefault(self._list_id(item), []), (item.ts, item.key))
        bisect.insort(self._sorted, item.key)
        if item.expires is not None:
            heapq.heappush(self._expiry, (item.expires, item.key, item.version))

    def _remove(self, item: IndexedKey) -> None:
        self.changes += 1
        del self.keys[item.key]
        list_id = self._list_id(item)
        entries = self._lists[list_id]
        del entries[bisect.bisect_left(entries, (item.ts, item.key))]
        if not entries:
            del self._lists[list_id]
        del self._sorted[bisect.bisect_left(self._sorted, item.key)]

    def expire(self, now: int) -> int:
        """Drop keys whose content expired before ``now``; how many went."""
        gone = 0
        while self._expiry and self._expiry[0][0] <= now:
            _, key, version = heapq.heappop(self._expiry)
            item = self.keys.get(key)
            if item is not None and item.version == version:
                self._remove(item)
                gone += 1
        return gone

    # ------------------------------------------------------------------ reads

    def ranked(
        self,
        now: datetime,
        tags: frozenset[str],
        clearance: SecurityLevel,
        prefix: str,
        ranking: Ranking,
    ) -> Iterator[tuple[float, IndexedKey]]:
        """Keys visible at ``clearance``, unexpired at ``now``, under ``prefix``, best
        first (ties: newer, then by key)."""
        scorer = _Scorer(micros(now), tags, ranking)
        self.scored = 0
        if prefix not in ("", "/"):
            yield from self._ranked_subtree(scorer, int(clearance), prefix)
            return
        yield from self._ranked_all(scorer, int(clearance))

    def _ranked_subtree(
        self, scorer: _Scorer, clearance: int, prefix: str
    ) -> Iterator[tuple[float, IndexedKey]]:
        start = bisect.bisect_left(self._sorted, prefix)
        found: list[tuple[tuple[float, int, str], IndexedKey]] = []
        for key in self._sorted[start:]:
            if not key.startswith(prefix):
                break
            item = self.keys[key]
            if item.level <= clearance and not scorer.expired(item):
                score = scorer.score(item)
                self.scored += 1
                found.append(((-score, -item.ts, item.key), item))
        found.sort(key=lambda pair: pair[0])
        for order, item in found:
            yield -order[0], item

    def _ranked_all(self, scorer: _Scorer, clearance: int) -> Iterator[tuple[float, IndexedKey]]:
        # Cursors: (-bound, list id, position); lists read newest first.
        cursors: list[tuple[float, ListId, int]] = []
        for list_id, entries in self._lists.items():
            if list_id[1] > clearance:
                continue
            position = len(entries) - 1
            cursors.append((-scorer.bound(list_id, entries[position][0]), list_id, position))
        heapq.heapify(cursors)
        ready: list[tuple[float, int, str]] = []  # (-score, -ts, key)
        while cursors or ready:
            best_unread = -cursors[0][0] if cursors else -math.inf
            while ready and -ready[0][0] >= best_unread:
                negative, _, key = heapq.heappop(ready)
                yield -negative, self.keys[key]
            if not cursors:
                continue
            _, list_id, position = heapq.heappop(cursors)
            entries = self._lists[list_id]
            _ts, key = entries[position]
            if position > 0:
                next_bound = scorer.bound(list_id, entries[position - 1][0])
                heapq.heappush(cursors, (-next_bound, list_id, position - 1))
            item = self.keys[key]
            if not scorer.expired(item):
                heapq.heappush(ready, (-scorer.score(item), -item.ts, key))
                self.scored += 1


class _Scorer:
    def __init__(self, now: int, tags: frozenset[str], ranking: Ranking) -> None:
        self.now = now
        self.tags = tags
        self._r = ranking
        self._per_micro = math.log(2.0) / (ranking.half_life_hours * 3600e6)

    def recency(self, ts: int) -> float:
        return math.exp(-max(0, self.now - ts) * self._per_micro)

    def overlap(self, tags: frozenset[str]) -> float:
        return len(self.tags & tags) / len(self.tags) if self.tags else 0.0

    def score(self, item: IndexedKey) -> float:
        r = self._r
        return (
            r.recency_weight * self.recency(item.ts)
            + r.importance_weight * item.importance
            + r.tag_weight * self.overlap(item.tags)
        )

    def bound(self, list_id: ListId, ts: int) -> float:
        """The best score an entry of ``list_id`` at ``ts`` or older can have."""
        tags, _, bucket = list_id
        r = self._r
        top = min(1.0, (bucket + 0.5) / _BUCKETS)
        return (
            r.recency_weight * self.recency(ts)
            + r.importance_weight * top
            + r.tag_weight * self.overlap(tags)
        )

    def expired(self, item: IndexedKey) -> bool:
        return item.expires is not None and item.expires < self.now


@dataclass(slots=True)
class _Slot:
    index: PartitionIndex
    #: Writes seen while the index loads: applied after the scan if newer.
    pending: list[KeyEntry] | None = None
    ready: asyncio.Event | None = None


@dataclass(eq=False)
class KeyIndexes:
    """Every partition's PartitionIndex, loaded on first use, least recently used
    dropped past ``max_entries`` keys in all; a KeyObserver of the keyed service."""

    records: RecordStore
    limits: LimitsSettings
    _: KW_ONLY
    max_entries: int = 250_000
    summary_chars: int = 160
    #: Check the store's version counter on each read (a store shared by replicas).
    validate: bool = False
    clock: Clock = utcnow

    def __post_init__(self) -> None:
        self._slots: OrderedDict[Partition, _Slot] = OrderedDict()
        #: Loads done (a test and the bench read it).
        self.loads = 0
        self._warming: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Load the partitions holding keys in the background, as many as the entry
        limit allows, so an agent's first DefaultRead does not wait for its load."""
        self._warming = asyncio.create_task(self._warm(), name="default-read-index-warm")

    async def close(self) -> None:
        await cancel_and_wait(self._warming)
        self._warming = None

    async def _warm(self) -> None:
        try:
            for partition in await self.records.list_partitions():
                if self._total() >= self.max_entries:
                    return
                if partition not in self._slots:
                    await self.get(partition)
        except Exception:
            # Only a head start: a read loads its partition itself.
            log.exception("default-read index warm-up failed")

    # ------------------------------------------------------------------ observer

    async def key_written(self, partition: Partition, entry: KeyEntry) -> None:
        slot = self._slots.get(partition)
        if slot is None:
            return  # not loaded: a later load reads the store
        if slot.pending is not None:
            slot.pending.append(entry)
            return
        slot.index.apply(entry, self._indexed(entry))

    def _indexed(self, entry: KeyEntry) -> IndexedKey | None:
        return indexed(entry, self.limits, self.summary_chars)

    async def keys_rewritten(self, partition: Partition) -> None:
        self._slots.pop(partition, None)

    # ------------------------------------------------------------------ reads

    async def get(self, partition: Partition) -> PartitionIndex:
        """The partition's index, current with the store's version counter."""
        slot = self._slots.get(partition)
        if slot is not None and slot.ready is not None:
            await slot.ready.wait()
            slot = self._slots.get(partition)
        if slot is not None and slot.pending is None:
            stored = slot.index.version
            if self.validate:
                found = await self.records.get_records(partition, RecordKind.COUNTER, [COUNTER_KEY])
                stored = found[0].version if found else 0
            if stored == slot.index.version and self._slots.get(partition) is slot:
                self._slots.move_to_end(partition)
                slot.index.expire(micros(self.clock()))
                return slot.index
            log.info(
                "default-read index behind the store: reloading",
                tenant=partition.tenant_id,
                agent=partition.agent_id,
                indexed=slot.index.version,
                stored=stored,
            )
        return await self._load(partition)

    async def _load(self, partition: Partition) -> PartitionIndex:
        slot = _Slot(PartitionIndex(), pending=[], ready=asyncio.Event())
        self._slots[partition] = slot
        assert slot.pending is not None and slot.ready is not None
        try:
            found = await self.records.get_records(partition, RecordKind.COUNTER, [COUNTER_KEY])
            index = slot.index
            items: list[IndexedKey] = []
            newest = 0
            async for page in scanning.scan_records(
                self.records, partition, RecordKind.KEY, LOAD_BATCH
            ):
                newest = max([newest, *(r.version for r in page)])
                items.extend(
                    item
                    for item in map(self._indexed, decodable(page, entry_from))
                    if item is not None
                )
            # Replicas claim a version before writing its key: a load between the two
            # holds the counter without that key. The newest key it read is what it
            # is current with, so the next read that finds the counter ahead reloads.
            index.load(items, newest if self.validate else found[0].version if found else 0)
            for entry in slot.pending:
                index.apply(entry, self._indexed(entry))
            slot.pending = None
            self.loads += 1
        except BaseException:
            if self._slots.get(partition) is slot:
                del self._slots[partition]
            raise
        finally:
            slot.ready.set()
            slot.ready = None
        self._evict(keep=partition)
        return slot.index

    def _total(self) -> int:
        return sum(len(s.index) for s in self._slots.values())

    def _evict(self, keep: Partition) -> None:
        total = self._total()
        for partition in list(self._slots):
            if total <= self.max_entries:
                return
            if partition == keep:
                continue
            total -= len(self._slots.pop(partition).index)
