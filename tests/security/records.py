"""Export records of every kind for Import tests (``memoryd.export.v1``), valid by
default; each builder takes the values a test wants to push out of range."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import grpc
from google.protobuf import struct_pb2

from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub

#: A version the store (int64) cannot take one more write after.
POISON_VERSION = 2**63 - 1
#: protobuf Duration's largest valid seconds.
MAX_DURATION_S = 315_576_000_000
SESSION = "s1"
COMPONENT = "planner"
KEY = "/user/style"
SCOPE_THREAD = "t1"


def _now(msg: Any) -> None:
    msg.seconds = int(time.time()) - 60


def struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out


def memory(
    agent: str,
    *,
    version: int = 1,
    access_count: int = 0,
    content: str | None = None,
    memory_id: str | None = None,
) -> lpb.ExportRecord:
    r = lpb.ExportRecord()
    m = r.memory.memory
    m.id = memory_id or uuid.uuid4().hex
    m.agent_id = agent
    m.content = content or f"imported memory {m.id}"
    _now(m.created_at)
    _now(m.updated_at)
    m.version = version
    m.access_count = access_count
    return r


def key_event(agent: str, *, version: int = 1, key: str = KEY) -> lpb.ExportRecord:
    r = lpb.ExportRecord()
    e = r.key_event
    e.agent_id = agent
    e.current = True
    e.entry.key = key
    e.entry.valid = True
    e.entry.content.string_value = "short answers"
    e.entry.version = version
    _now(e.entry.updated_at)
    return r


def working(
    agent: str, *, version: int = 1, ttl_s: int | None = None, ttl_nanos: int = 0
) -> lpb.ExportRecord:
    r = lpb.ExportRecord()
    w = r.working_memory
    w.agent_id = agent
    w.working_memory.scope.thread_id = SCOPE_THREAD
    w.working_memory.content.CopyFrom(struct({"step": 1}))
    w.working_memory.version = version
    _now(w.working_memory.updated_at)
    if ttl_s is not None:
        w.ttl.seconds = ttl_s
        w.ttl.nanos = ttl_nanos
    return r


def profile(agent: str, *, version: int = 1) -> lpb.ExportRecord:
    r = lpb.ExportRecord()
    r.profile.agent_id = agent
    r.profile.profile.content = "# planner\nbe brief"
    _now(r.profile.profile.updated_at)
    r.profile.version = version
    return r


def session(
    agent: str, *, version: int = 1, ttl_s: int = 3600, message_count: int = 1
) -> lpb.ExportRecord:
    r = lpb.ExportRecord()
    s = r.session
    s.agent_id = agent
    s.session_id = SESSION
    msg = s.messages.add(role=mpb.MESSAGE_ROLE_USER, content="hello", seq=1)
    _now(msg.created_at)
    _now(s.created_at)
    _now(s.updated_at)
    s.ttl.seconds = ttl_s
    s.message_count = message_count
    s.version = version
    return r


def state(agent: str, *, version: int = 1) -> lpb.ExportRecord:
    r = lpb.ExportRecord()
    st = r.state
    st.agent_id = agent
    st.session_id = SESSION
    st.component.name = COMPONENT
    st.component.state.CopyFrom(struct({"step": 3}))
    st.component.version = version
    _now(st.component.updated_at)
    return r


def every_kind(agent: str, **values: Any) -> dict[str, lpb.ExportRecord]:
    """One record of each kind with the same overrides (version=...)."""
    return {
        "memory": memory(agent, **values),
        "key_event": key_event(agent, **values),
        "working_memory": working(agent, **values),
        "profile": profile(agent, **values),
        "session": session(agent, **values),
        "state": state(agent, **values),
    }


def import_records(
    life: LifecycleServiceStub,
    records: Iterable[lpb.ExportRecord],
    metadata: Sequence[tuple[str, str]] = (),
    timeout: float = 120,
) -> lpb.ImportResponse:
    requests = [lpb.ImportRequest(record=r) for r in records]
    response: lpb.ImportResponse = life.Import(iter(requests), metadata=metadata, timeout=timeout)
    return response


def rejected(response: lpb.ImportResponse) -> dict[int, str]:
    return {r.index: r.reason for r in response.rejected}


def code_of(call: Any) -> grpc.StatusCode:
    """The status code of a call (OK when it returns)."""
    try:
        call()
    except grpc.RpcError as error:
        return error.code()  # type: ignore[attr-defined, no-any-return]
    return grpc.StatusCode.OK
