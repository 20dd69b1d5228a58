"""As-of reads over real gRPC (a real daemon: LanceDB on disk, the local model,
docs/as-of.md): after memories are updated, forgotten and keys rewritten, the reads as
of an earlier instant answer what they answered then (the snapshot byte for byte), and
bad or too-old ``as_of`` values are refused naming the field."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.protobuf import field_mask_pb2, timestamp_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub
from tests.conftest import Daemon
from tests.integration.test_memory_api import violations

USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)


def between_writes() -> datetime:
    """An instant after the last answered write and before the next request: the
    daemon stamps a write when it takes it (storage/write_stamp.py), on this machine's
    clock, so the answer before and the request after bound it with no sleep."""
    return datetime.now(UTC)


def at(when: datetime) -> pb.AsOf:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(when)
    return pb.AsOf(time=stamp)


@pytest.fixture(scope="module")
def snapshot_stub(shared_daemon: Daemon) -> Iterator[SnapshotServiceStub]:
    with shared_daemon.channel() as channel:
        yield SnapshotServiceStub(channel)


def _reads(
    memory: MemoryServiceStub, snapshot: SnapshotServiceStub, agent: str, as_of: pb.AsOf | None
) -> tuple[str, list[str], str, str, list[str]]:
    """BuildSnapshot's text, Recall's ids, DefaultRead's text, GetKey's content and
    ListKeys' keys (now, or as of ``as_of``)."""
    extra = {} if as_of is None else {"as_of": as_of}
    snap = snapshot.BuildSnapshot(
        spb.BuildSnapshotRequest(agent_id=agent, trigger="what does the user drink?", **extra)
    )
    hits = memory.Recall(mpb.RecallRequest(agent_id=agent, query="drink", limit=5, **extra))
    read = snapshot.DefaultRead(spb.DefaultReadRequest(agent_id=agent, **extra))
    key = memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/user/drink", **extra))
    keys = memory.ListKeys(mpb.ListKeysRequest(agent_id=agent, prefix="/", recursive=True, **extra))
    return (
        snap.text,
        [r.memory.id for r in hits.results],
        read.text,
        key.entry.content_json if key.entry.valid else "",
        [e.key for e in keys.entries],
    )


def test_reads_as_of_an_earlier_instant_answer_what_they_answered_then(
    memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub
) -> None:
    agent = f"asof-{uuid.uuid4().hex[:8]}"
    tea = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="The user drinks green tea every morning")
    ).memory
    coffee = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="The user drinks coffee after lunch")
    ).memory
    memory_stub.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/user/drink", content_json='"green tea"', source=USER
        )
    )
    then = _reads(memory_stub, snapshot_stub, agent, None)
    instant = between_writes()

    mask = field_mask_pb2.FieldMask(paths=["content"])
    memory_stub.UpdateMemory(
        mpb.UpdateMemoryRequest(
            agent_id=agent,
            memory=pb.Memory(id=tea.id, content="The user switched to black tea"),
            update_mask=mask,
        )
    )
    memory_stub.ForgetMemories(mpb.ForgetMemoriesRequest(agent_id=agent, ids=[coffee.id]))
    memory_stub.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/user/drink", content_json='"black tea"', source=USER
        )
    )
    memory_stub.SetMemory(
        mpb.SetMemoryRequest(agent_id=agent, key="/user/food", content_json='"rice"', source=USER)
    )
    now = _reads(memory_stub, snapshot_stub, agent, None)
    assert now != then and "black tea" in now[0] and "coffee" not in now[0]

    assert _reads(memory_stub, snapshot_stub, agent, at(instant)) == then
    assert "green tea" in then[0] and "coffee" in then[0]


