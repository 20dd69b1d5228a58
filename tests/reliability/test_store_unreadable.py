"""Store failures are never answered as "not found" or "empty" (issue 20, finding 6).

A real daemon holds a key, working memory, a profile, a session and saved state; then
the records table's data files are destroyed under it (unreadable, as after a disk
fault). Before, GetKey answered NOT_FOUND, ListKeys and DefaultRead OK with nothing,
and SetMemory UNAVAILABLE with Lance's own text (file paths, rustc source locations):
an agent would conclude its memory is empty and overwrite it. Now every read of those
records answers UNAVAILABLE in a clean message, the detail is in the daemon's log, and
BuildSnapshot leaves the sections it cannot read out, saying so. A key write that
needs no store read (its slot is kept since the key's last write) is accepted into
the write-ahead log and read back from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import grpc
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2 as cpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub
from tests.conftest import Daemon

AGENT = "unreadable"
SOURCE = cpb.Provenance(kind=cpb.PROVENANCE_KIND_USER, name="unreadable test")
SCOPE = cpb.WorkingMemoryScope(thread_id="t1")
#: Backend text that must never reach a client.
LEAKS = re.compile(r"rustc|\.rs:|/tmp|/root|\.lance|Traceback|LanceError|location", re.IGNORECASE)


def _struct(**values: str) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _seed(memory: MemoryServiceStub, snapshot: SnapshotServiceStub) -> None:
    for i in range(3):
        memory.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key=f"/prefs/k{i}",
                content=struct_pb2.Value(string_value=f"value {i}"),
                source=SOURCE,
            )
        )
    memory.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(agent_id=AGENT, scope=SCOPE, content=_struct(step="2"))
    )
    memory.SetProfile(mpb.SetProfileRequest(agent_id=AGENT, content="likes tea"))
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=AGENT,
            session_id="s1",
            messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="hello")],
        )
    )
    snapshot.SaveState(
        spb.SaveStateRequest(
            agent_id=AGENT,
            session_id="s1",
            components=[spb.StateComponent(name="plan", state=_struct(next="write"))],
        )
    )
    memory.Remember(mpb.RememberRequest(agent_id=AGENT, content="a plain memory"))


def _destroy_records_table(data_dir: Path) -> None:
    table = data_dir / "lancedb" / "records.lance"
    files = [p for p in (table / "data").iterdir() if p.is_file()]
    assert files
    for path in files:
        path.write_bytes(b"")


def _failure(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as exc:
        return exc.code(), exc.details() or ""  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, ""


def test_records_unreadable_reads_answer_unavailable_cleanly(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(
        env={"MEMORYD_EMBEDDER": "hashing", "MEMORYD_MAINTENANCE__ENABLED": "false"}
    )
    daemon.start()
    with daemon.channel() as channel:
        memory, snapshot = MemoryServiceStub(channel), SnapshotServiceStub(channel)
        _seed(memory, snapshot)
        _destroy_records_table(daemon.data_dir)

        calls: dict[str, Callable[[], object]] = {
            "GetKey": lambda: memory.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/prefs/k0")),
            "GetKey (missing)": lambda: memory.GetKey(
                mpb.GetKeyRequest(agent_id=AGENT, key="/prefs/none")
            ),
            "ListKeys": lambda: memory.ListKeys(
                mpb.ListKeysRequest(agent_id=AGENT, prefix="/prefs", recursive=True)
            ),
            "KeyHistory": lambda: memory.KeyHistory(
                mpb.KeyHistoryRequest(agent_id=AGENT, key="/prefs/k1")
            ),
            "DefaultRead": lambda: snapshot.DefaultRead(spb.DefaultReadRequest(agent_id=AGENT)),
            "GetWorkingMemory": lambda: memory.GetWorkingMemory(
                mpb.GetWorkingMemoryRequest(agent_id=AGENT, scope=SCOPE)
            ),
            "GetProfile": lambda: memory.GetProfile(mpb.GetProfileRequest(agent_id=AGENT)),
            "GetSessionWindow": lambda: memory.GetSessionWindow(
                mpb.GetSessionWindowRequest(agent_id=AGENT, session_id="s1")
            ),
            "LoadState": lambda: snapshot.LoadState(
                spb.LoadStateRequest(agent_id=AGENT, session_id="s1")
            ),
        }
        for name, call in calls.items():
            code, details = _failure(call)
            assert code == grpc.StatusCode.UNAVAILABLE, (name, code, details)
            assert "store unavailable" in details, (name, details)
            assert not LEAKS.search(details), (name, details)

        # A key write needs no store read here: the partition's slots are kept since its
        # first write (service/keyed/service.py), so SetMemory is accepted into the
        # write-ahead log and acknowledged (docs/durability.md, fallback matrix: "accepted
        # into the log"), never a wrong OK: the log holds it and answers it back while
        # the store cannot, with the partition's next version.
        written = memory.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key="/prefs/k0",
                content=struct_pb2.Value(string_value="x"),
                source=SOURCE,
            )
        ).entry
        assert written.valid and written.content.string_value == "x"
        assert written.version == 4  # after /prefs/k0..k2
        got = memory.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/prefs/k0")).entry
        assert (got.content.string_value, got.version) == ("x", 4)

        # A snapshot still serves the memories, and names what it left out.
        built = snapshot.BuildSnapshot(spb.BuildSnapshotRequest(agent_id=AGENT, trigger="tea"))
        left_out = [d.reason for d in built.degraded if d.component == "store"]
        assert any("profile" in r for r in left_out), list(built.degraded)
        assert not any(LEAKS.search(d.reason) for d in built.degraded), list(built.degraded)
        # Memories (another table) are served as usual.
        recalled = memory.Recall(mpb.RecallRequest(agent_id=AGENT, query="plain memory"))
        assert recalled.results
    assert "store call failed" in daemon.logs()  # the detail is in the daemon's log
    daemon.kill()
