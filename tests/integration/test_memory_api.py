"""MemoryService over real gRPC against a real daemon (LanceDB on disk, local model)."""

from __future__ import annotations

import math
import uuid

import grpc
import numpy as np
import pytest
from google.protobuf import field_mask_pb2, struct_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import default_model_id


def fresh_agent() -> str:
    return f"agent-{uuid.uuid4().hex[:10]}"


def violations(err: grpc.RpcError) -> dict[str, str]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None, "INVALID_ARGUMENT must carry google.rpc.Status details"
    out: dict[str, str] = {}
    for detail in status.details:
        bad = error_details_pb2.BadRequest()
        assert detail.Unpack(bad)
        out.update({v.field: v.description for v in bad.field_violations})
    return out


def count(stub: MemoryServiceStub, agent: str) -> int:
    return len(
        stub.ListMemories(
            mpb.ListMemoriesRequest(agent_id=agent, page_size=500, include_archived=True)
        ).memories
    )


def test_remember_get_list_update_forget_round_trip(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    meta = struct_pb2.Struct()
    meta.update({"turn": 3, "nested": {"ok": True}})
    req = mpb.RememberRequest(
        agent_id=agent,
        content="Alice's birthday is on the 3rd of May",
        memory_type=pb.MEMORY_TYPE_FACT,
        tags=["birthday", "alice"],
        security_level=pb.SECURITY_LEVEL_CONFIDENTIAL,
        importance=0.8,
        namespace="user-1",
        metadata=meta,
        source=pb.Provenance(kind=pb.PROVENANCE_KIND_USER, name="chat"),
    )
    created = memory_stub.Remember(req).memory
    assert created.id and created.tenant_id == "default" and created.agent_id == agent
    assert created.version == 1 and created.embedding_dimension == 384
    assert created.embedding_model == default_model_id()
    assert list(created.tags) == ["birthday", "alice"]
    assert created.metadata["nested"]["ok"] is True

    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=created.id)).memory
    assert got.content == req.content and got.importance == pytest.approx(0.8)
    assert got.security_level == pb.SECURITY_LEVEL_CONFIDENTIAL and got.namespace == "user-1"

    listed = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id=agent)).memories
    assert [m.id for m in listed] == [created.id]

    patch = mpb.UpdateMemoryRequest(
        agent_id=agent,
        memory=pb.Memory(
            id=created.id, content="Alice's birthday is on the 4th of May", tags=["alice"]
        ),
        update_mask=field_mask_pb2.FieldMask(paths=["content", "tags"]),
        if_version=1,
    )
    updated = memory_stub.UpdateMemory(patch).memory
    assert updated.version == 2 and list(updated.tags) == ["alice"] and "4th" in updated.content

    with pytest.raises(grpc.RpcError) as stale:
        memory_stub.UpdateMemory(patch)  # if_version 1 is stale now
    assert stale.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    hits = memory_stub.Recall(
        mpb.RecallRequest(agent_id=agent, query="when is Alice's birthday?")
    ).results
    assert hits[0].memory.id == created.id and "4th" in hits[0].memory.content

    forgotten = memory_stub.ForgetMemories(
        mpb.ForgetMemoriesRequest(agent_id=agent, ids=[created.id, "nope"])
    )
    assert list(forgotten.forgotten_ids) == [created.id]
    with pytest.raises(grpc.RpcError) as missing:
        memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=created.id))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_recall_ranks_by_meaning_and_returns_components(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    texts = [
        "The user prefers a dark blue colour scheme for slides",
        "The quarterly report is due on Friday",
        "Bob is allergic to peanuts",
        "The team uses PostgreSQL 16 in production",
        "Meetings on Mondays start at 9am",
    ]
    batch = mpb.RememberBatchRequest(
        agent_id=agent, items=[mpb.RememberRequest(content=t) for t in texts]
    )
    ids = [r.memory.id for r in memory_stub.RememberBatch(batch).results]
    assert len(set(ids)) == len(texts)

    for preset in (
        mpb.SCORING_PRESET_SIMILARITY,
        mpb.SCORING_PRESET_DECAYED,
        mpb.SCORING_PRESET_WEIGHTED,
    ):
        resp = memory_stub.Recall(
            mpb.RecallRequest(
                agent_id=agent,
                query="what colours does the user like?",
                limit=3,
                scoring=mpb.Scoring(preset=preset),
                hybrid=False,  # vector-only: the preset formulas over cosine similarity
            )
        )
        assert resp.embedding_model == default_model_id()
        assert len(resp.results) == 3
        top = resp.results[0]
        assert top.memory.id == ids[0]
        c = top.components
        assert 0 < c.similarity <= 1 and 0 < c.recency <= 1
        assert c.decayed == pytest.approx(c.similarity * c.recency)
        assert c.weighted == pytest.approx(
            0.6 * c.similarity + 0.2 * c.recency + 0.2 * c.importance
        )
        expected = {1: c.similarity, 2: c.decayed, 3: c.weighted}[preset]
        assert top.score == pytest.approx(expected)
        scores = [r.score for r in resp.results]
        assert scores == sorted(scores, reverse=True)


def test_recall_filters_apply(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    items = [
        mpb.RememberRequest(
            content="Coffee order: oat flat white",
            tags=["food"],
            namespace="u1",
            memory_type=pb.MEMORY_TYPE_PREFERENCE,
        ),
        mpb.RememberRequest(
            content="Coffee machine is on floor 2", tags=["office"], namespace="u2"
        ),
        mpb.RememberRequest(
            content="Coffee budget is secret",
            tags=["food"],
            namespace="u1",
            security_level=pb.SECURITY_LEVEL_RESTRICTED,
        ),
    ]
    memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))

    def contents(**kw: object) -> set[str]:
        req = mpb.RecallRequest(agent_id=agent, query="coffee", limit=10, **kw)  # type: ignore[arg-type]
        return {r.memory.content for r in memory_stub.Recall(req).results}

    assert len(contents()) == 3
    assert contents(namespace="u2") == {"Coffee machine is on floor 2"}
    assert contents(tags=["office"]) == {"Coffee machine is on floor 2"}
    assert contents(memory_types=[pb.MEMORY_TYPE_PREFERENCE]) == {"Coffee order: oat flat white"}
    assert "Coffee budget is secret" not in contents(
        max_security_level=pb.SECURITY_LEVEL_CONFIDENTIAL
    )
    assert contents(namespace="") == set()


