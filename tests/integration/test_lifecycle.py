"""LifecycleService over real gRPC (LanceDB on disk, the local model): stats, archive,
prune, reset, compact and maintenance streams, re-embed, admin-only operations, and
export then import into an EMPTY data dir reproducing the partition exactly (the
stores of both daemons are compared record by record after they stopped)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
from google.protobuf import struct_pb2
from typer.testing import CliRunner

from memoryd.cli.memoryctl import app as memoryctl
from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import ListPage
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.records import KeyPage
from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub
from tests.security.support import KeySpec, api_key_config, write_config

from ..conftest import Daemon
from .test_memory_api import violations

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

NO_SCHEDULE = {"MEMORYD_MAINTENANCE__ENABLED": "false"}
DIMENSION = 384


def fresh_agent() -> str:
    return f"life-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def lifecycle_stub(shared_daemon: Daemon) -> Iterator[LifecycleServiceStub]:
    with shared_daemon.channel() as channel:
        yield LifecycleServiceStub(channel)


def remember(memory: MemoryServiceStub, agent: str, text: str, **kw: Any) -> str:
    return str(memory.Remember(mpb.RememberRequest(agent_id=agent, content=text, **kw)).memory.id)


def test_every_read_sees_a_write_the_moment_it_is_answered(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    # A memory write is answered at the log's fsync and reaches LanceDB just after
    # (durability.apply_behind); each read below follows its write at once, so most
    # land while that write is still being applied.
    agent = fresh_agent()
    ids: list[str] = []
    for i in range(25):
        code = f"QX{i:03d}{uuid.uuid4().hex[:6]}"
        text = f"The locker code for site {i} is {code}"
        ids.append(remember(memory_stub, agent, text))
        again = memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content=text))
        assert again.deduplicated and again.memory.id == ids[-1]  # exact duplicate found
        stats = lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent))
        assert stats.memories == i + 1
        found = memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query=code, limit=1))
        assert [r.memory.id for r in found.results] == [ids[-1]]
        page = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id=agent, page_size=1))
        assert [m.id for m in page.memories] == [ids[-1]]
    forgotten = memory_stub.ForgetMemories(mpb.ForgetMemoriesRequest(agent_id=agent, ids=ids[:5]))
    assert sorted(forgotten.forgotten_ids) == sorted(ids[:5])
    assert lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent)).memories == 20
    gone = memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query="locker code", limit=50))
    assert not {r.memory.id for r in gone.results} & set(ids[:5])


def test_every_read_sees_a_key_the_moment_its_set_memory_is_answered(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    # The key's long-term memory (its mirror) is embedded behind the answer; every
    # read of the agent's memories waits for it (storage/fenced.py), GetStats too.
    agent = fresh_agent()
    for i in range(10):
        code = f"KY{i:03d}{uuid.uuid4().hex[:6]}"
        memory_stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=agent,
                key=f"/sites/{i}",
                content_json=json.dumps(f"The locker code for site {i} is {code}"),
                source=USER_SOURCE_PB,
            )
        )
        stats = lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent))
        assert (stats.memories, stats.keys) == (i + 1, i + 1)
        found = memory_stub.Recall(mpb.RecallRequest(agent_id=agent, query=code, limit=1))
        assert [r.memory.key for r in found.results] == [f"/sites/{i}"]
        page = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id=agent, page_size=1))
        assert [m.key for m in page.memories] == [f"/sites/{i}"]


def final(events: Any) -> tuple[list[pb.Progress], Any]:
    progress, result = [], None
    for event in events:
        if event.WhichOneof("event") == "progress":
            progress.append(event.progress)
        else:
            result = event.result
    return progress, result


def test_stats_archive_restore_prune(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    agent = fresh_agent()
    ids = [
        remember(memory_stub, agent, text, tags=["travel"] if i % 2 else [], memory_type=t)
        for i, (text, t) in enumerate(
            [
                ("The user flies to Lisbon in June", pb.MEMORY_TYPE_FACT),
                ("The user prefers window seats", pb.MEMORY_TYPE_PREFERENCE),
                ("Book hotels near the old town", pb.MEMORY_TYPE_SKILL),
                ("The user visited Porto last year", pb.MEMORY_TYPE_EPISODE),
            ]
        )
    ]
    stats = lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent))
    assert stats.memories == 4 and stats.archived == 0 and stats.keys == 0
    assert {c.name: c.count for c in stats.by_memory_type} == {
        "episode": 1,
        "fact": 1,
        "preference": 1,
        "skill": 1,
    }
    assert [c.name for c in stats.by_security_level] == [
        "public",
        "internal",
        "confidential",
        "restricted",
    ]
    assert {c.name for c in stats.by_embedding_model} == {"all-MiniLM-L6-v2"} or len(
        stats.by_embedding_model
    ) == 1
    assert stats.store_bytes > 0  # the sidecar principal is an admin
    archived = lifecycle_stub.Archive(
        lpb.ArchiveRequest(agent_id=agent, selector=lpb.MemorySelector(tags=["travel"]))
    )
    assert archived.archived == 2
    listed = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id=agent))
    assert {m.id for m in listed.memories} == {ids[0], ids[2]}
    assert lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent)).archived == 2
    restored = lifecycle_stub.Restore(
        lpb.RestoreRequest(agent_id=agent, selector=lpb.MemorySelector(ids=[ids[1], "nope"]))
    )
    assert restored.restored == 1
    dry = lifecycle_stub.Prune(
        lpb.PruneRequest(agent_id=agent, memory_types=[pb.MEMORY_TYPE_EPISODE], dry_run=True)
    )
    assert dry.dry_run and list(dry.ids) == [ids[3]] and dry.pruned == 1
    assert (
        len(
            memory_stub.ListMemories(
                mpb.ListMemoriesRequest(agent_id=agent, include_archived=True)
            ).memories
        )
        == 4
    )
    pruned = lifecycle_stub.Prune(
        lpb.PruneRequest(agent_id=agent, memory_types=[pb.MEMORY_TYPE_EPISODE])
    )
    assert pruned.pruned == 1 and not pruned.dry_run
    with pytest.raises(grpc.RpcError) as err:
        lifecycle_stub.Archive(lpb.ArchiveRequest(agent_id=agent))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "selector" in violations(
        err.value
    )


def test_archived_memories_leave_recall_and_restored_ones_return(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    """Recall is served from the hot partition cache once it is loaded: archiving
    (directly and by maintenance) must reach it, for vector and hybrid recall alike."""
    agent = fresh_agent()
    cities = ["Lisbon", "Oslo", "Kyoto", "Lima", "Cairo", "Quito"]
    seasons = ["in the spring", "for the winter holidays"]
    texts = [f"The user booked a hotel in {c} {s}" for c in cities for s in seasons]
    ids = [remember(memory_stub, agent, text, importance=i / 20) for i, text in enumerate(texts)]
    assert len(set(ids)) == len(texts)  # none deduplicated
    query = mpb.RecallRequest(agent_id=agent, query="hotel booking in a city", limit=20)

    def recalled(hybrid: bool) -> set[str]:
        query.hybrid = hybrid
        return {r.memory.id for r in memory_stub.Recall(query).results}

    assert recalled(False) == recalled(True) == set(ids)  # the cache is loaded now
    lifecycle_stub.Archive(
        lpb.ArchiveRequest(agent_id=agent, selector=lpb.MemorySelector(ids=ids[:3]))
    )
    assert recalled(False) == recalled(True) == set(ids[3:])
    _, result = final(
        lifecycle_stub.RunMaintenance(lpb.RunMaintenanceRequest(agent_id=agent, max_entries=4))
    )
    assert result.archived == 5  # the lowest importance first: ids[3:8]
    assert recalled(False) == recalled(True) == set(ids[8:])
    lifecycle_stub.Restore(
        lpb.RestoreRequest(agent_id=agent, selector=lpb.MemorySelector(ids=ids[:2]))
    )
    assert recalled(False) == recalled(True) == set(ids[:2]) | set(ids[8:])
    query.include_archived = True
    assert recalled(False) == set(ids)


def test_compact_and_maintenance_stream_progress(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    agent = fresh_agent()
    notes = [
        "The build server in Berlin is slow on Mondays",
        "Alice prefers tea over coffee",
        "The quarterly budget review is on Tuesday",
        "Paris is the capital of France",
        "The deploy pipeline runs integration tests",
        "Bob's birthday is on the 3rd of May",
    ]
    for i, note in enumerate(notes):
        remember(memory_stub, agent, note, importance=i / 10)
    memory_stub.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent,
            key="/x",
            content=struct_pb2.Value(string_value="a"),
            source=USER_SOURCE_PB,
        )
    )
    memory_stub.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/x", content=struct_pb2.Value(null_value=0), source=USER_SOURCE_PB
        )
    )
    progress, result = final(lifecycle_stub.Compact(lpb.CompactRequest(agent_id=agent)))
    assert [p.phase for p in progress][:2] == ["tombstones", "expired"]
    assert result.tombstones_purged == 1 and result.store_optimized
    assert (
        lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent)).HasField("last_maintenance_at")
        is False
    )
    progress, result = final(
        lifecycle_stub.RunMaintenance(lpb.RunMaintenanceRequest(agent_id=agent, max_entries=2))
    )
    assert [p.phase for p in progress][:2] == ["expire", "capacity"]
    assert result.archived == 4 and result.compacted
    stats = lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent))
    assert stats.archived == 4 and stats.last_maintenance_at == result.finished_at
    with pytest.raises(grpc.RpcError) as err:
        final(
            lifecycle_stub.RunMaintenance(lpb.RunMaintenanceRequest(agent_id=agent, max_entries=0))
        )
    assert "max_entries" in violations(err.value)
    with pytest.raises(grpc.RpcError) as err:  # found by the fuzzer: was INTERNAL (overflow)
        final(
            lifecycle_stub.RunMaintenance(
                lpb.RunMaintenanceRequest(agent_id=agent, retention_days=10_000_001)
            )
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "retention_days" in violations(err.value)


def test_reset_and_reembed(
    memory_stub: MemoryServiceStub, lifecycle_stub: LifecycleServiceStub
) -> None:
    agent = fresh_agent()
    remember(memory_stub, agent, "Something to forget")
    memory_stub.SetProfile(mpb.SetProfileRequest(agent_id=agent, content="profile"))
    _, result = final(lifecycle_stub.Reembed(lpb.ReembedRequest(agent_id=agent)))
    assert result.reembedded == 0 and result.embedding_model  # nothing from another model
    with pytest.raises(grpc.RpcError) as err:
        lifecycle_stub.Reset(lpb.ResetRequest(agent_id=agent))
    assert "confirm" in violations(err.value)
    assert lifecycle_stub.Reset(lpb.ResetRequest(agent_id=agent, confirm=True)).deleted == 2
    stats = lifecycle_stub.GetStats(lpb.GetStatsRequest(agent_id=agent))
    assert stats.memories == 0
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.GetProfile(mpb.GetProfileRequest(agent_id=agent))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


# ---------------------------------------------------------------- export / import


def struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out


def populate_every_kind(channel: grpc.Channel, agent: str) -> None:
    """Every record kind, through the public API only (no reads that count accesses)."""
    memory = MemoryServiceStub(channel)
    snapshot = SnapshotServiceStub(channel)
    lifecycle = LifecycleServiceStub(channel)
    memory.RememberBatch(
        mpb.RememberBatchRequest(
            agent_id=agent,
            items=[
                mpb.RememberRequest(
                    content="The user prefers dark blue slides.",
                    memory_type=pb.MEMORY_TYPE_PREFERENCE,
                    tags=["ui", "slides"],
                    importance=0.8,
                    confidence=0.6,
                    namespace="user-1",
                    metadata=struct({"n": 3, "nested": {"a": [1, "two", None, True]}}),
                    source=pb.Provenance(kind=pb.PROVENANCE_KIND_USER, name="chat"),
                ),
                mpb.RememberRequest(content="牙医预约在星期一上午十点。", tags=["中文"]),
                mpb.RememberRequest(
                    content="The launch date is secret.",
                    security_level=pb.SECURITY_LEVEL_RESTRICTED,
                ),
            ],
        )
    )
    archived = remember(memory, agent, "An archived memory about old projects.")
    lifecycle.Archive(
        lpb.ArchiveRequest(agent_id=agent, selector=lpb.MemorySelector(ids=[archived]))
    )
    for key, value in (
        (
            "/user/style",
            struct_pb2.Value(struct_value=struct({"summary": "short", "type": "preference"})),
        ),
        ("/user/style", struct_pb2.Value(struct_value=struct({"summary": "code first"}))),
        ("/tmp/gone", struct_pb2.Value(string_value="x")),
        ("/tmp/gone", struct_pb2.Value(null_value=0)),
    ):
        memory.SetMemory(
            mpb.SetMemoryRequest(agent_id=agent, key=key, content=value, source=USER_SOURCE_PB)
        )
    final(lifecycle.Compact(lpb.CompactRequest(agent_id=agent)))  # purges the /tmp/gone slot
    for value in (struct_pb2.Value(string_value="y"), struct_pb2.Value(null_value=0)):
        memory.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=agent, key="/tmp/tomb", content=value, source=USER_SOURCE_PB
            )
        )
    memory.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=agent,
            scope=pb.WorkingMemoryScope(thread_id="t1", resource_id="r1"),
            content=struct({"goal": "book", "steps": [1, 2.5]}),
            json_schema=struct({"type": "object"}),
        )
    )
    memory.SetProfile(mpb.SetProfileRequest(agent_id=agent, content="# Agent\nBe concise."))
    memory.InjectInstruction(
        mpb.InjectInstructionRequest(
            agent_id=agent, session_id="s1", kind=mpb.FIXED_ZONE_KIND_FOCUS, content="travel"
        )
    )
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=agent,
            session_id="s1",
            messages=[
                mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=f"turn {i} about the trip")
                for i in range(34)
            ],
        )
    )
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=agent,
            session_id="s2",
            messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="bye")],
        )
    )
    memory.EndSession(mpb.EndSessionRequest(agent_id=agent, session_id="s2"))
    # A tool result over sessions.offload_bytes (5 KiB) is offloaded: a SESSION_ATTACHMENT.
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=agent,
            session_id="s3",
            messages=[
                mpb.SessionMessage(
                    role=mpb.MESSAGE_ROLE_TOOL,
                    name="search",
                    tool_call_id="call-1",
                    content="row of search results\n" * 400,
                )
            ],
        )
    )
    snapshot.SaveState(
        spb.SaveStateRequest(
            agent_id=agent,
            session_id="s1",
            components=[spb.StateComponent(name="planner", state=struct({"step": 2}))],
        )
    )


async def read_partition(
    data_dir: Path, partition: Partition
) -> tuple[list[Memory], dict[RecordKind, list[Record]]]:
    store = LanceDBStore(data_dir / "lancedb", DIMENSION)
    records = LanceDBRecordStore(data_dir / "lancedb")
    await store.open()
    await records.open()
    try:
        listed = await store.list(
            partition,
            MemoryFilter(include_archived=True),
            ListPage(MemoryOrder.CREATED_ASC, limit=10_000),
        )
        memories = sorted(
            await store.get(partition, [m.id for m in listed], with_vectors=True),
            key=lambda m: m.id,
        )
        by_kind = {
            kind: await records.list_records(partition, kind, KeyPage(limit=10_000))
            for kind in RecordKind
        }
    finally:
        await records.close()
        await store.close()
    return memories, by_kind


def comparable(m: Memory) -> dict[str, Any]:
    out = {name: getattr(m, name) for name in Memory.__slots__ if name != "vector"}  # type: ignore[attr-defined]
    out["vector"] = np.asarray(m.vector, dtype=np.float32).tobytes()
    return out


def test_export_then_import_into_an_empty_data_dir_reproduces_the_partition(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    agent = fresh_agent()
    source = daemon_factory(env=NO_SCHEDULE)
    source.start()
    with source.channel() as channel:
        populate_every_kind(channel, agent)
    target = daemon_factory(env=NO_SCHEDULE)
    target.start()
    runner = CliRunner()
    backup = tmp_path / "backup.jsonl"

    def ctl(address: str, *args: str) -> Any:
        env = {"MEMORYD_ADDRESS": address, "MEMORYD_AGENT": None, "COLUMNS": None}
        return runner.invoke(memoryctl, ["--timeout", "60", *args], env=env)

    exported = ctl(source.address, "export", str(backup), "--agent", agent, "--json")
    assert exported.exit_code == 0, exported.output
    counts = json.loads(exported.stdout)["records"]
    assert set(counts) == {
        "header",
        "memory",
        "key_event",
        "working_memory",
        "profile",
        "session",
        "session_message",  # the summarised turns a session keeps until it expires
        "session_attachment",  # an offloaded tool result
        "state",
    }
    lines = [json.loads(line) for line in backup.read_text().splitlines()]
    assert lines[0]["header"]["format"] == "memoryd.export.v1"
    assert len(lines[1]["memory"]["vector"]) == DIMENSION
    imported = ctl(target.address, "import", str(backup), "--json")
    assert imported.exit_code == 0, imported.output
    first = json.loads(imported.stdout)
    assert first.get("rejected", []) == [] and int(first["imported"]) == len(lines) - 1
    again = json.loads(ctl(target.address, "import", str(backup), "--json").stdout)
    assert int(again["skipped"]) == len(lines) - 1 and int(again["imported"]) == 0
    assert source.stop() == 0 and target.stop() == 0

    partition = Partition("default", agent)
    before = asyncio.run(read_partition(source.data_dir, partition))
    after = asyncio.run(read_partition(target.data_dir, partition))
    assert {k for k, rs in before[1].items() if rs} == set(RecordKind)
    assert len(before[0]) == 5  # four remembered, one key mirrored
    assert [comparable(m) for m in after[0]] == [comparable(m) for m in before[0]]
    for kind in RecordKind:
        assert after[1][kind] == before[1][kind], kind


# ---------------------------------------------------------------- roles


def test_admin_only_operations(daemon_factory: Callable[..., Daemon], tmp_path: Path) -> None:
    admin = KeySpec(
        "admin-key-0123456789", "ops", "acme", "*", "restricted", ("read", "write", "admin")
    )
    writer = KeySpec("writer-key-0123456789", "app", "acme", "*", "internal", ("read", "write"))
    config = write_config(
        tmp_path / "memoryd.yaml", api_key_config([admin, writer], maintenance={"enabled": False})
    )
    daemon = daemon_factory(config_file=config)
    daemon.start()
    agent = fresh_agent()
    with daemon.channel() as channel:
        life = LifecycleServiceStub(channel)
        calls: dict[str, Callable[[Any], Any]] = {
            "Reset": lambda md: life.Reset(
                lpb.ResetRequest(agent_id=agent, confirm=True), metadata=md
            ),
            "Prune": lambda md: life.Prune(
                lpb.PruneRequest(agent_id=agent, tags=["x"], dry_run=True), metadata=md
            ),
            "Import": lambda md: life.Import(iter([lpb.ImportRequest()]), metadata=md),
            "Reembed": lambda md: final(
                life.Reembed(lpb.ReembedRequest(agent_id=agent), metadata=md)
            ),
            "Export all": lambda md: list(
                life.Export(lpb.ExportRequest(all_agents=True), metadata=md)
            ),
        }
        for name, call in calls.items():
            with pytest.raises(grpc.RpcError) as err:
                call(writer.metadata)
            assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED, name
            call(admin.metadata)  # allowed
        # An agent's own export needs only read; stats only count what the key may see.
        MemoryServiceStub(channel).Remember(
            mpb.RememberRequest(
                agent_id=agent, content="top secret", security_level=pb.SECURITY_LEVEL_RESTRICTED
            ),
            metadata=admin.metadata,
        )
        stats = life.GetStats(lpb.GetStatsRequest(agent_id=agent), metadata=writer.metadata)
        assert stats.memories == 0 and stats.store_bytes == 0
        assert [c.name for c in stats.by_security_level] == ["public", "internal"]
        records = [
            e.record
            for e in life.Export(lpb.ExportRequest(agent_id=agent), metadata=writer.metadata)
            if e.HasField("record")
        ]
        assert [r.WhichOneof("record") for r in records] == ["header"]


# ---------------------------------------------------------------- memoryctl


def test_memoryctl_lifecycle_commands(
    shared_daemon: Daemon, memory_stub: MemoryServiceStub, tmp_path: Path
) -> None:
    agent = fresh_agent()
    ids = [
        remember(memory_stub, agent, text, tags=["old"] if i < 2 else [])
        for i, text in enumerate(
            ["The old office was in Leeds", "Parking was free there", "The new office is in York"]
        )
    ]
    runner = CliRunner()

    def ctl(*args: str) -> Any:
        # Wide: rich's error panel cuts a line at the console's width, and under an xdist
        # worker (no terminal: 80 columns, a longer tmp_path) "bad.jsonl:2" fell past it.
        env = {"MEMORYD_ADDRESS": shared_daemon.address, "MEMORYD_AGENT": None, "COLUMNS": "400"}
        return runner.invoke(memoryctl, ["--timeout", "60", *args], env=env)

    result = ctl("stats", "--agent", agent)
    assert (
        result.exit_code == 0 and "memories" in result.stdout and "3 (0 archived)" in result.stdout
    )
    result = ctl("archive", "--tag", "old", "--agent", agent)
    assert result.exit_code == 0 and "Archived 2." in result.stdout
    result = ctl("restore", ids[0], "--agent", agent, "--json")
    assert json.loads(result.stdout) == {"restored": "1", "consolidations_undone": "0"}
    result = ctl("prune", "--tag", "old", "--dry-run", "--agent", agent)
    assert result.exit_code == 0 and "Would prune 2." in result.stdout and ids[1] in result.stdout
    result = ctl("compact", "--agent", agent)
    assert result.exit_code == 0 and "store optimized" in result.stdout, result.output
    result = ctl("maintenance", "--agent", agent, "--max-entries", "1", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["archived"] == "1"
    result = ctl("reembed", "--agent", agent, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["embedding_model"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"header": {"format": "memoryd.export.v1"}}\n{"nope": 1}\n')
    result = ctl("import", str(bad))
    assert result.exit_code == 2 and "bad.jsonl:2" in result.output
    result = ctl("reset", "--agent", agent)  # not a terminal, no --yes: refused
    assert result.exit_code == 2
    result = ctl("reset", "--agent", agent, "--yes")
    assert result.exit_code == 0 and "Deleted 3 records" in result.stdout
