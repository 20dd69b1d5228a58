"""Every read a Qdrant store sends carries its read consistency
(storage.qdrant.read_consistency): none for "one" (Qdrant's default) and in local mode.

With replication, a read answered by one copy may come from a copy that missed an
acknowledged write (its node was down, or is being recovered): replicas would read an
older value back. The consistency is set in one place, the engine, for every read
method; the matrix below is generated from the Engine protocol, so a read method
added without it fails here. What is checked is what goes over the transport: the
gRPC messages memoryd builds itself (wire.PointsChannel) and the arguments of the
qdrant-client calls the rest goes through (gRPC and REST); the recorders answer
empty results, or refuse a read that carries a consistency the way Qdrant refuses one
whose shard has too few active copies (then the engine reads from one copy).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from qdrant_client import AsyncQdrantClient, models
from qdrant_client import grpc as qgrpc
from qdrant_client.conversions.conversion import RestToGrpc

from memoryd.storage.qdrant.engine import TOO_FEW_COPIES, ClientEngine, Engine, QdrantOptions
from memoryd.storage.registry import qdrant_options
from memoryd.storage.settings import QdrantSettings
from tests.qdrant_server import free_port

#: The Engine methods that change nothing; every other one is a read.
WRITES = frozenset({"open_collection", "upsert", "upsert_if", "delete", "set_payloads", "close"})
READS = (
    frozenset(
        name
        for name, fn in vars(Engine).items()
        if inspect.isfunction(fn) and not name.startswith("_")
    )
    - WRITES
)

_FLT = models.Filter(must=[models.FieldCondition(key="t", match=models.MatchValue(value="a"))])
_ID = "7d1e2c3b-0000-4000-8000-000000000001"

#: One call of each read method.
CALLS: dict[str, Callable[[Engine], Awaitable[object]]] = {
    "retrieve": lambda e: e.retrieve("c", [_ID], with_vectors=True),
    "query": lambda e: e.query(
        "c", models.QueryRequest(query=[0.5, 0.5], using="dense", filter=_FLT, limit=3)
    ),
    "query_batch": lambda e: e.query_batch(
        "c", [models.QueryRequest(query=[0.5, 0.5], using="dense", filter=_FLT, limit=3)]
    ),
    "scroll": lambda e: e.scroll("c", models.ScrollRequest(filter=_FLT, limit=3)),
    "facet": lambda e: e.facet("c", "tenant", _FLT, 10),
    "count": lambda e: e.count("c", _FLT),
}

#: What the transports answer (empty results).
_GRPC_ANSWERS: dict[str, object] = {
    "Get": qgrpc.GetResponse(),
    "Query": qgrpc.QueryResponse(),
    "QueryBatch": qgrpc.QueryBatchResponse(),
    "Scroll": qgrpc.ScrollResponse(),
    "Count": qgrpc.CountResponse(result=qgrpc.CountResult(count=0)),
}
_CLIENT_ANSWERS: dict[str, object] = {
    "retrieve": [],
    "query_points": SimpleNamespace(points=[]),
    "query_batch_points": [],
    "scroll": ([], None),
    "facet": models.FacetResponse(hits=[]),
    "count": models.CountResult(count=0),
    "count_points": SimpleNamespace(result=models.CountResult(count=0)),
}

#: (the request sent, the consistency it carries: a REST value, or None for none).
Sent = list[tuple[str, object]]


class _Refused(Exception):
    """What the server answers a read with a consistency (``refuse``)."""


class _PointsStub:
    """The Points service as wire.PointsChannel calls it: keeps each message."""

    def __init__(self, sent: Sent, refuse: str | None) -> None:
        self._sent = sent
        self._refuse = refuse

    def __getattr__(self, method: str) -> Callable[..., Awaitable[object]]:
        answer = _GRPC_ANSWERS[method]

        async def call(request: Any, **_: object) -> object:
            carried = request.read_consistency if request.HasField("read_consistency") else None
            self._sent.append((f"grpc {method}", carried))
            if carried is not None and self._refuse is not None:
                raise _Refused(self._refuse)
            return answer

        return call


class _Client:
    """The qdrant-client calls the engine makes (and REST's count): keeps each
    call's ``consistency`` argument."""

    def __init__(self, sent: Sent, refuse: str | None) -> None:
        self._sent = sent
        self._refuse = refuse
        self.http = SimpleNamespace(points_api=self)

    async def close(self) -> None:
        """Nothing to close: nothing was opened."""

    def __getattr__(self, method: str) -> Callable[..., Awaitable[object]]:
        answer = _CLIENT_ANSWERS[method]

        async def call(*_: object, **kwargs: object) -> object:
            carried = kwargs.get("consistency")
            self._sent.append((f"client {method}", carried))
            if carried is not None and self._refuse is not None:
                raise _Refused(self._refuse)
            return answer

        return call


async def _engine(options: QdrantOptions, sent: Sent, refuse: str | None = None) -> ClientEngine:
    engine = await ClientEngine.connect(options)
    await engine.client.close()
    engine.client = cast(AsyncQdrantClient, _Client(sent, refuse))
    if engine._wire is not None:
        engine._wire._points = _PointsStub(sent, refuse)
    return engine


def _options(grpc: bool, **kw: Any) -> QdrantOptions:
    port = free_port()  # nothing listens: every request must reach the recorders
    return QdrantOptions(url=f"http://127.0.0.1:{port}", prefer_grpc=grpc, grpc_port=port, **kw)


def test_every_read_method_of_the_engine_is_in_the_matrix() -> None:
    assert set(CALLS) == READS, "a new Engine read: add it to CALLS (and give it consistency)"


@pytest.mark.parametrize("grpc", [True, False], ids=["grpc", "rest"])
@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"shared": True, "read_consistency": "majority"}, models.ReadConsistencyType.MAJORITY),
        ({"shared": True, "read_consistency": "all"}, models.ReadConsistencyType.ALL),
        ({"shared": True}, None),
        ({"shared": False}, None),
        ({"shared": False, "read_consistency": "quorum"}, models.ReadConsistencyType.QUORUM),
    ],
    ids=["shared-majority", "shared-all", "shared", "single-owner", "single-owner-quorum"],
)
@pytest.mark.parametrize("method", sorted(READS))
async def test_every_read_carries_the_store_s_consistency(
    method: str,
    settings: dict[str, Any],
    expected: models.ReadConsistencyType | None,
    grpc: bool,
) -> None:
    sent: Sent = []
    engine = await _engine(_options(grpc, **settings), sent)
    try:
        await CALLS[method](engine)
    finally:
        await engine.close()
    want = None if expected is None else RestToGrpc.convert_read_consistency(expected)
    assert sent, f"{method} sent nothing"
    for request, carried in sent:
        wanted = want if request.startswith("grpc") else expected
        assert carried == wanted, (method, request, carried)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"url": "http://q:6333"}, None),  # Qdrant's default, shared or not
        (
            {"url": "http://q:6333", "read_consistency": "majority"},
            models.ReadConsistencyType.MAJORITY,
        ),
        (
            {"url": "http://q:6333", "shared": False, "read_consistency": "all"},
            models.ReadConsistencyType.ALL,
        ),
        ({"url": "http://q:6333", "read_consistency": "quorum"}, models.ReadConsistencyType.QUORUM),
        ({"url": "http://q:6333", "read_consistency": "one"}, None),
        ({}, None),  # local mode: one process, one copy
        ({"read_consistency": "all"}, None),
    ],
)
def test_settings_choose_the_consistency(
    settings: dict[str, Any], expected: models.ReadConsistencyType | None, tmp_path: Path
) -> None:
    options = qdrant_options(QdrantSettings(**settings), tmp_path, "memories")
    assert options.consistency == expected


@pytest.mark.parametrize("grpc", [True, False], ids=["grpc", "rest"])
@pytest.mark.parametrize("method", sorted(READS))
async def test_a_shard_short_of_active_copies_is_read_from_the_copies_left(
    method: str, grpc: bool
) -> None:
    """A node down: Qdrant refuses a majority read of its shards; the read goes on
    with one copy (an active one: the copy that took every write acknowledged since)."""
    sent: Sent = []
    refusal = f"Service internal error: The replica set for shard 1 on peer 7 {TOO_FEW_COPIES}"
    options = _options(grpc, shared=True, read_consistency="majority")
    engine = await _engine(options, sent, refuse=refusal)
    try:
        await CALLS[method](engine)
    finally:
        await engine.close()
    carried = [c is not None for _, c in sent]
    assert carried == [True, False], (method, sent)


@pytest.mark.parametrize("method", sorted(READS))
async def test_any_other_refusal_is_not_retried(method: str) -> None:
    sent: Sent = []
    options = _options(True, shared=True, read_consistency="majority")
    engine = await _engine(options, sent, refuse="Bad request: no such field")
    try:
        with pytest.raises(_Refused):
            await CALLS[method](engine)
    finally:
        await engine.close()
    assert len(sent) == 1
