"""Key mirrors embedded behind the answer (keys.mirror_embedding "behind",
service/keyed/pending.py): the answer comes before the embedding, reads wait for it
(read-your-writes), a key rewritten while the pass is behind is embedded once, a
restart finds the mirrors a crash left unwritten, and a failing embedder holds no
read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.config import KeysSettings, LimitsSettings, RecallSettings
from memoryd.domain.errors import EmbeddingError, NotFound
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.models import MemoryFilter, Partition, Provenance, ProvenanceKind
from memoryd.domain.requests import RecallQuery
from memoryd.embedding import HashingEmbedder
from memoryd.embedding.base import EmbedKind
from memoryd.embedding.urgency import awaited
from memoryd.resilience.degradation import ComponentStates, collecting
from memoryd.resilience.embedder import FallbackEmbedder
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.pending import PendingMirrors
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.storage.base import Store
from memoryd.storage.fenced import fenced
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_stores import HistoryStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore

from .conftest import DIM, scope_for

S = scope_for()
USER = Provenance(ProvenanceKind.USER)


class GatedEmbedder:
    """The hashing embedder; document embeddings (the pass's) wait while ``gate`` is
    clear, and fail while ``down``. Query embeddings always go through."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(DIM)
        self.gate = asyncio.Event()
        self.gate.set()
        self.started = asyncio.Event()
        self.down = False
        self.documents: list[str] = []
        #: Per document: whether a read waited for it (embedding/urgency.py).
        self.awaited: list[bool] = []
        #: Called once when the text is embedded.
        self.hooks: dict[str, Callable[[], object]] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return DIM

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        if kind == "document":
            self.started.set()
            await self.gate.wait()
            if self.down:
                raise EmbeddingError("embedding provider is down (test)")
            self.documents.extend(texts)
            self.awaited.extend(awaited() for _ in texts)
            for text in texts:
                if text in self.hooks:
                    self.hooks.pop(text)()
                    for _ in range(3):  # what the hook started runs now
                        await asyncio.sleep(0)
        return await self.inner.embed(texts, kind=kind)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Behind:
    keyed: KeyedMemoryService
    memories: MemoryService
    pending: PendingMirrors
    embedder: GatedEmbedder
    store: Store
    records: InMemoryRecordStore
    writer: WriteBatcher
    history: MemoryHistory | None = None
    #: Set when a read of the memories reaches the store's read fence.
    fenced: asyncio.Event = field(default_factory=asyncio.Event)

    def restarted(self, embedder: object | None = None) -> Behind:
        """A new daemon over the same stores (and history): a new queue and services."""
        return build(
            self.store, self.records, self.writer, embedder or GatedEmbedder(), self.history
        )

    async def set(self, key: str, content: object) -> int:
        write = KeyWrite(key, Json.of(content), source=USER)
        return (await self.keyed.set(S, write)).version

    async def recalled(self, query: str) -> list[str]:
        outcome = await self.memories.recall(S, RecallQuery(query=query, limit=5))
        return [r.memory.content for r in outcome.results]


def build(
    store: Store,
    records: InMemoryRecordStore,
    writer: WriteBatcher,
    embedder: object,
    history: MemoryHistory | None = None,
) -> Behind:
    pending = PendingMirrors(retry_s=0.01)
    reached = asyncio.Event()

    async def fence(partition: Partition) -> None:
        reached.set()
        await pending.settled(partition)

    memories = MemoryService(
        store=fenced(store, fence),
        embedder=embedder,  # type: ignore[arg-type]
        writer=writer,
        access=AccessStatsBuffer(store, interval_s=3600, max_pending=10_000),
        page_tokens=PageTokenCodec(b"k" * 32),
        limits=LimitsSettings(),
        recall=RecallSettings(),
    )
    keyed = KeyedMemoryService(
        records=records,
        store=store,
        embedder=embedder,  # type: ignore[arg-type]
        writer=writer,
        page_tokens=PageTokenCodec(b"k" * 32),
        limits=LimitsSettings(),
        keys=KeysSettings(),
        pending=pending,
        history=history,
    )
    gated = embedder if isinstance(embedder, GatedEmbedder) else GatedEmbedder()
    return Behind(keyed, memories, pending, gated, store, records, writer, history, reached)


@pytest.fixture
async def behind() -> AsyncIterator[Behind]:
    store, records = InMemoryStore(DIM), InMemoryRecordStore()
    await store.open()
    await records.open()
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    b = build(store, records, writer, GatedEmbedder())
    yield b
    b.embedder.gate.set()
    await b.pending.close()
    await writer.close()


async def _mirror(b: Behind, key: str) -> tuple[str, int] | None:
    entry = await b.keyed.get(S, key)
    found = await b.store.get(S.partition, [entry.memory_id])
    return (found[0].content, found[0].version) if found else None


async def test_the_answer_comes_before_the_embedding_and_a_read_waits_for_it(
    behind: Behind,
) -> None:
    behind.embedder.gate.clear()
    version = await behind.set("/user/drink", "green tea")
    await behind.embedder.started.wait()  # the pass is embedding it
    assert await _mirror(behind, "/user/drink") is None  # answered before the mirror
    memory_id = (await behind.keyed.get(S, "/user/drink")).memory_id
    recall = asyncio.create_task(behind.recalled("green tea"))
    get = asyncio.create_task(behind.memories.get(S, memory_id))
    await asyncio.sleep(0)
    assert not recall.done() and not get.done()  # both wait at the fence
    behind.embedder.gate.set()
    assert await recall == ["green tea"]  # read-your-writes
    assert (await get).content == "green tea"
    assert await _mirror(behind, "/user/drink") == ("green tea", version)


async def test_a_key_rewritten_while_the_pass_is_behind_is_embedded_once(
    behind: Behind,
) -> None:
    behind.embedder.gate.clear()
    await behind.set("/k", "value 1")
    await behind.embedder.started.wait()  # the pass holds version 1
    for n in range(2, 11):
        await behind.set("/k", f"value {n}")
    behind.embedder.gate.set()
    assert await behind.recalled("value") == ["value 10"]
    assert behind.embedder.documents == ["value 1", "value 10"]
    assert await _mirror(behind, "/k") == ("value 10", 10)


async def test_a_partitions_first_pass_embeds_each_mirror_once(behind: Behind) -> None:
    """The partition's check (its first pass since start) runs before the pass takes
    its keys: a check after would find the mirrors being written missing, and queue
    them to be embedded and written again."""
    behind.embedder.gate.clear()
    for n in range(3):
        await behind.set(f"/many/{n}", f"busy {n}")
    await behind.embedder.started.wait()
    behind.embedder.gate.set()
    await behind.pending.drained()
    assert sorted(behind.embedder.documents) == ["busy 0", "busy 1", "busy 2"]


async def test_mirrors_are_embedded_before_queued_documents(behind: Behind) -> None:
    """Every read of the agent waits for its mirrors: they go to the model as a query
    does, before the documents queued for Remember (behind them, under write load, a
    read waited for the pass and the pass for every Remember: bench/mixed.py)."""
    await behind.set("/a", "first value")
    behind.fenced.clear()
    read = asyncio.create_task(behind.recalled("first value"))
    await behind.fenced.wait()
    assert "first value" in await read
    assert list(zip(behind.embedder.documents, behind.embedder.awaited, strict=True)) == [
        ("first value", True)
    ]


async def test_a_partition_a_read_waits_for_settles_though_others_are_wanted(
    behind: Behind,
) -> None:
    """A read of another agent arriving while the pass writes this agent's mirrors,
    which a read also waits for, does not cut this agent's round: with reads arriving
    on every agent, every round was cut after one key and no read returned until the
    reads stopped (bench/mixed.py: Remember's deduplication waited a minute)."""
    busy, other = scope_for(agent="a3"), scope_for(agent="a2")
    for scope in (busy, S, other):
        await behind.pending.checked(scope.partition)
    behind.embedder.gate.clear()
    await behind.keyed.set(busy, KeyWrite("/c", Json.of("c one"), source=USER))
    await behind.embedder.started.wait()  # the pass holds the busy agent's mirror
    for scope, key, value in ((S, "/a/1", "a one"), (S, "/a/2", "a two")):
        await behind.keyed.set(scope, KeyWrite(key, Json.of(value), source=USER))
    for key, value in (("/b/1", "b one"), ("/b/2", "b two")):
        await behind.keyed.set(other, KeyWrite(key, Json.of(value), source=USER))
    waits = []
    behind.embedder.hooks["a one"] = lambda: waits.append(
        asyncio.create_task(behind.pending.settled(other.partition))
    )
    read = asyncio.create_task(behind.pending.settled(S.partition))
    await asyncio.sleep(0)
    behind.embedder.gate.set()
    await read
    await asyncio.gather(*waits)
    assert behind.embedder.documents == ["c one", "a one", "a two", "b one", "b two"]


async def test_a_tombstone_drops_the_queued_mirror(behind: Behind) -> None:
    behind.embedder.gate.clear()
    await behind.set("/a", "alpha")
    await behind.embedder.started.wait()
    await behind.set("/a", "beta")
    await behind.set("/a", None)
    behind.embedder.gate.set()
    assert await behind.recalled("alpha beta") == []
    with pytest.raises(NotFound):
        await behind.keyed.get(S, "/a")
    assert behind.embedder.documents == ["alpha"]  # beta never embedded
    assert await behind.store.count(S.partition, MemoryFilter()) == 0


async def test_a_restart_writes_the_mirrors_a_crash_left_unwritten(behind: Behind) -> None:
    """The key records were logged and answered; the pass never ran (the daemon
    died): the next start's check embeds them, before a read is answered."""
    behind.embedder.gate.clear()
    await behind.set("/first", "written before")
    await behind.embedder.started.wait()
    await behind.pending.close()  # the crash: the pass is gone mid-embedding
    assert await _mirror(behind, "/first") is None
    again = behind.restarted()
    assert await again.recalled("written before") == ["written before"]
    assert await _mirror(again, "/first") == ("written before", 1)
    await again.pending.close()


async def test_the_start_sweep_checks_every_partition(behind: Behind) -> None:
    behind.embedder.gate.clear()
    await behind.set("/swept", "found by the sweep")
    await behind.embedder.started.wait()
    await behind.pending.close()
    closed = GatedEmbedder()
    closed.gate.clear()
    again = behind.restarted(closed)
    await again.keyed.warm()  # at start, in the background
    await closed.started.wait()  # queued by the sweep, no read asked
    closed.gate.set()
    await again.pending.settled(S.partition)
    assert await _mirror(again, "/swept") == ("found by the sweep", 1)
    await again.pending.close()


async def test_a_failing_pass_holds_no_read_and_is_retried(behind: Behind) -> None:
    behind.embedder.down = True
    await behind.set("/k", "kept in the log")
    with collecting() as reported:
        assert await behind.recalled("kept") == []  # answered, not hung
    assert [d.component for d in reported] == ["embedder"]
    await behind.set("/other", "another write")
    with collecting() as reported:  # still failing: no wait for the retry's pause
        assert await behind.recalled("kept another") == []
    assert [d.component for d in reported] == ["embedder"]
    behind.embedder.down = False
    await behind.pending.drained()  # retried after its pause
    assert sorted(await behind.recalled("kept another")) == ["another write", "kept in the log"]


async def test_an_embedder_down_puts_the_mirror_in_the_fallback_space(behind: Behind) -> None:
    """The daemon's embedder falls back to hashing on its own: the pass writes the
    mirror in the fallback space (the re-embed queue), as a write before the answer
    would."""
    primary = GatedEmbedder()
    primary.down = True
    fallback = FallbackEmbedder(primary, states=ComponentStates(), timeout_s=5.0)  # type: ignore[arg-type]
    b = behind.restarted(fallback)
    await b.set("/k", "hashed for now")
    entry = await b.keyed.get(S, "/k")
    mirror = await b.memories.get(S, entry.memory_id)  # waits for the pass
    assert mirror.content == "hashed for now"
    assert mirror.embedding_model == fallback.fallback_model_id
    await b.pending.close()


async def test_a_read_of_another_partition_goes_first(behind: Behind) -> None:
    behind.embedder.gate.clear()
    for n in range(3):
        await behind.set(f"/many/{n}", f"busy {n}")
    await behind.embedder.started.wait()  # the pass is on the busy partition
    other = scope_for(agent="a2")
    await behind.keyed.set(other, KeyWrite("/mine", Json.of("quick"), source=USER))
    await behind.pending.checked(other.partition)  # so the read goes straight to the fence
    behind.fenced.clear()
    read = asyncio.create_task(behind.memories.recall(other, RecallQuery(query="quick")))
    await behind.fenced.wait()  # the read waits for its partition's mirror
    behind.embedder.gate.set()
    outcome = await read
    assert [r.memory.content for r in outcome.results] == ["quick"]
    # The busy partition's first key was embedded, the other two wait their turn.
    assert behind.embedder.documents[:2] == ["busy 0", "quick"]


@pytest.mark.parametrize("kept", [True, False], ids=["history", "no-history"])
async def test_a_forgotten_mirror_stays_forgotten_across_a_restart(kept: bool) -> None:
    """ForgetMemories of a key's mirror stands until the key's next write, as before
    the pass: the restart's check finds in the history that this version's mirror
    was written (so it was removed since, not lost in a crash). Without a history
    (history.enabled false) the check cannot tell, and writes it again (documented)."""
    inner, records = InMemoryStore(DIM), InMemoryRecordStore()
    await inner.open()
    await records.open()
    history = MemoryHistory(timedelta(hours=72)) if kept else None
    store: Store = inner if history is None else HistoryStore(inner, history)
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    b = build(store, records, writer, GatedEmbedder(), history)
    await b.set("/k", "forget this value")
    memory_id = (await b.keyed.get(S, "/k")).memory_id
    assert (await b.memories.get(S, memory_id)).content == "forget this value"
    assert await b.memories.forget(S, [memory_id]) == [memory_id]
    await b.pending.close()
    again = b.restarted()
    await again.keyed.warm()
    await again.pending.settled(S.partition)
    assert await again.recalled("forget this value") == ([] if kept else ["forget this value"])
    await again.set("/k", "a new value")  # the next write mirrors the key again
    assert await again.recalled("new value") == ["a new value"]
    await again.pending.close()
    await writer.close()
