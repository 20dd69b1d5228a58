"""What the Qdrant stores send: the partition inside every filter, wait=True on writes,
batched payload updates, the IDF corpus, RRF fusion - and what they do when the server
cannot be reached. Runs on local mode and on Qdrant Edge (the engine itself)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_client import models

from memoryd.config import Settings
from memoryd.domain.errors import StoreError
from memoryd.domain.models import AccessUpdate, MemoryFilter, Partition
from memoryd.domain.records import RecordKind
from memoryd.storage import build_record_store, build_store
from memoryd.storage.base import ListPage, Nearest
from memoryd.storage.qdrant import QdrantOptions, QdrantRecordStore, QdrantStore
from memoryd.storage.qdrant.edge import EdgeEngine
from memoryd.storage.qdrant.engine import ClientEngine, Engine
from memoryd.storage.qdrant.schema import CollectionSpec
from memoryd.storage.records import KeyPage
from memoryd.storage.settings import QdrantSettings
from tests.conformance.records_support import rec
from tests.conformance.support import BASE, DIM, make_memory, unit_vector
from tests.qdrant_server import free_port

P = Partition("tenant", "agent")


@dataclass
class Recording:
    """An Engine that forwards to a real one and keeps every request's filter."""

    inner: Engine
    filters: list[tuple[str, models.Filter | None]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def _note(self, op: str, flt: models.Filter | None, **kw: Any) -> None:
        self.filters.append((op, flt))
        self.calls.append((op, kw))

    async def open_collection(self, spec: CollectionSpec) -> None:
        await self.inner.open_collection(spec)

    async def upsert(self, name: str, points: Sequence[models.PointStruct]) -> None:
        self.calls.append(("upsert", {"points": len(points)}))
        await self.inner.upsert(name, points)

    async def retrieve(
        self, name: str, ids: Sequence[str], *, with_vectors: bool
    ) -> list[models.Record]:
        self.calls.append(("retrieve", {}))
        return await self.inner.retrieve(name, ids, with_vectors=with_vectors)

    async def query(self, name: str, request: models.QueryRequest) -> list[models.ScoredPoint]:
        prefetch = request.prefetch if isinstance(request.prefetch, list) else []
        self._note(
            "query", request.filter, params=request.params, prefetch=prefetch, query=request.query
        )
        for p in prefetch:
            self._note("prefetch", p.filter, params=p.params)
        return await self.inner.query(name, request)

    async def query_batch(
        self, name: str, requests: Sequence[models.QueryRequest]
    ) -> list[list[models.ScoredPoint]]:
        for r in requests:
            self._note("query_batch", r.filter)
        return await self.inner.query_batch(name, requests)

    async def scroll(
        self, name: str, request: models.ScrollRequest
    ) -> tuple[list[models.Record], str | None]:
        self._note("scroll", request.filter)
        return await self.inner.scroll(name, request)

    async def count(self, name: str, flt: models.Filter) -> int:
        self._note("count", flt)
        return await self.inner.count(name, flt)

    async def delete(self, name: str, flt: models.Filter) -> None:
        self._note("delete", flt)
        await self.inner.delete(name, flt)

    async def set_payloads(
        self, name: str, updates: Sequence[tuple[dict[str, object], models.Filter]]
    ) -> None:
        self.calls.append(("set_payloads", {"n": len(updates)}))
        for _, flt in updates:
            self._note("set_payload", flt)
        await self.inner.set_payloads(name, updates)

    async def facet(self, name: str, key: str, flt: models.Filter | None, limit: int) -> list[str]:
        self._note(f"facet:{key}", flt)
        return await self.inner.facet(name, key, flt, limit)

    async def close(self) -> None:
        await self.inner.close()


Connect = Callable[[Path], Awaitable[Engine]]


async def _local(path: Path) -> Engine:
    return await ClientEngine.connect(QdrantOptions(path=path))


async def _edge(path: Path) -> Engine:
    return await EdgeEngine.connect(path)


@pytest.fixture(params=[_local, _edge], ids=["local", "edge"])
def engine_kind(request: pytest.FixtureRequest) -> Connect:
    connect: Connect = request.param
    return connect


@pytest.fixture
async def recorded(
    engine_kind: Connect, tmp_path: Path
) -> AsyncIterator[tuple[QdrantStore, QdrantRecordStore, Recording, Recording]]:
    seen: list[Recording] = []

    def connect(sub: str) -> Callable[[], Awaitable[Engine]]:
        async def _connect() -> Engine:
            r = Recording(await engine_kind(tmp_path / sub))
            seen.append(r)
            return r

        return _connect

    store = QdrantStore(connect("memories"), DIM)
    records = QdrantRecordStore(connect("records"))
    await store.open()
    await records.open()
    yield store, records, seen[0], seen[1]
    await store.close()
    await records.close()


def _scoped_to(flt: models.Filter | None, p: Partition) -> bool:
    if flt is None or not isinstance(flt.must, list):
        return False
    want = [
        models.FieldCondition(key="tenant_id", match=models.MatchValue(value=p.tenant_id)),
        models.FieldCondition(key="agent_id", match=models.MatchValue(value=p.agent_id)),
    ]
    return all(c in flt.must for c in want)


async def test_every_request_carries_the_partition(
    recorded: tuple[QdrantStore, QdrantRecordStore, Recording, Recording],
) -> None:
    store, records, mem_engine, rec_engine = recorded
    m = make_memory(P, id="a", content="apple pie", tags=("x",))
    await store.upsert(P, [m, make_memory(P, id="b", content="banana")])
    flt = MemoryFilter(tags=("x",))
    await store.get(P, ["a"])
    await store.search(P, np.asarray(m.vector), flt, 5)
    await store.search_many(P, [np.asarray(m.vector)] * 3, flt, Nearest(5))
    await store.text_search(P, "apple", flt, 5)
    await store.hybrid_search(P, np.asarray(m.vector), "apple", flt, 5)
    await store.find_by_content(P, ["nope"], flt)
    await store.list(P, flt, ListPage(limit=1))
    await store.count(P, flt)
    await store.record_access(P, {"a": AccessUpdate(1, BASE)})
    await store.delete(P, ["a", "b"])
    await records.put_records(P, [rec("k1"), rec("k2", kind=RecordKind.SESSION)])
    await records.get_records(P, RecordKind.KEY, ["k1"])
    await records.list_records(P, RecordKind.KEY, KeyPage(prefix="k", limit=1))
    await records.count_records(P, RecordKind.KEY)
    await records.delete_records(P, RecordKind.KEY, ["k1"])
    await store.list_partitions("tenant")
    ops = {op for e in (mem_engine, rec_engine) for op, _ in e.filters}
    assert {"query", "prefetch", "query_batch", "scroll", "count", "delete", "set_payload"} <= ops
    for op, flt_q in [*mem_engine.filters, *rec_engine.filters]:
        if op == "facet:tenant_id":
            continue  # lists the tenants themselves (maintenance only)
        if op == "facet:agent_id":
            assert flt_q == models.Filter(
                must=[
                    models.FieldCondition(key="tenant_id", match=models.MatchValue(value="tenant"))
                ]
            )
            continue
        assert _scoped_to(flt_q, P), (op, flt_q)


async def test_access_updates_are_one_batched_request(
    recorded: tuple[QdrantStore, QdrantRecordStore, Recording, Recording],
) -> None:
    store, _, engine, _ = recorded
    await store.upsert(P, [make_memory(P, id=f"m{i}") for i in range(5)])
    engine.calls.clear()
    when = BASE + timedelta(days=1)
    await store.record_access(P, {f"m{i}": AccessUpdate(i + 1, when) for i in range(7)})
    assert [op for op, _ in engine.calls if op == "set_payloads"] == ["set_payloads"]
    assert [kw["n"] for op, kw in engine.calls if op == "set_payloads"] == [5]
    got = await store.get(P, [f"m{i}" for i in range(5)])
    assert [g.access_count for g in got] == [1, 2, 3, 4, 5]


async def test_text_search_measures_idf_within_the_filter(
    recorded: tuple[QdrantStore, QdrantRecordStore, Recording, Recording],
) -> None:
    store, _, engine, _ = recorded
    await store.upsert(P, [make_memory(P, id="a", content="rare words")])
    await store.text_search(P, "rare", MemoryFilter(), 5)
    [kw] = [kw for op, kw in engine.calls if op == "query"]
    [(_, flt)] = [f for f in engine.filters if f[0] == "query"]
    assert kw["params"] == models.SearchParams(idf=models.IdfCorpusParams(corpus=flt))


async def test_hybrid_search_fuses_both_rankings(
    recorded: tuple[QdrantStore, QdrantRecordStore, Recording, Recording],
) -> None:
    store, _, engine, _ = recorded
    rng = np.random.default_rng(4)
    query = unit_vector(rng)
    near = make_memory(P, id="near", content="unrelated words", vector=query.copy())
    worded = make_memory(P, id="worded", content="zebra crossing", vector=-query)
    other = [make_memory(P, id=f"o{i}", content=f"filler {i}") for i in range(10)]
    await store.upsert(P, [near, worded, *other])
    hits = await store.hybrid_search(P, query, "zebra", MemoryFilter(), 3)
    ids = [h.memory.id for h in hits]
    assert "near" in ids and "worded" in ids
    assert hits == sorted(hits, key=lambda h: -h.score)
    [(_, kw)] = [(op, kw) for op, kw in engine.calls if op == "query"]
    assert kw["query"] == models.FusionQuery(fusion=models.Fusion.RRF)
    assert [p.using for p in kw["prefetch"]] == ["dense", "text"]
    # Nothing in the text ranking: dense only.
    assert [h.memory.id for h in await store.hybrid_search(P, query, "the", MemoryFilter(), 1)] == [
        "near"
    ]


async def test_search_many_equals_one_search_per_vector(
    recorded: tuple[QdrantStore, QdrantRecordStore, Recording, Recording],
) -> None:
    store, _, _, _ = recorded
    rng = np.random.default_rng(9)
    await store.upsert(P, [make_memory(P, vector=unit_vector(rng)) for _ in range(40)])
    queries = [unit_vector(rng) for _ in range(70)]  # more than one batch
    many = await store.search_many(P, queries, MemoryFilter(), Nearest(4))
    assert len(many) == 70
    for q, hits in zip(queries[:5], many[:5], strict=False):
        one = await store.search(P, q, MemoryFilter(), 4)
        assert [h.memory.id for h in hits] == [h.memory.id for h in one]
    assert await store.search_many(P, [], MemoryFilter(), Nearest(4)) == []


async def test_list_partitions(
    recorded: tuple[QdrantStore, QdrantRecordStore, Recording, Recording],
) -> None:
    store, records, _, _ = recorded
    parts = [Partition("t1", "b"), Partition("t1", "a"), Partition("", "x'"), Partition("t2", "")]
    for p in parts:
        await store.upsert(p, [make_memory(p)])
    assert await store.list_partitions() == sorted(parts, key=lambda p: (p.tenant_id, p.agent_id))
    assert await store.list_partitions("t1") == [Partition("t1", "a"), Partition("t1", "b")]
    assert await store.list_partitions("nobody") == []
    await store.delete(
        Partition("t2", ""), [m.id for m in await store.list(Partition("t2", ""), MemoryFilter())]
    )
    assert Partition("t2", "") not in await store.list_partitions()
    await records.put_records(Partition("r", "1"), [rec("k", kind=RecordKind.PROFILE)])
    await records.put_records(Partition("r", "2"), [rec("k", kind=RecordKind.STATE)])
    assert await records.list_partitions() == [Partition("r", "1"), Partition("r", "2")]


# -- writes are acknowledged once applied ----------------------------------------------


async def test_client_writes_wait_for_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await ClientEngine.connect(QdrantOptions(path=tmp_path))
    waits: list[tuple[str, object]] = []
    for name in ("upsert", "delete", "batch_update_points", "create_payload_index"):
        original = getattr(engine.client, name)

        def spy(*args: Any, _name: str = name, _orig: Any = original, **kw: Any) -> Any:
            waits.append((_name, kw.get("wait")))
            return _orig(*args, **kw)

        monkeypatch.setattr(engine.client, name, spy)
    store = QdrantStore(lambda: _ready(engine), DIM)
    await store.open()
    try:
        await store.upsert(P, [make_memory(P, id="a")])
        await store.record_access(P, {"a": AccessUpdate(1, BASE)})
        await store.delete(P, ["a"])
    finally:
        await store.close()
    assert {n for n, _ in waits} == {
        "upsert",
        "delete",
        "batch_update_points",
        "create_payload_index",
    }
    assert all(w is True for _, w in waits)


async def _ready(engine: Engine) -> Engine:
    return engine


# -- an unreachable server ----------------------------------------------------------------


@pytest.mark.parametrize("grpc", [True, False], ids=["grpc", "rest"])
async def test_unreachable_server_is_a_store_error(grpc: bool) -> None:
    port = free_port()
    options = QdrantOptions(
        url=f"http://127.0.0.1:{port}", prefer_grpc=grpc, grpc_port=port, timeout_s=2
    )
    store = QdrantStore.from_options(options, DIM)
    with pytest.raises(StoreError, match="qdrant open failed"):
        await store.open()
    with pytest.raises(StoreError, match="not open"):
        await store.count(P, MemoryFilter())
    records = QdrantRecordStore.from_options(options)
    with pytest.raises(StoreError):
        await records.open()


# -- wiring ------------------------------------------------------------------------------------


def test_registry_builds_local_mode_under_data_dir(tmp_path: Path) -> None:
    store = build_store("qdrant", data_dir=tmp_path, dimension=8)
    assert isinstance(store, QdrantStore) and store.dimension == 8
    assert store.where == f"local mode at {tmp_path / 'qdrant' / 'memories'}"
    records = build_record_store("qdrant", data_dir=tmp_path)
    assert isinstance(records, QdrantRecordStore)
    assert records.where == f"local mode at {tmp_path / 'qdrant' / 'records'}"


def test_registry_passes_server_settings(tmp_path: Path) -> None:
    settings = QdrantSettings(url="http://q:6333", api_key="s3cret", collection_prefix="x_")
    store = build_store("qdrant", data_dir=tmp_path, dimension=8, qdrant=settings)
    assert isinstance(store, QdrantStore)
    assert (store.where, store.spec.name) == ("http://q:6333 (gRPC port 6334)", "x_memories")


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORYD_STORAGE__BACKEND", "qdrant")
    monkeypatch.setenv("MEMORYD_STORAGE__QDRANT__URL", "http://qdrant:6333")
    monkeypatch.setenv("MEMORYD_STORAGE__QDRANT__API_KEY", "k")
    monkeypatch.setenv("MEMORYD_STORAGE__QDRANT__PREFER_GRPC", "false")
    s = Settings()
    q = s.storage.qdrant
    assert (s.storage.backend, q.url, q.prefer_grpc, q.grpc_port) == (
        "qdrant",
        "http://qdrant:6333",
        False,
        None,
    )
    assert q.grpc_endpoint()[0] is None  # REST, as asked
    assert q.api_key is not None and q.api_key.get_secret_value() == "k"
    assert s.masked()["storage"]["qdrant"]["api_key"] != "k"
