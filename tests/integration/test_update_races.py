"""Lost updates over the wire: two clients change one memory at once through a real
daemon (gRPC, LanceDB on disk, the local model). Every acknowledged change is in the
memory afterwards (issue 30; the service-level races: tests/unit/races)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from google.protobuf import field_mask_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon

TRIALS = 150
#: The daemon's embedding dimension (the local model).
DIMENSION = 384
#: Trials in flight at once (each is two clients).
AT_ONCE = 4


@pytest.fixture(scope="module")
def lifecycle_stub(shared_daemon: Daemon) -> Iterator[LifecycleServiceStub]:
    with shared_daemon.channel() as channel:
        yield LifecycleServiceStub(channel)


def update(stub: MemoryServiceStub, agent: str, memory_id: str, **fields: Any) -> Any:
    return stub.UpdateMemory(
        mpb.UpdateMemoryRequest(
            agent_id=agent,
            memory=pb.Memory(id=memory_id, **fields),
            update_mask=field_mask_pb2.FieldMask(paths=sorted(fields)),
        )
    ).memory


def at_once(pool: ThreadPoolExecutor, *calls: Callable[[], Any]) -> list[Any]:
    """The calls started together (two clients), their answers in order (an error
    raises: every call must be acknowledged)."""
    start = threading.Barrier(len(calls))

    def go(call: Callable[[], Any]) -> Any:
        start.wait()
        return call()

    return [f.result() for f in [pool.submit(go, c) for c in calls]]


def trial(
    pool: ThreadPoolExecutor,
    memory: MemoryServiceStub,
    lifecycle: LifecycleServiceStub,
    agent: str,
    name: str,
) -> bool:
    """One memory, its content edited while another client changes it (``name``:
    "tags" sets its tags, "archive" archives it); whether both changes are in it."""
    # An embedding of its own (random: like no other memory, so never deduplicated).
    vector = np.random.default_rng().normal(size=DIMENSION)
    made = memory.Remember(
        mpb.RememberRequest(
            agent_id=agent, content=f"{name}: a plain note", embedding=vector.tolist()
        )
    ).memory
    content = f"{name}: the note was edited"

    def edit() -> Any:
        return update(memory, agent, made.id, content=content)

    def retag() -> Any:
        return update(memory, agent, made.id, tags=[name])

    def archive() -> Any:
        selector = lpb.MemorySelector(ids=[made.id])
        return lifecycle.Archive(lpb.ArchiveRequest(agent_id=agent, selector=selector))

    at_once(pool, edit, retag if name.startswith("tags") else archive)
    got = memory.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=made.id)).memory
    other = list(got.tags) == [name] if name.startswith("tags") else got.archived
    return got.content == content and got.version == 3 and other


def test_two_clients_editing_one_memory_lose_nothing(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    """UpdateMemory(content) against UpdateMemory(tags), and against Archive, each
    TRIALS times on a memory of its own, a few trials at a time."""
    agent = f"races-{uuid.uuid4().hex[:10]}"

    def one(i: int) -> list[str]:
        return [
            rival
            for rival in ("tags", "archive")
            if not trial(racing, memory_stub, lifecycle_stub, agent, f"{rival}-{i}")
        ]

    with (
        ThreadPoolExecutor(max_workers=2 * AT_ONCE) as racing,
        ThreadPoolExecutor(max_workers=AT_ONCE) as trials,
    ):
        outcomes = list(trials.map(one, range(TRIALS)))
    lost = {
        rival: [i for i, o in enumerate(outcomes) if rival in o] for rival in ("tags", "archive")
    }
    assert lost == {"tags": [], "archive": []}, {k: len(v) for k, v in lost.items()}
