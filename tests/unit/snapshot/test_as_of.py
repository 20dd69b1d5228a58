"""As-of reads (docs/as-of.md) over in-process stores and an injected clock.

The target: a snapshot rebuilt as of T is byte-identical to the one built at T, over
100 random instants of a scripted 1,000-step agent history (remember, update,
archive, forget, key writes and tombstones, expiry, access statistics flushed); the
recall results and DefaultRead, GetKey and ListKeys as of T equal what they said at T.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memoryd.domain.agent_state import MessageDraft, MessageRole, WorkingMemoryWrite, WorkingScope
from memoryd.domain.as_of import AsOf
from memoryd.domain.errors import (
    InvalidArgument,
    NotFound,
    OutOfRange,
    Unimplemented,
)
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyListQuery, KeyWrite
from memoryd.domain.lifecycle import CompactOptions, CompactResult, EraseRequest
from memoryd.domain.models import Provenance, ProvenanceKind
from memoryd.domain.requests import MemoryDraft, MemoryPatch, RecallQuery
from memoryd.domain.snapshot import (
    DefaultReadRequest,
    SnapshotFormat,
    SnapshotRequest,
)
from memoryd.service.snapshot.as_of import AsOfReads
from memoryd.storage.history import MemoryHistory
from tests.unit.snapshot.world import Clock, World, scope_for, world

START = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
WORDS = [
    "tea",
    "coffee",
    "python",
    "rust",
    "deploy",
    "kubernetes",
    "invoice",
    "meeting",
    "alice",
    "bob",
    "paris",
    "berlin",
    "refund",
    "outage",
    "migration",
    "budget",
    "schema",
    "latency",
    "cache",
    "backup",
]
USER = Provenance(ProvenanceKind.USER)
WEB = Provenance(ProvenanceKind.WEB, "wiki", START, "https://wiki.example/x")


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))


@dataclass
class Seen:
    """What the live reads said at one instant."""

    at: datetime
    n: int
    trigger: str
    key_name: str
    snapshot: str = ""
    recall: list[tuple[str, float, str]] = field(default_factory=list)
    default_read: str = ""
    keys: list[tuple[str, str, int]] = field(default_factory=list)
    key: tuple[str, str] | None = None


SCOPE = WorkingScope(thread_id="t1", resource_id="user-1")
SESSION = "s1"


def _request(trigger: str, n: int) -> SnapshotRequest:
    """The snapshot asked for at the ``n``-th instant: each format in turn, with
    different limits and windows, every section (the profile, the scope's working
    memory and the session's included)."""
    state: dict[str, Any] = {"scope": SCOPE, "session_id": SESSION}
    return (
        SnapshotRequest(trigger=trigger, token_budget=600, **state),
        SnapshotRequest(trigger=trigger, format=SnapshotFormat.XML, recent_limit=8, **state),
        SnapshotRequest(
            trigger=trigger,
            format=SnapshotFormat.USER_MEMORY,
            recent_window=timedelta(hours=2),
            **state,
        ),
    )[n % 3]


def _recall(trigger: str) -> RecallQuery:
    return RecallQuery(query=trigger, limit=8)


async def _observe(
    w: World, reads: Any, n: int, trigger: str, key: str, as_of: AsOf | None
) -> Seen:
    """What Recall, BuildSnapshot, DefaultRead, ListKeys and GetKey say (live, or as of)."""
    scope = scope_for()
    seen = Seen(w.clock(), n, trigger, key)
    req = _request(trigger, n)
    snap = await (reads.snapshot(scope, req, as_of) if as_of else w.snapshots.build(scope, req))
    seen.snapshot = snap.text
    outcome = await (
        reads.recall(scope, _recall(trigger), as_of)
        if as_of
        else w.memories.recall(scope, _recall(trigger))
    )
    seen.recall = [(r.memory.id, r.score, r.memory.content) for r in outcome.results]
    dr = DefaultReadRequest(token_limit=200)
    read = await (reads.default_read(scope, dr, as_of) if as_of else w.default_read.read(scope, dr))
    seen.default_read = read.text
    listing_query = KeyListQuery(prefix="/", recursive=True, page_size=100)
    listing = await (
        reads.list_keys(scope, listing_query, as_of)
        if as_of
        else w.keyed.list(scope, listing_query)
    )
    seen.keys = [(e.key, e.content_json, e.version) for e in listing.entries]
    try:
        entry = await (reads.get_key(scope, key, as_of) if as_of else w.keyed.get(scope, key))
        seen.key = (entry.content_json, entry.source.kind.value if entry.source else "")
    except NotFound:
        seen.key = None
    return seen


@pytest.fixture
async def history_world() -> AsyncIterator[tuple[World, MemoryHistory]]:
    clock = Clock(START)
    history = MemoryHistory(timedelta(days=30), clock=clock)
    async with world(clock=clock, history=history) as w:
        yield w, history


async def _step(w: World, rng: random.Random, ids: list[str], keys: list[str]) -> None:
    """One step of an agent's life."""
    scope = scope_for()
    roll = rng.random()
    if roll < 0.45 or not ids:
        draft = MemoryDraft(
            content=_text(rng) + f" #{rng.randrange(10**6)}",
            tags=("pinned",) if rng.random() < 0.05 else (),
            importance=rng.choice([None, 0.2, 0.9]),
            source=WEB if rng.random() < 0.2 else USER,
            expires_at=w.clock() + timedelta(hours=3) if rng.random() < 0.1 else None,
        )
        ids.append((await w.memories.remember(scope, draft)).memory.id)
    elif roll < 0.6:
        patch = MemoryPatch(frozenset({"content"}), {"content": _text(rng) + " (revised)"})
        await _quietly(w.memories.update(scope, rng.choice(ids), patch))
    elif roll < 0.66:
        patch = MemoryPatch(frozenset({"archived"}), {"archived": True})
        await _quietly(w.memories.update(scope, rng.choice(ids), patch))
    elif roll < 0.71:
        await w.memories.forget(scope, [ids.pop(rng.randrange(len(ids)))])
    elif roll < 0.86:
        key = rng.choice(keys)
        content = {"text": _text(rng), "importance": rng.randint(1, 9)}
        await w.keyed.set(scope, KeyWrite(key, Json.of(content), source=rng.choice([USER, WEB])))
    elif roll < 0.9:
        await _quietly(w.keyed.set(scope, KeyWrite(rng.choice(keys), Json.of(None), source=USER)))
    elif roll < 0.95:
        await w.memories.recall(scope, _recall(_text(rng)))  # accesses, flushed later
    else:
        await w.access.flush()


async def _state_step(w: World, rng: random.Random) -> None:
    """One write of the agent's state: its profile, the scope's working memory
    (sometimes expiring), or a turn of the session (compressed as it grows)."""
    scope = scope_for()
    roll = rng.random()
    if roll < 0.25:
        await w.profiles.set(scope, f"You are an assistant for {_text(rng)}.")
    elif roll < 0.6:
        ttl = timedelta(minutes=30) if rng.random() < 0.2 else None
        content = Json.of({"working-plan": _text(rng), rng.choice(WORDS): _text(rng)})
        await w.working.set(scope, WorkingMemoryWrite(scope=SCOPE, content=content, ttl=ttl))
    else:
        turn = [
            MessageDraft(MessageRole.USER, f"what about {_text(rng)}?"),
            MessageDraft(MessageRole.ASSISTANT, f"noted: {_text(rng)}"),
        ]
        await w.sessions.append(scope, SESSION, turn)


async def _quietly(call: Any) -> None:
    with contextlib.suppress(NotFound):  # forgotten meanwhile
        await call


async def replayed_alike(w: World) -> list[Seen]:
    """Script 1,000 steps of an agent's history, observe every read at 100 random
    instants, then read as of each of them: equal, byte for byte. Returns what was
    seen then."""
    reads = w.as_of
    assert reads is not None
    rng = random.Random(35)
    ids: list[str] = []
    keys = [f"/user/k{i}" for i in range(12)] + ["/notes/tea", "/notes/rust/x"]
    instants = set(rng.sample(range(1000), 100))
    seen: list[Seen] = []
    for step in range(1000):
        w.clock.advance(seconds=rng.randint(1, 300))
        await _step(w, rng, ids, keys)
        if rng.random() < 0.15:
            await _state_step(w, rng)
        if step in instants:
            w.clock.advance(seconds=1)
            seen.append(await _observe(w, reads, len(seen), _text(rng), rng.choice(keys), None))
    w.clock.advance(hours=1)
    assert len(seen) == 100
    for then in seen:
        now = await _observe(w, reads, then.n, then.trigger, then.key_name, AsOf(instant=then.at))
        assert now.snapshot == then.snapshot, then.at
        assert now.recall == then.recall, then.at
        assert now.default_read == then.default_read, then.at
        assert now.keys == then.keys, then.at
        assert now.key == then.key, then.at
    return seen


async def test_as_of_reads_equal_what_was_read_then_over_100_instants(
    history_world: tuple[World, MemoryHistory],
) -> None:
    w, _ = history_world
    seen = await replayed_alike(w)
    assert any(s.recall for s in seen) and any(s.keys for s in seen)
    assert len({s.snapshot for s in seen}) > 80  # the history moved
    # The agent's state was in the snapshots, and changed along the way.
    for marker in ("You are an assistant for", "noted:", "working-plan"):
        assert len({s.snapshot for s in seen if marker in s.snapshot}) > 10, marker


async def test_get_key_as_of_returns_the_version_then_and_tombstones_read_missing(
    history_world: tuple[World, MemoryHistory],
) -> None:
    w, _ = history_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    await w.keyed.set(scope, KeyWrite("/user/name", Json.of("Alice"), source=USER))
    w.clock.advance(minutes=1)
    first = w.clock()
    w.clock.advance(minutes=1)
    await w.keyed.set(scope, KeyWrite("/user/name", Json.of("Alicia"), source=WEB))
    w.clock.advance(minutes=1)
    second = w.clock()
    w.clock.advance(minutes=1)
    await w.keyed.set(scope, KeyWrite("/user/name", Json.of(None), source=USER))
    w.clock.advance(minutes=1)
    assert (await reads.get_key(scope, "/user/name", AsOf(instant=first))).content == "Alice"
    then = await reads.get_key(scope, "/user/name", AsOf(instant=second))
    assert then.content == "Alicia" and then.source == WEB and then.version == 2
    with pytest.raises(NotFound):
        await reads.get_key(scope, "/user/name", AsOf(instant=w.clock()))
    with pytest.raises(NotFound):
        await w.keyed.get(scope, "/user/name")
    listing = await reads.list_keys(scope, KeyListQuery(prefix="/user/"), AsOf(instant=first))
    assert [(e.key, e.content) for e in listing.entries] == [("/user/name", "Alice")]


async def test_a_memory_reads_as_it_was_created_updated_archived_and_deleted(
    history_world: tuple[World, MemoryHistory],
) -> None:
    w, history = history_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    query = RecallQuery(query="tea", limit=5)
    await reads.recall(scope, query, AsOf(instant=w.clock()))  # the history starts
    w.clock.advance(minutes=1)
    before = w.clock()
    w.clock.advance(minutes=1)
    memory_id = (
        await w.memories.remember(scope, MemoryDraft("the user drinks green tea", source=USER))
    ).memory.id
    w.clock.advance(minutes=1)
    created = w.clock()
    w.clock.advance(minutes=1)
    patch = MemoryPatch(frozenset({"content"}), {"content": "the user drinks black tea"})
    await w.memories.update(scope, memory_id, patch)
    w.clock.advance(minutes=1)
    updated = w.clock()
    w.clock.advance(minutes=1)
    await w.memories.update(
        scope, memory_id, MemoryPatch(frozenset({"archived"}), {"archived": True})
    )
    w.clock.advance(minutes=1)
    archived = w.clock()
    w.clock.advance(minutes=1)
    await w.memories.forget(scope, [memory_id])
    w.clock.advance(minutes=1)

    async def contents(at: datetime) -> list[str]:
        outcome = await reads.recall(scope, query, AsOf(instant=at))
        return [r.memory.content for r in outcome.results]

    assert history.horizon(scope.partition) is not None
    assert await contents(before) == []
    assert await contents(created) == ["the user drinks green tea"]
    assert await contents(updated) == ["the user drinks black tea"]
    assert await contents(archived) == []  # archived memories are not recalled
    assert await contents(w.clock()) == []
    assert [m.archived for m in history.valid_at(scope.partition, archived)] == [True]


async def test_erased_content_never_comes_back_as_of(
    history_world: tuple[World, MemoryHistory],
) -> None:
    """An Erase removes every version of what it erases, superseded ones included:
    no as-of read, at any instant, shows the erased text again."""
    w, history = history_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    secret = "alice.secret@example.com"
    memory_id = (
        await w.memories.remember(scope, MemoryDraft(f"write to {secret} on fridays"))
    ).memory.id
    w.clock.advance(minutes=1)
    mentioned = w.clock()
    w.clock.advance(minutes=1)
    # The current version no longer mentions it: only a superseded one does.
    patch = MemoryPatch(frozenset({"content"}), {"content": "write to the team on fridays"})
    await w.memories.update(scope, memory_id, patch)
    await w.memories.remember(scope, MemoryDraft("fridays are for deploys"))
    w.clock.advance(minutes=1)
    assert (
        secret
        in (
            await reads.snapshot(scope, SnapshotRequest(trigger="fridays"), AsOf(instant=mentioned))
        ).text
    )

    receipt = await w.lifecycle.erase(scope, EraseRequest(subject=secret))
    assert receipt.places["history.memory_versions"] >= 2
    assert history.holding(scope.partition, secret) == ([], [])
    # The memory that no longer mentions it stays, read as of now as it is.
    now_then = await reads.snapshot(
        scope, SnapshotRequest(trigger="fridays"), AsOf(instant=w.clock())
    )
    assert "write to the team on fridays" in now_then.text
    for at in (mentioned, w.clock()):
        snap = await reads.snapshot(scope, SnapshotRequest(trigger="fridays"), AsOf(instant=at))
        assert secret not in snap.text
        outcome = await reads.recall(scope, RecallQuery(query=secret), AsOf(instant=at))
        assert all(secret not in r.memory.content for r in outcome.results)


async def test_bad_as_of_is_invalid_argument_naming_it(
    history_world: tuple[World, MemoryHistory],
) -> None:
    w, _ = history_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    bad = [
        AsOf(),
        AsOf(instant=w.clock(), cursor="c3"),
        AsOf(instant=w.clock() + timedelta(seconds=5)),
        AsOf(instant=datetime(2026, 1, 1)),  # no timezone
    ]
    for as_of in bad:
        with pytest.raises(InvalidArgument) as raised:
            await reads.recall(scope, RecallQuery(query="tea"), as_of)
        assert [v.field for v in raised.value.violations] == ["as_of"]


async def test_beyond_the_horizon_is_out_of_range_naming_as_of_and_the_horizon(
    history_world: tuple[World, MemoryHistory],
) -> None:
    w, history = history_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    await w.memories.remember(scope, MemoryDraft("the user likes tea"))
    seeded = history.horizon(scope.partition)
    assert seeded is not None
    w.clock.advance(minutes=5)
    with pytest.raises(OutOfRange) as raised:
        await reads.recall(
            scope, RecallQuery(query="tea"), AsOf(instant=seeded - timedelta(seconds=1))
        )
    assert "as_of" in raised.value.message and seeded.isoformat() in raised.value.message
    # Past the retention, even what was recorded is out of range (and pruned).
    w.clock.advance(days=31)
    horizon = history.horizon(scope.partition)
    assert horizon == w.clock() - history.retention
    with pytest.raises(OutOfRange):
        await reads.recall(scope, RecallQuery(query="tea"), AsOf(instant=seeded))
    with pytest.raises(OutOfRange):
        await reads.get_key(scope, "/user/x", AsOf(instant=seeded))


async def test_retention_pruning_keeps_the_version_valid_at_the_horizon() -> None:
    clock = Clock(START)
    history = MemoryHistory(timedelta(hours=1), clock=clock)
    async with world(clock=clock, history=history) as w:
        scope = scope_for()
        memory_id = (await w.memories.remember(scope, MemoryDraft("version one"))).memory.id
        for n in range(2, 6):
            clock.advance(minutes=30)
            patch = MemoryPatch(frozenset({"content"}), {"content": f"version {n}"})
            await w.memories.update(scope, memory_id, patch)
        gone = (await w.memories.remember(scope, MemoryDraft("short lived"))).memory.id
        await w.memories.forget(scope, [gone])
        assert history.version_count() == 7
        clock.advance(minutes=45)
        # The horizon falls between versions 4 and 5: the versions before the one
        # valid then (1, 2 and 3) go; 4 stays, an as-of read at the horizon shows it.
        assert await history.prune() == 3
        horizon = history.horizon(scope.partition)
        assert horizon is not None
        assert sorted(m.content for m in history.valid_at(scope.partition, horizon)) == [
            "version 4"
        ]
        clock.advance(hours=2)
        # Now version 5 is the one valid at the horizon; the deleted memory goes whole.
        assert await history.prune() == 3
        assert history.version_count() == 1


async def test_a_cursor_resolves_to_the_change_recorded_at_its_position(
    history_world: tuple[World, MemoryHistory],
) -> None:
    """A Watch cursor names a log position; the change feed resolves it (here: a
    stand-in that reads the number from the text, the sealing being the feed's own
    business, tested with it and over gRPC in tests/integration/test_as_of.py)."""
    w, history = history_world
    assert w.as_of is not None
    reads = replace(w.as_of, sequence_of=lambda scope, cursor: int(cursor.removeprefix("c")))
    scope = scope_for()
    await w.memories.remember(scope, MemoryDraft("first fact about tea"))
    w.clock.advance(minutes=1)
    await w.memories.remember(scope, MemoryDraft("second fact about tea"))
    w.clock.advance(minutes=1)
    positions = sorted(
        v.position
        for part in [history._parts[scope.partition]]
        for vs in part.versions.values()
        for v in vs
    )
    first = AsOf(cursor=f"c{positions[0]}")
    outcome = await reads.recall(scope, RecallQuery(query="tea"), first)
    assert [r.memory.content for r in outcome.results] == ["first fact about tea"]
    outcome = await reads.recall(scope, RecallQuery(query="tea"), AsOf(cursor=f"c{positions[-1]}"))
    assert len(outcome.results) == 2


async def test_without_a_history_as_of_is_unimplemented_saying_why(
    history_world: tuple[World, MemoryHistory],
) -> None:
    w, _ = history_world
    assert w.as_of is not None
    reads = AsOfReads(
        history=None,
        memories=w.memories,
        snapshots=w.snapshots,
        default_reads=w.default_read,
        keyed=w.keyed,
        records=w.records,
        store=w.store,
        dimension=w.embedder.dimension,
        clock=w.clock,
        unavailable="as-of reads are not served on a shared store",
    )
    with pytest.raises(Unimplemented, match="shared store"):
        await reads.recall(scope_for(), RecallQuery(query="tea"), AsOf(instant=w.clock()))


async def test_scheduled_maintenance_prunes_the_history_past_its_retention() -> None:
    """The store does not grow without bound: the maintenance pass (the scheduler's,
    on the injected clock) drops what no as-of read within the retention can select."""
    clock = Clock(START)
    history = MemoryHistory(timedelta(hours=1), clock=clock)
    async with world(clock=clock, history=history) as w:
        scope = scope_for()
        memory_id = (await w.memories.remember(scope, MemoryDraft("draft 0"))).memory.id
        for n in range(1, 50):
            clock.advance(minutes=1)
            patch = MemoryPatch(frozenset({"content"}), {"content": f"draft {n}"})
            await w.memories.update(scope, memory_id, patch)
        assert history.version_count() == 50
        scheduler = w.lifecycle.scheduler(seed=1)
        await scheduler.run_once()
        assert history.version_count() == 50  # all within the hour
        clock.advance(hours=2)
        await scheduler.run_once()
        assert history.version_count() == 1
        [kept] = history.valid_at(scope.partition, clock())
        assert kept.content == "draft 49"


async def test_as_of_reads_during_compaction_and_writes_keep_answering_for_then(
    history_world: tuple[World, MemoryHistory],
) -> None:
    """A compaction that merges near-duplicates, purges expired memories and
    tombstones, and writes that race it, change the present: reads as of an earlier
    instant, made while they run, still answer what was read then."""
    w, _ = history_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    rng = random.Random(7)
    for i in range(40):
        expires = w.clock() + timedelta(minutes=5) if i % 5 == 0 else None
        text = "the user likes green tea" if i % 4 == 0 else _text(rng)
        await w.memories.remember(
            scope, MemoryDraft(f"{text} {i}", expires_at=expires), dedup=False
        )
        w.clock.advance(seconds=30)
    request = SnapshotRequest(trigger="what tea does the user like?", token_budget=600)
    then, instant = (await w.snapshots.build(scope, request)).text, w.clock()
    w.clock.advance(minutes=30)  # the expiring ones expired

    async def compact() -> CompactResult:
        results = [
            step
            async for step in w.lifecycle.compact(scope, CompactOptions(2, 0.5))
            if isinstance(step, CompactResult)
        ]
        return results[-1]

    async def write() -> None:
        for i in range(20):
            await w.memories.remember(scope, MemoryDraft(f"later fact {i} {_text(rng)}"))

    async def read() -> list[str]:
        return [
            (await reads.snapshot(scope, request, AsOf(instant=instant))).text for _ in range(10)
        ]

    compacted, _, seen = await asyncio.gather(compact(), write(), read())
    assert compacted.expired_purged == 8
    assert seen == [then] * 10
    assert (await w.snapshots.build(scope, request)).text != then