def test_query_embedding_recall(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    a = [1.0] + [0.0] * 383
    b = [0.0, 1.0] + [0.0] * 382
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="vector a", embedding=a))
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="vector b", embedding=b))
    res = memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query_embedding=b, limit=2)).results
    assert [r.memory.content for r in res] == ["vector b", "vector a"]
    assert res[0].components.similarity == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("magnitude", [1e-30, 1e-40, 1e30])
def test_vectors_of_extreme_magnitude_keep_their_direction(
    memory_stub: MemoryServiceStub, magnitude: float
) -> None:
    # Valid (finite, not zero) but their float32 norm underflows or overflows: they
    # were stored as NaN or zeros and scored NaN or inf.
    agent = fresh_agent()
    direction = np.zeros(384, dtype=np.float32)
    direction[:4] = [3.0, -1.0, 2.0, 0.5]
    other = np.roll(direction, 7)
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="other", embedding=other))
    kept = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="extreme", embedding=direction * magnitude)
    ).memory
    found = memory_stub.Recall(
        mpb.RecallRequest(agent_id=agent, query_embedding=direction * magnitude, limit=2)
    ).results
    assert [r.memory.id for r in found] == [kept.id, found[1].memory.id]
    assert found[1].memory.content == "other"
    assert found[0].components.similarity == pytest.approx(1.0, abs=1e-5)
    assert all(math.isfinite(r.score) for r in found)


