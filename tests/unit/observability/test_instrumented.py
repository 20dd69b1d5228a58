"""The instrumented embedder and stores: every protocol method wrapped, timed, delegated."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np
import pytest

from memoryd.config import EmbeddingSettings
from memoryd.domain.errors import EmbeddingError
from memoryd.domain.models import MemoryFilter, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.embedding import HashingEmbedder
from memoryd.embedding.base import Embedder
from memoryd.embedding.cache import CachingEmbedder
from memoryd.embedding.factory import build_embedder
from memoryd.observability.instrumented import (
    InstrumentedEmbedder,
    InstrumentedRecordStore,
    InstrumentedStore,
)
from memoryd.observability.metrics import Metrics
from memoryd.storage.base import Store, compact, disk_bytes
from memoryd.storage.delegating import DelegatingRecordStore, DelegatingStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.records import RecordStore
from tests.unit.hot_cache.helpers import DIM, memory, unit_vector
from tests.unit.observability.test_metrics import value

P = Partition("tenant", "agent")
NOW = datetime(2024, 5, 1, tzinfo=UTC)


def protocol_methods(protocol: type) -> list[str]:
    return [
        name
        for name, member in vars(protocol).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(member)
    ]


PARTITION = object()


def _argument(name: str) -> object:
    """A call's argument ``name``: the partition (or a write of it) told apart."""
    if name == "partition":
        return PARTITION
    return SimpleNamespace(partition=PARTITION) if name == "write" else None


class _Answering:
    """An inner store whose every coroutine method answers its own name."""

    name = "fake"
    capabilities = None

    def __init__(self, protocol: type) -> None:
        for method in protocol_methods(protocol):
            setattr(self, method, self._answer(method))

    @staticmethod
    def _answer(method: str) -> object:
        async def answer(*args: object, **kwargs: object) -> str:
            return method

        return answer


@pytest.mark.parametrize(
    ("protocol", "base", "wrapper"),
    [
        (Store, DelegatingStore, InstrumentedStore),
        (RecordStore, DelegatingRecordStore, InstrumentedRecordStore),
    ],
)
async def test_every_protocol_method_is_forwarded_through_one_hook(
    protocol: type, base: type, wrapper: type
) -> None:
    """A method a protocol gains must be forwarded (and timed) on purpose, not slip
    through __getattr__: the delegating base (or the base of both) writes each out, and each call but open
    and close passes ``through`` under its own name, which the wrappers time."""
    methods = protocol_methods(protocol)
    assert "open" in methods and len(methods) > 5
    written_out = {name for k in base.__mro__ if k is not object for name in vars(k)}
    assert [name for name in methods if name not in written_out] == []
    assert issubclass(wrapper, base) and wrapper.through is not base.through
    seen: list[tuple[str, object]] = []

    class Recording(base):  # type: ignore[misc, valid-type]
        async def through(
            self, operation: str, call: Awaitable[object], partition: object = None
        ) -> object:
            seen.append((operation, partition))
            return await call

    layer = Recording(_Answering(protocol))
    one_partition: set[str] = set()
    for method in methods:
        signature = inspect.signature(getattr(protocol, method))
        required = [
            p
            for p in list(signature.parameters.values())[1:]
            if p.default is inspect.Parameter.empty and p.kind is not p.KEYWORD_ONLY
        ]
        if {"partition", "write"} & {p.name for p in required}:
            one_partition.add(method)
        assert await getattr(layer, method)(*(_argument(p.name) for p in required)) == (
            None
            if method in ("open", "close", "upsert", "record_access", "put_records")
            else method
        )
    assert [operation for operation, _ in seen] == [
        name for name in methods if name not in ("open", "close")
    ]
    # A call on one partition names it to the hook (the read fence waits per
    # partition: storage/fenced.py); a call on many, or none, names none.
    assert one_partition and {
        operation: partition is PARTITION for operation, partition in seen
    } == {operation: operation in one_partition for operation, _ in seen}


async def test_store_operations_are_timed_by_operation() -> None:
    m = Metrics(process_metrics=False)
    store = InstrumentedStore(InMemoryStore(DIM), m)
    assert isinstance(store, Store) and store.name == "memory"
    await store.open()
    await store.upsert(P, [memory(P, id="a"), memory(P, id="b")])
    assert [x.id for x in await store.get(P, ["a", "zz"])] == ["a"]
    hits = await store.search(P, unit_vector(np.random.default_rng(1)), MemoryFilter(), 5)
    assert len(hits) == 2
    assert await store.count(P, MemoryFilter()) == 2
    assert await store.delete(P, ["a"]) == ["a"]
    assert await store.list_partitions() == [P]
    for op in ("upsert", "get", "search", "count", "delete", "list_partitions"):
        assert (
            value(
                m, "memoryd_store_operation_duration_seconds_count", store="memories", operation=op
            )
            == 1
        ), op
    assert value(m, "memoryd_store_errors_total", store="memories", operation="get") is None
    await store.close()


