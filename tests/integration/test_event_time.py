"""Event time over real gRPC (a real daemon: LanceDB on disk, the local model):
occurred_at is stored, returned, updated and cleared through the update mask, and a
recall naming a day, relative to the request's now, puts that day's memory first."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import grpc
import pytest
from google.protobuf import field_mask_pb2, timestamp_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub


def ts(value: datetime) -> timestamp_pb2.Timestamp:
    out = timestamp_pb2.Timestamp()
    out.FromDatetime(value)
    return out


MEALS = [
    ("Kate cooked a mushroom risotto for dinner", datetime(2024, 1, 8, 19, tzinfo=UTC)),
    ("Kate cooked a spicy curry for dinner", datetime(2024, 1, 5, 19, tzinfo=UTC)),
    ("Kate cooked pasta with ham and peas for dinner", datetime(2023, 12, 29, 19, tzinfo=UTC)),
]


def test_occurred_at_is_stored_returned_updated_and_cleared(memory_stub: MemoryServiceStub) -> None:
    agent = f"event-{uuid.uuid4().hex[:8]}"
    when = datetime(2023, 12, 29, 19, 30, tzinfo=UTC)
    created = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="Kate made pasta", occurred_at=ts(when))
    ).memory
    assert created.occurred_at.ToDatetime(tzinfo=UTC) == when
    assert created.created_at.ToDatetime(tzinfo=UTC) > when  # learned now, happened then
    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=created.id)).memory
    assert got.occurred_at == created.occurred_at

    later = datetime(2023, 12, 30, 12, tzinfo=UTC)
    mask = field_mask_pb2.FieldMask(paths=["occurred_at"])
    patch = pb.Memory(id=created.id, occurred_at=ts(later))
    updated = memory_stub.UpdateMemory(
        mpb.UpdateMemoryRequest(agent_id=agent, memory=patch, update_mask=mask)
    ).memory
    assert updated.occurred_at.ToDatetime(tzinfo=UTC) == later
    assert updated.content == "Kate made pasta"
    cleared = memory_stub.UpdateMemory(
        mpb.UpdateMemoryRequest(agent_id=agent, memory=pb.Memory(id=created.id), update_mask=mask)
    ).memory
    assert not cleared.HasField("occurred_at")


def test_an_invalid_event_time_is_rejected_naming_the_field(
    memory_stub: MemoryServiceStub,
) -> None:
    bad = timestamp_pb2.Timestamp(seconds=400_000_000_000)  # past year 9999
    item = mpb.RememberRequest(content="x", occurred_at=bad)
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id="event-bad", items=[item]))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "items[0].occurred_at" in (err.value.details() or "")


def test_a_recall_naming_a_day_finds_that_day_s_memory(memory_stub: MemoryServiceStub) -> None:
    agent = f"event-{uuid.uuid4().hex[:8]}"
    items = [mpb.RememberRequest(content=text, occurred_at=ts(when)) for text, when in MEALS]
    memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    now = datetime(2024, 1, 10, 9, tzinfo=UTC)
    for query, expected in (
        ("what did Kate cook on 29 Dec 2023?", MEALS[2][0]),
        ("what did Kate cook five days ago?", MEALS[1][0]),
        ("what did Kate cook the day before yesterday?", MEALS[0][0]),
    ):
        results = memory_stub.Recall(
            mpb.RecallRequest(agent_id=agent, query=query, now=ts(now))
        ).results
        assert results[0].memory.content == expected, query
        assert results[0].components.temporal == 1.0
        assert [r.components.temporal for r in results[1:]] == [0.0, 0.0]
