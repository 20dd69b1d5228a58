"""Isolation details over a real api_key daemon (issue 20, finding 8 a, b, c, e):
above-clearance keys take writes exactly like missing ones, ids are matched in full,
archived key history stays in (and names) its tenant, deleting maintenance overrides
need admin, and quotas.max_session_messages (with its per-tenant override) holds."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import DAEMON_STORES, Daemon, daemon_store_env
from tests.security import records as rec
from tests.security.support import KeySpec, api_key_config, write_config

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

HIGH = KeySpec("high-4d5e6f7a8b", "high", "acme", "*", "restricted", ("read", "write"))
LOW = KeySpec("low-1a2b3c4d5e", "low", "acme", "*", "internal", ("read", "write"))
ADMIN = KeySpec("adm-9f8e7d6c5b", "admin", "acme", "*", "restricted", ("read", "write", "admin"))
GLOBEX = KeySpec(
    "glx-5b6c7d8e9f", "globex", "globex", "*", "restricted", ("read", "write", "admin")
)
DAY_S = 86_400


@pytest.fixture(scope="module", params=DAEMON_STORES)
def daemon(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Daemon]:
    with daemon_store_env(request.param, request) as env:
        yield from _daemon(tmp_path_factory, env)


def _daemon(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str | None]
) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("isolation")
    config = api_key_config(
        [HIGH, LOW, ADMIN, GLOBEX],
        maintenance={
            "enabled": False,
            "history_policy": "archive",
            "history_archive_after_days": 1,
        },
        quotas={"max_session_messages": 5, "tenants": {"globex": {"max_session_messages": 8}}},
    )
    d = Daemon(
        data_dir=root / "data", env=env, config_file=write_config(root / "memoryd.yaml", config)
    )
    d.start()
    yield d
    d.kill()


@pytest.fixture
def memory(daemon: Daemon) -> Iterator[MemoryServiceStub]:
    with daemon.channel() as channel:
        yield MemoryServiceStub(channel)


@pytest.fixture
def life(daemon: Daemon) -> Iterator[LifecycleServiceStub]:
    with daemon.channel() as channel:
        yield LifecycleServiceStub(channel)


def answer(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as error:
        return error.code(), error.details() or ""  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, ""


def set_key(
    memory: MemoryServiceStub,
    who: KeySpec,
    key: str,
    text: str,
    level: int = pb.SECURITY_LEVEL_INTERNAL,
    if_version: int | None = None,
) -> mpb.SetMemoryResponse:
    request = mpb.SetMemoryRequest(
        agent_id="a1",
        key=key,
        content={"string_value": text},
        security_level=level,
        source=USER_SOURCE_PB,
    )
    if if_version is not None:
        request.if_version = if_version
    response: mpb.SetMemoryResponse = memory.SetMemory(request, metadata=who.metadata, timeout=30)
    return response


# ---------------------------------------------------------------- (a) hidden keys


def test_a_key_above_the_callers_clearance_takes_writes_like_a_missing_one(
    memory: MemoryServiceStub,
) -> None:
    secret = set_key(memory, HIGH, "/secret", "launch codes", pb.SECURITY_LEVEL_RESTRICTED)

    # Same codes and messages for the hidden key as for one that does not exist...
    for if_version in (secret.entry.version, 7):
        hidden = answer(lambda v=if_version: set_key(memory, LOW, "/secret", "x", if_version=v))
        missing = answer(lambda v=if_version: set_key(memory, LOW, "/nothing", "x", if_version=v))
        assert hidden == missing
        assert hidden[0] == grpc.StatusCode.FAILED_PRECONDITION
    assert answer(lambda: set_key(memory, LOW, "/secret", "mine")) == (grpc.StatusCode.OK, "")
    assert answer(lambda: set_key(memory, LOW, "/nothing", "mine")) == (grpc.StatusCode.OK, "")

    # ...the write is the key's value now, at the writer's level, and the hidden value
    # stays in the key's history, readable at its own level only.
    got = memory.GetKey(mpb.GetKeyRequest(agent_id="a1", key="/secret"), metadata=LOW.metadata)
    assert got.entry.content.string_value == "mine"
    history = memory.KeyHistory(
        mpb.KeyHistoryRequest(agent_id="a1", key="/secret"), metadata=HIGH.metadata
    )
    assert [e.content.string_value for e in history.entries] == ["launch codes", "mine"]
    low_history = memory.KeyHistory(
        mpb.KeyHistoryRequest(agent_id="a1", key="/secret"), metadata=LOW.metadata
    )
    assert [e.content.string_value for e in low_history.entries] == ["mine"]


def test_an_if_version_mismatch_does_not_give_the_partition_counter(
    memory: MemoryServiceStub,
) -> None:
    for i in range(5):  # writes the low caller cannot see move the counter
        set_key(memory, HIGH, f"/hidden/{i}", "x", pb.SECURITY_LEVEL_RESTRICTED)
    current = set_key(memory, LOW, "/visible", "v1").entry.version
    code, message = answer(lambda: set_key(memory, LOW, "/visible", "v2", if_version=1))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert str(current) not in message


# ---------------------------------------------------------------- (b) ids


@pytest.mark.parametrize("agent", [".", "..", "...", "planner\n", "a/b", "x" * 129])
def test_agent_ids_are_matched_in_full(memory: MemoryServiceStub, agent: str) -> None:
    code, message = answer(
        lambda: memory.Remember(
            mpb.RememberRequest(agent_id=agent, content="hello"), metadata=ADMIN.metadata
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "agent_id" in message


def test_archived_key_history_stays_in_its_tenants_folder_and_names_it(
    daemon: Daemon, life: LifecycleServiceStub
) -> None:
    now = int(time.time())
    for who in (ADMIN, GLOBEX):
        old = [rec.key_event("planner", version=v, key="/shared/k") for v in (1, 2)]
        for days, record in zip((4, 3), old, strict=True):
            record.key_event.entry.updated_at.seconds = now - days * DAY_S
            record.key_event.current = record.key_event.entry.version == 2
        imported = rec.import_records(life, old, metadata=who.metadata)
        assert imported.imported == 2, imported
        events = list(life.Compact(lpb.CompactRequest(agent_id="planner"), metadata=who.metadata))
        assert events
    history = daemon.data_dir / "history"
    for tenant in ("acme", "globex"):
        files = sorted((history / tenant / "planner").glob("key-history-*.jsonl"))
        lines = [json.loads(line) for f in files for line in f.read_text().splitlines()]
        assert [(line["tenant"], line["agent"], line["version"]) for line in lines] == [
            (tenant, "planner", 1)
        ]
    # Nothing outside the tenants' own folders.
    assert sorted(p.name for p in history.iterdir()) == ["acme", "globex"]


# ---------------------------------------------------------------- (c) roles


def test_deleting_maintenance_overrides_need_admin(life: LifecycleServiceStub) -> None:
    def maintain(who: KeySpec, **overrides: int) -> tuple[grpc.StatusCode, str]:
        request = lpb.RunMaintenanceRequest(agent_id="a1", **overrides)
        return answer(lambda: list(life.RunMaintenance(request, metadata=who.metadata)))

    assert maintain(LOW)[0] == grpc.StatusCode.OK
    for overrides in ({"retention_days": 1}, {"max_entries": 1}):
        code, message = maintain(LOW, **overrides)
        assert code == grpc.StatusCode.PERMISSION_DENIED and "admin" in message
        assert maintain(ADMIN, **overrides)[0] == grpc.StatusCode.OK


# ---------------------------------------------------------------- (e) quotas


@pytest.mark.parametrize(("who", "limit"), [(LOW, 5), (GLOBEX, 8)])
def test_session_message_quota_and_its_tenant_override(
    memory: MemoryServiceStub, who: KeySpec, limit: int
) -> None:
    def append(n: int) -> tuple[grpc.StatusCode, str]:
        messages = [mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="hi")] * n
        request = mpb.AppendMessagesRequest(agent_id="q1", session_id="s", messages=messages)
        return answer(lambda: memory.AppendMessages(request, metadata=who.metadata))

    assert append(limit - 1)[0] == grpc.StatusCode.OK
    assert append(1)[0] == grpc.StatusCode.OK
    code, message = append(1)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "quotas.max_session_messages" in message
