"""wire.py builds the gRPC messages of memoryd's most frequent Qdrant calls itself:
they must be exactly the messages qdrant-client's own conversion builds, for every
shape the stores send (and anything else must go through the client's conversion)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np
import pytest
from qdrant_client import models
from qdrant_client.conversions.conversion import RestToGrpc

from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.storage.qdrant import sparse, wire
from memoryd.storage.qdrant.filters import memory_conditions, scoped
from memoryd.storage.qdrant.schema import DENSE, SPARSE, memory_payload, memory_point_id

P = Partition("t", "a")


def _memory(content: str) -> Memory:
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    vector = np.random.default_rng(len(content)).standard_normal(8).astype(np.float32)
    return Memory(
        id=str(uuid.uuid4()),
        tenant_id=P.tenant_id,
        agent_id=P.agent_id,
        content=content,
        created_at=now,
        updated_at=now,
        tags=("x", "y"),
        metadata={"k": [1, 2.5, None, True, {"n": "v"}]},
        vector=vector,
        embedding_model="m",
        embedding_dimension=8,
    )


@pytest.mark.parametrize("content", ["the deploy freeze starts on Friday", "", "日本語のテキスト"])
def test_a_point_is_the_message_the_client_builds(content: str) -> None:
    m = _memory(content)
    vector: dict[str, object] = {DENSE: np.asarray(m.vector, dtype=np.float32).tolist()}
    text = sparse.document_vector(m.content)
    if text is not None:
        vector[SPARSE] = text
    point = models.PointStruct.model_construct(
        id=memory_point_id(P, m.id), vector=vector, payload=memory_payload(m)
    )
    assert wire.point(point) == RestToGrpc.convert_point_struct(point)


def test_other_points_go_through_the_client() -> None:
    point = models.PointStruct(id=7, vector=[0.5, 0.25], payload={"a": 1})
    assert wire.point(point) == RestToGrpc.convert_point_struct(point)


def _requests() -> list[models.QueryRequest]:
    flt = scoped(P, *memory_conditions(MemoryFilter(max_security_level=SecurityLevel.INTERNAL)))
    dense = [0.5, -0.25, 0.125, 1.0]
    terms = models.SparseVector(indices=[3, 9], values=[1.0, 1.0])
    return [
        models.QueryRequest(query=dense, using=DENSE, filter=flt, limit=5, with_payload=True),
        models.QueryRequest(
            query=dense, using=DENSE, filter=flt, limit=5, with_payload=True, score_threshold=0.9
        ),
        models.QueryRequest(query=dense, using=DENSE, limit=3),
        models.QueryRequest(query=dense, using=DENSE, filter=flt, limit=3, with_vector=[DENSE]),
        models.QueryRequest(query=terms, using=SPARSE, filter=flt, limit=3, with_payload=True),
        models.QueryRequest(
            query=models.FusionQuery(fusion=models.Fusion.RRF),
            prefetch=[
                models.Prefetch(query=dense, using=DENSE, filter=flt, limit=20),
                models.Prefetch(query=terms, using=SPARSE, filter=flt, limit=20),
            ],
            filter=flt,
            limit=5,
            with_payload=True,
        ),
    ]


def test_queries_are_the_messages_the_client_builds() -> None:
    convert = wire.QueryConverter("c")
    for request in _requests():
        assert convert(request) == RestToGrpc.convert_query_request(request, "c")