def test_pagination_visits_everything_once_and_tokens_are_bound(
    memory_stub: MemoryServiceStub,
) -> None:
    agent = fresh_agent()
    items = [mpb.RememberRequest(content=f"fact number {i}") for i in range(23)]
    memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    seen: list[str] = []
    token = ""
    first_token = ""
    while True:
        page = memory_stub.ListMemories(
            mpb.ListMemoriesRequest(agent_id=agent, page_size=5, page_token=token)
        )
        seen.extend(m.id for m in page.memories)
        token = page.next_page_token
        first_token = first_token or token
        if not token:
            break
    assert len(seen) == 23 == len(set(seen))

    other = fresh_agent()
    for bad_req in (
        mpb.ListMemoriesRequest(
            agent_id=other, page_size=5, page_token=first_token
        ),  # another caller
        mpb.ListMemoriesRequest(
            agent_id=agent, page_size=5, page_token=first_token, tags=["x"]
        ),  # another query
        mpb.ListMemoriesRequest(
            agent_id=agent, page_size=5, page_token=first_token[:-2] + "AA"
        ),  # tampered
        mpb.ListMemoriesRequest(agent_id=agent, page_size=5, page_token="not-a-token"),
    ):
        with pytest.raises(grpc.RpcError) as err:
            memory_stub.ListMemories(bad_req)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "page_token" in violations(err.value)


BAD_REMEMBERS = [
    ({"content": ""}, "content"),
    ({"content": "   "}, "content"),
    ({"content": "x" * (8 * 1024 + 1)}, "content"),
    ({"content": "ok", "memory_type": 99}, "memory_type"),
    ({"content": "ok", "security_level": 42}, "security_level"),
    ({"content": "ok", "importance": 1.5}, "importance"),
    ({"content": "ok", "confidence": -0.1}, "confidence"),
    ({"content": "ok", "embedding": [0.1] * 10}, "embedding"),
    ({"content": "ok", "embedding": [0.0] * 384}, "embedding"),
    ({"content": "ok", "tags": [""]}, "tags[0]"),
    (
        {"content": "ok", "source": pb.Provenance(kind=pb.PROVENANCE_KIND_WEB, name="site")},
        "source.locator",
    ),
    ({"content": "ok", "source": pb.Provenance(kind=99)}, "source.kind"),
]


@pytest.mark.parametrize(("fields", "field"), BAD_REMEMBERS)
def test_bad_remember_is_invalid_argument_and_stores_nothing(
    memory_stub: MemoryServiceStub, fields: dict[str, object], field: str
) -> None:
    agent = fresh_agent()
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.Remember(mpb.RememberRequest(agent_id=agent, **fields))  # type: ignore[arg-type]
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in violations(err.value), violations(err.value)
    assert count(memory_stub, agent) == 0


def test_bad_metadata_nan_is_rejected(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    meta = struct_pb2.Struct()
    meta["x"] = float("nan")
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="ok", metadata=meta))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "metadata.x" in violations(err.value)
    assert count(memory_stub, agent) == 0


def test_metadata_integer_past_64_bits_is_rejected(memory_stub: MemoryServiceStub) -> None:
    """Neither the write-ahead log nor Qdrant's payloads hold it: refused at the door,
    never a failure behind the answer."""
    agent = fresh_agent()
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.Remember(
            mpb.RememberRequest(
                agent_id=agent, content="ok", metadata_json='{"n": {"id": 1180591620717411303424}}'
            )
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    said = violations(err.value)
    assert any(f.startswith("metadata") and "past 64 bits" in d for f, d in said.items()), said
    assert count(memory_stub, agent) == 0


def test_bad_batch_stores_nothing_and_names_the_item(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    items = [
        mpb.RememberRequest(content="fine"),
        mpb.RememberRequest(content=""),
        mpb.RememberRequest(content="ok"),
    ]
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    assert "items[1].content" in violations(err.value)
    assert count(memory_stub, agent) == 0
    with pytest.raises(grpc.RpcError) as other_agent:
        memory_stub.RememberBatch(
            mpb.RememberBatchRequest(
                agent_id=agent, items=[mpb.RememberRequest(agent_id="x", content="a")]
            )
        )
    assert "items[0].agent_id" in violations(other_agent.value)
    with pytest.raises(grpc.RpcError) as empty:
        memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent))
    assert "items" in violations(empty.value)