async def test_store_errors_are_counted_and_re_raised() -> None:
    m = Metrics(process_metrics=False)
    store = InstrumentedStore(InMemoryStore(DIM), m)
    wrong = memory(P, vector=np.ones(DIM + 1, dtype=np.float32))
    with pytest.raises(Exception) as raised:
        await store.upsert(P, [wrong])
    assert not isinstance(raised.value, AssertionError)
    assert value(m, "memoryd_store_errors_total", store="memories", operation="upsert") == 1
    assert (
        value(
            m,
            "memoryd_store_operation_duration_seconds_count",
            store="memories",
            operation="upsert",
        )
        == 1
    )


async def test_backend_extras_are_explicit() -> None:
    """optimize and disk_bytes reach the backend (untimed); nothing else passes."""
    inner = InMemoryStore(DIM)
    inner.extra_marker = "kept"  # type: ignore[attr-defined]
    inner.disk_bytes = lambda: 99  # type: ignore[attr-defined]
    m = Metrics(process_metrics=False)
    store = InstrumentedStore(inner, m)
    assert store.inner is inner
    assert disk_bytes(store) == 99
    assert await compact(store) is False  # the in-memory store has nothing to compact
    assert await compact(InstrumentedRecordStore(InMemoryRecordStore(), m)) is False
    with pytest.raises(AttributeError):
        _ = store.extra_marker  # type: ignore[attr-defined]


async def test_record_store_operations_are_timed() -> None:
    m = Metrics(process_metrics=False)
    records = InstrumentedRecordStore(InMemoryRecordStore(), m)
    assert isinstance(records, RecordStore)
    await records.open()
    doc = Record(RecordKind.PROFILE, "agent.md", {"content": "x"}, 1, NOW)
    await records.put_records(P, [doc])
    assert [r.key for r in await records.get_records(P, RecordKind.PROFILE, ["agent.md"])] == [
        "agent.md"
    ]
    assert len(await records.list_records(P, RecordKind.PROFILE)) == 1
    assert await records.count_records(P, RecordKind.PROFILE) == 1
    assert await records.delete_records(P, RecordKind.PROFILE, ["agent.md"]) == ["agent.md"]
    for op in ("put_records", "get_records", "list_records", "count_records", "delete_records"):
        assert (
            value(
                m, "memoryd_store_operation_duration_seconds_count", store="records", operation=op
            )
            == 1
        ), op
    await records.close()


async def test_embedder_calls_are_timed_with_their_batch_size() -> None:
    m = Metrics(process_metrics=False)
    embedder = InstrumentedEmbedder(HashingEmbedder(32), m)
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 32 and embedder.model_id == HashingEmbedder(32).model_id
    out = await embedder.embed(["a", "b", "c"], kind="document")
    await embedder.embed(["q"], kind="query")
    assert out.shape == (3, 32)
    model = embedder.model_id
    assert value(m, "memoryd_embedding_batch_size_sum", model=model, kind="document") == 3
    assert value(m, "memoryd_embedding_batch_size_count", model=model, kind="query") == 1
    assert value(m, "memoryd_embedding_duration_seconds_count", model=model, kind="query") == 1


class BrokenEmbedder(HashingEmbedder):
    async def embed(self, texts, *, kind="document"):  # type: ignore[no-untyped-def]
        raise EmbeddingError("provider down")


async def test_embedder_failures_are_counted() -> None:
    m = Metrics(process_metrics=False)
    embedder = InstrumentedEmbedder(BrokenEmbedder(16), m)
    with pytest.raises(EmbeddingError):
        await embedder.embed(["a"])
    assert value(m, "memoryd_embedding_errors_total", model=embedder.model_id) == 1
    assert (
        value(
            m, "memoryd_embedding_duration_seconds_count", model=embedder.model_id, kind="document"
        )
        is None
    )


async def test_factory_wraps_the_model_under_the_cache() -> None:
    """Cache hits never reach the model, so they are not timed as model calls."""
    m = Metrics(process_metrics=False)
    settings = EmbeddingSettings(hashing_dimension=16, cache_size=10)
    built = build_embedder("hashing", settings, wrap=lambda e: InstrumentedEmbedder(e, m))
    assert isinstance(built, CachingEmbedder) and isinstance(built.inner, InstrumentedEmbedder)
    m.watch_cache("embedding", built)
    await built.embed(["same", "same", "other"])
    await built.embed(["same"])
    model = built.model_id
    assert value(m, "memoryd_embedding_duration_seconds_count", model=model, kind="document") == 1
    assert value(m, "memoryd_embedding_batch_size_sum", model=model, kind="document") == 2
    assert value(m, "memoryd_cache_misses_total", cache="embedding") == 2
    assert value(m, "memoryd_cache_hits_total", cache="embedding") == 2
    assert value(m, "memoryd_cache_entries", cache="embedding") == 2