@pytest.mark.parametrize(
    ("as_of", "code"),
    [
        (pb.AsOf(), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.AsOf(cursor="not-a-cursor"), grpc.StatusCode.INVALID_ARGUMENT),
        (at(datetime.now(UTC) + timedelta(days=1)), grpc.StatusCode.INVALID_ARGUMENT),
        (at(datetime(2001, 1, 1, tzinfo=UTC)), grpc.StatusCode.OUT_OF_RANGE),
    ],
    ids=["empty", "forged-cursor", "future", "beyond-horizon"],
)
def test_bad_or_too_old_as_of_is_refused_naming_it(
    memory_stub: MemoryServiceStub,
    snapshot_stub: SnapshotServiceStub,
    as_of: pb.AsOf,
    code: grpc.StatusCode,
) -> None:
    agent = f"asof-{uuid.uuid4().hex[:8]}"
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="The user likes tea"))
    calls = [
        lambda: memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query="tea", as_of=as_of)),
        lambda: snapshot_stub.BuildSnapshot(
            spb.BuildSnapshotRequest(agent_id=agent, trigger="tea", as_of=as_of)
        ),
        lambda: memory_stub.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/k", as_of=as_of)),
    ]
    for call in calls:
        with pytest.raises(grpc.RpcError) as raised:
            call()
        assert raised.value.code() == code
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            assert list(violations(raised.value)) == ["as_of"]
        else:
            assert "as_of" in (raised.value.details() or "")
            assert "horizon" in (raised.value.details() or "")


def _cursor(memory: MemoryServiceStub, agent: str) -> str:
    """The cursor after every change of ``agent`` so far (a catch-up Watch)."""
    stream = memory.Watch(mpb.WatchRequest(agent_id=agent, start=mpb.WATCH_START_OLDEST))
    return [m for m in stream if m.caught_up][-1].cursor


def test_a_watch_cursor_reads_as_of_the_changes_it_delivered(
    memory_stub: MemoryServiceStub,
) -> None:
    agent = f"asof-{uuid.uuid4().hex[:8]}"
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="The user drinks green tea"))
    cursor = _cursor(memory_stub, agent)
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="The user drinks black tea"))

    def contents(as_of: pb.AsOf | None) -> list[str]:
        extra = {} if as_of is None else {"as_of": as_of}
        hits = memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query="tea", **extra))
        return sorted(r.memory.content for r in hits.results)

    assert contents(pb.AsOf(cursor=cursor)) == ["The user drinks green tea"]
    assert len(contents(None)) == 2
    # Another agent's cursor is not this agent's position: refused, naming as_of.
    other = f"asof-{uuid.uuid4().hex[:8]}"
    memory_stub.Remember(mpb.RememberRequest(agent_id=other, content="The user likes maps"))
    with pytest.raises(grpc.RpcError) as raised:
        memory_stub.Recall(
            mpb.RecallRequest(
                agent_id=agent, query="tea", as_of=pb.AsOf(cursor=_cursor(memory_stub, other))
            )
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(violations(raised.value)) == ["as_of"]


def test_a_read_made_while_writes_wait_scores_as_the_read_as_of_then(
    memory_stub: MemoryServiceStub,
) -> None:
    """Right after its writes, a partition's memories wait for the store (applied
    behind the answer): the live read lays them over the store's answer. Its keyword
    and similarity scores are the very floats the read as of that moment computes
    over the history (docs/as-of.md), so near-ties (these memories differ by a word)
    rank alike. Only recency may differ: the two reads' "now" are not the same."""
    agent = f"asof-{uuid.uuid4().hex[:8]}"
    kinds = ["green", "black", "white", "mint", "herbal"]
    texts = [f"The user drinks {kind} tea every morning" for kind in kinds]
    texts += [f"The user drinks coffee after {when}" for when in ["lunch", "dinner", "work"]]
    for text in texts:
        memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content=text))
    query = "what does the user drink?"
    live = memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query=query, limit=10))
    instant = between_writes()
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="The user drinks water"))
    then = memory_stub.Recall(
        mpb.RecallRequest(agent_id=agent, query=query, limit=10, as_of=at(instant))
    )

    def scores(resp: mpb.RecallResponse) -> list[tuple[str, float, float]]:
        return [(r.memory.id, r.components.keyword, r.components.similarity) for r in resp.results]

    assert len(live.results) == len(texts)
    assert scores(live) == scores(then)