def test_a_batch_with_every_item_bad_still_answers_invalid_argument(
    memory_stub: MemoryServiceStub,
) -> None:
    """1,000 violations must not overflow gRPC's 16 KiB metadata limit (which turns
    the answer into RESOURCE_EXHAUSTED without a reason)."""
    agent = fresh_agent()
    items = [mpb.RememberRequest(content=f"item {i}", embedding=[0.5] * 7) for i in range(1000)]
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    found = violations(err.value)
    assert "items[0].embedding" in found and "items[49].embedding" in found
    assert found["request"] == "950 more violations not listed"
    assert "and 995 more" in (err.value.details() or "")
    assert count(memory_stub, agent) == 0


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"query": "x", "limit": -1}, "limit"),
        ({"query": "x", "limit": 101}, "limit"),
        ({"query": ""}, "query"),
        ({"query": "x", "memory_types": [0]}, "memory_types[0]"),
        ({"query": "x", "tag_match": 7}, "tag_match"),
        ({"query": "x", "max_security_level": 9}, "max_security_level"),
        ({"query_embedding": [1.0, 2.0]}, "query_embedding"),
        ({"query": "x", "scoring": mpb.Scoring(preset=9)}, "scoring.preset"),
        ({"query": "x", "scoring": mpb.Scoring(half_life_hours=0)}, "scoring.half_life_hours"),
    ],
)
def test_bad_recall(
    memory_stub: MemoryServiceStub, request_fields: dict[str, object], field: str
) -> None:
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.Recall(mpb.RecallRequest(agent_id=fresh_agent(), **request_fields))  # type: ignore[arg-type]
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in violations(err.value)


@pytest.mark.parametrize("agent_id", ["", "has space", "a/b", "x" * 129, "tab\tbed"])
def test_bad_agent_id(memory_stub: MemoryServiceStub, agent_id: str) -> None:
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.Remember(mpb.RememberRequest(agent_id=agent_id, content="hello"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "agent_id" in violations(err.value)


def test_bad_update_mask(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    created = memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="some fact")).memory
    for paths, field in (
        (["id"], "update_mask"),
        ([], "update_mask"),
        (["content"], "memory.content"),
    ):
        req = mpb.UpdateMemoryRequest(
            agent_id=agent,
            memory=pb.Memory(id=created.id),
            update_mask=field_mask_pb2.FieldMask(paths=paths),
        )
        with pytest.raises(grpc.RpcError) as err:
            memory_stub.UpdateMemory(req)
        assert field in violations(err.value)
    assert (
        memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=created.id)).memory.version
        == 1
    )


def test_other_agents_memories_do_not_exist(memory_stub: MemoryServiceStub) -> None:
    a, b = fresh_agent(), fresh_agent()
    mine = memory_stub.Remember(mpb.RememberRequest(agent_id=a, content="private to a")).memory
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=b, id=mine.id))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert (
        memory_stub.ForgetMemories(
            mpb.ForgetMemoriesRequest(agent_id=b, ids=[mine.id])
        ).forgotten_ids
        == []
    )
    assert memory_stub.Recall(mpb.RecallRequest(agent_id=b, query="private to a")).results == []
    assert memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=a, id=mine.id)).memory.id == mine.id


def test_request_id_is_returned(memory_stub: MemoryServiceStub) -> None:
    _, call = memory_stub.Recall.with_call(
        mpb.RecallRequest(agent_id=fresh_agent(), query="x"),
        metadata=(("x-request-id", "req-123"),),
    )
    assert ("x-request-id", "req-123") in tuple(call.trailing_metadata() or ())
