"""As-of reads where key mirrors are embedded behind the answer (the daemon's default,
service/keyed/pending.py): the scripted 1,000-step history of test_as_of.py reads the
same as of every instant, and an instant between a key's write and its pass reads the
key's mirror at that version, as a read then (which waits for the pass) would have."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.domain.as_of import AsOf
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.requests import RecallQuery
from memoryd.embedding.base import EmbedKind
from memoryd.service.keyed.pending import PendingMirrors
from memoryd.storage.history import MemoryHistory
from tests.unit.snapshot.test_as_of import START, USER, replayed_alike
from tests.unit.snapshot.world import Clock, SwitchableEmbedder, World, scope_for, world


class HeldEmbedder(SwitchableEmbedder):
    """Holds the first document embedding after :meth:`hold` until ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.release: asyncio.Event | None = None
        self.held = asyncio.Event()

    def hold(self) -> asyncio.Event:
        self.release = asyncio.Event()
        return self.release

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        release, self.release = self.release, None
        if release is not None and kind == "document":
            self.held.set()
            await release.wait()
        return await super().embed(texts, kind=kind)


@pytest.fixture
async def behind_world() -> AsyncIterator[tuple[World, HeldEmbedder]]:
    clock = Clock(START)
    history = MemoryHistory(timedelta(days=30), clock=clock)
    embedder = HeldEmbedder()
    pending = PendingMirrors()
    async with world(clock=clock, history=history, embedder=embedder, pending=pending) as w:
        yield w, embedder


async def test_as_of_reads_equal_what_was_read_then_with_mirrors_behind(
    behind_world: tuple[World, HeldEmbedder],
) -> None:
    w, _ = behind_world
    seen = await replayed_alike(w)
    assert any(s.recall for s in seen) and len({s.snapshot for s in seen}) > 80


async def test_an_instant_between_a_write_and_its_pass_reads_the_key_then(
    behind_world: tuple[World, HeldEmbedder],
) -> None:
    w, embedder = behind_world
    reads = w.as_of
    assert reads is not None
    scope = scope_for()
    query = RecallQuery(query="tea", limit=5)

    def contents(outcome: object) -> list[tuple[str, float, str]]:
        return [(r.memory.id, r.score, r.memory.content) for r in outcome.results]  # type: ignore[attr-defined]

    await w.keyed.set(scope, KeyWrite("/user/drink", Json.of("green tea"), source=USER))
    w.clock.advance(seconds=5)
    before = w.clock()
    assert [c for _, _, c in contents(await w.memories.recall(scope, query))] == ["green tea"]
    w.clock.advance(seconds=5)
    release = embedder.hold()
    await w.keyed.set(scope, KeyWrite("/user/drink", Json.of("black tea"), source=USER))
    await embedder.held.wait()  # the pass is embedding "black tea"; nothing written yet
    w.clock.advance(seconds=5)
    between = w.clock()
    early = contents(await reads.recall(scope, query, AsOf(instant=between)))
    assert [c for _, _, c in early] == ["black tea"]  # what a read then would have said
    assert (await reads.get_key(scope, "/user/drink", AsOf(instant=between))).content == "black tea"
    then = contents(await reads.recall(scope, query, AsOf(instant=before)))
    assert [c for _, _, c in then] == ["green tea"]
    release.set()
    w.clock.advance(seconds=5)
    assert [c for _, _, c in contents(await w.memories.recall(scope, query))] == ["black tea"]
    # Written by the pass after ``between``: the same answer, byte for byte.
    assert contents(await reads.recall(scope, query, AsOf(instant=between))) == early
