"""The access log of a LIVE daemon: one structlog JSON line per call with request id,
principal, tenant, agent, method, code and latency; the request id comes from
``x-request-id`` or is generated, and is returned in trailing metadata either way;
no memory content ever reaches the log."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon
from tests.security.support import KeySpec, api_key_config, write_config

WRITER = KeySpec("log-test-key-4f1e", "log-writer", "acme", "*", "restricted", ("read", "write"))
FIELDS = {"request_id", "principal", "tenant", "agent", "method", "code", "latency_ms"}
POLL_S = 30.0


def rpc_lines(daemon: Daemon) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in daemon.logs().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == "rpc"]


def wait_for_lines(daemon: Daemon, count: int) -> list[dict[str, Any]]:
    """The access log line is written as the call ends, maybe just after the reply."""
    deadline = time.monotonic() + POLL_S
    while len(lines := rpc_lines(daemon)) < count:
        assert time.monotonic() < deadline, f"expected {count} rpc lines, got {lines}"
        time.sleep(0.05)
    return lines


def trailer(call: Any, key: str) -> str | None:
    for k, v in call.trailing_metadata() or ():
        if k == key:
            return str(v)
    return None


@pytest.fixture
def daemon(daemon_factory: type[Daemon], tmp_path: Path) -> Daemon:
    d = daemon_factory(config_file=write_config(tmp_path / "c.yaml", api_key_config([WRITER])))
    d.start()
    return d


def test_every_call_logs_one_json_line_with_its_fields(daemon: Daemon) -> None:
    secret = f"the launch code is {uuid.uuid4().hex}"
    auth = WRITER.metadata
    with daemon.channel() as channel:
        stub = MemoryServiceStub(channel)
        # 1: the caller's request id is kept and returned.
        created, call = stub.Remember.with_call(
            mpb.RememberRequest(agent_id="agent-7", content=secret, security_level=3),
            metadata=(*auth, ("x-request-id", "trace-abc.123")),
        )
        assert trailer(call, "x-request-id") == "trace-abc.123"
        # 2: none sent: one is generated and returned.
        _, call = stub.Recall.with_call(
            mpb.RecallRequest(agent_id="agent-7", query=secret), metadata=auth
        )
        generated = trailer(call, "x-request-id")
        assert generated and re.fullmatch(r"[0-9a-f]{32}", generated)
        # 3: a request id that is not plain text is replaced, never logged as sent.
        _, call = stub.GetMemory.with_call(
            mpb.GetMemoryRequest(agent_id="agent-7", id=created.memory.id),
            metadata=(*auth, ("x-request-id", "bad id with {json}")),
        )
        replaced = trailer(call, "x-request-id")
        assert replaced and replaced != "bad id with {json}"
        # 4: a failing call returns its request id in the trailers of the error too.
        with pytest.raises(grpc.RpcError) as bad:
            stub.Remember(
                mpb.RememberRequest(agent_id="agent-7", content=""),
                metadata=(*auth, ("x-request-id", "trace-bad")),
            )
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert trailer(bad.value, "x-request-id") == "trace-bad"
        # 5: no credential: UNAUTHENTICATED, still logged with its request id.
        with pytest.raises(grpc.RpcError) as anonymous:
            stub.ListMemories(
                mpb.ListMemoriesRequest(agent_id="agent-7"),
                metadata=(("x-request-id", "trace-anon"),),
            )
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED

    lines = wait_for_lines(daemon, 5)
    by_id = {line["request_id"]: line for line in lines}
    assert set(by_id) >= {"trace-abc.123", generated, replaced, "trace-bad", "trace-anon"}

    ok = by_id["trace-abc.123"]
    assert set(ok) >= FIELDS
    assert ok["principal"] == "log-writer" and ok["tenant"] == "acme"
    assert ok["agent"] == "agent-7" and ok["code"] == "OK"
    assert ok["method"] == "/memoryd.v1.MemoryService/Remember"
    assert isinstance(ok["latency_ms"], float | int) and ok["latency_ms"] >= 0
    assert ok["level"] == "info" and ok["timestamp"].endswith("Z")
    assert by_id[generated]["method"] == "/memoryd.v1.MemoryService/Recall"
    assert by_id[replaced]["method"] == "/memoryd.v1.MemoryService/GetMemory"
    failed = by_id["trace-bad"]
    assert set(failed) >= FIELDS
    assert failed["code"] == "INVALID_ARGUMENT" and failed["level"] == "warning"
    denied = by_id["trace-anon"]
    assert denied["code"] == "UNAUTHENTICATED"
    assert denied["method"] == "/memoryd.v1.MemoryService/ListMemories"

    # Neither the memory's content, nor the query, nor the key, nor the rejected
    # request id appear anywhere in the log.
    log = daemon.logs()
    for leaked in (secret, secret.split()[-1], WRITER.raw, "bad id"):
        assert leaked not in log
