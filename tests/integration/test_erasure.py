"""Erase and VerifyErasure over real gRPC (one daemon: LanceDB on disk, the write-ahead
log with its change-feed retention, the memory_root mirror and views): an agent whose
memories, keys, sessions, working memory, profile and saved state carry a unique
marker is erased; afterwards no file of the data directory holds the marker, the
erased ids or the bytes of an erased embedding, not after a restart either, and an
export finds nothing; another agent's data is untouched (docs/erasure.md)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from google.protobuf import field_mask_pb2, struct_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub

from ..conftest import Daemon

USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)


def byte_count(root: Path, needle: bytes) -> dict[str, int]:
    """Occurrences of ``needle`` in each file under ``root`` (grep -rc, in bytes)."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            n = path.read_bytes().count(needle)
            if n:
                found[str(path.relative_to(root))] = n
    return found


def seed(daemon: Daemon, agent: str, marker: str) -> None:
    """Memories (one archived, one updated), two versions of a key, a session, working
    memory, a profile and saved state, every one holding ``marker``."""
    with daemon.channel() as channel:
        memory, snapshot = MemoryServiceStub(channel), SnapshotServiceStub(channel)
        life = LifecycleServiceStub(channel)
        ids = [
            memory.Remember(
                mpb.RememberRequest(
                    agent_id=agent,
                    content=f"{marker} prefers {topic}",
                    memory_type=pb.MEMORY_TYPE_PREFERENCE,
                    source=USER,
                )
            ).memory.id
            for topic in ("window seats", "green tea", "early flights")
        ]
        life.Archive(lpb.ArchiveRequest(agent_id=agent, selector=lpb.MemorySelector(ids=[ids[0]])))
        memory.UpdateMemory(
            mpb.UpdateMemoryRequest(
                agent_id=agent,
                memory=pb.Memory(id=ids[1], content=f"{marker} likes oolong"),
                update_mask=field_mask_pb2.FieldMask(paths=["content"]),
            )
        )
        for value in (f"{marker} v1", f"{marker} v2"):
            memory.SetMemory(
                mpb.SetMemoryRequest(
                    agent_id=agent,
                    key="/user/email",
                    content=struct_pb2.Value(string_value=value),
                    source=USER,
                )
            )
        memory.AppendMessages(
            mpb.AppendMessagesRequest(
                agent_id=agent,
                session_id="s1",
                messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=f"hi {marker}")],
            )
        )
        content = struct_pb2.Struct()
        content.update({"note": marker})
        memory.SetWorkingMemory(
            mpb.SetWorkingMemoryRequest(
                agent_id=agent,
                scope=pb.WorkingMemoryScope(thread_id="t1", resource_id="r1"),
                content=content,
            )
        )
        memory.SetProfile(mpb.SetProfileRequest(agent_id=agent, content=f"# {marker}"))
        snapshot.SaveState(
            spb.SaveStateRequest(
                agent_id=agent,
                session_id="s1",
                components=[spb.StateComponent(name="planner", state=content)],
            )
        )


def export(daemon: Daemon, **request: object) -> bytes:
    with daemon.channel() as channel:
        life = LifecycleServiceStub(channel)
        stream = life.Export(lpb.ExportRequest(include_vectors=True, **request))  # type: ignore[arg-type]
        return b"".join(e.SerializeToString() for e in stream)


def vectors(daemon: Daemon, agent: str) -> dict[str, bytes]:
    with daemon.channel() as channel:
        life = LifecycleServiceStub(channel)
        stream = life.Export(lpb.ExportRequest(agent_id=agent, include_vectors=True))
        return {
            e.record.memory.memory.id: np.asarray(e.record.memory.vector, np.float32).tobytes()
            for e in stream
            if e.HasField("record") and e.record.HasField("memory")
        }


class Writer(threading.Thread):
    """Remembers into ``agent`` until stopped; ``acknowledged`` holds every id answered."""

    def __init__(self, daemon: Daemon, agent: str) -> None:
        super().__init__(daemon=True)
        self.daemon_, self.agent = daemon, agent
        self.stop = threading.Event()
        self.acknowledged: list[str] = []

    def run(self) -> None:
        with self.daemon_.channel() as channel:
            memory = MemoryServiceStub(channel)
            i = 0
            while not self.stop.is_set():
                request = mpb.RememberRequest(
                    agent_id=self.agent, content=f"busy write {i}", source=USER
                )
                self.acknowledged.append(memory.Remember(request).memory.id)
                i += 1


def watch(daemon: Daemon, agent: str, cursor: str = "") -> list[mpb.WatchResponse]:
    """Every message of a catch-up watch of ``agent`` from ``cursor`` ("": now)."""
    with daemon.channel() as channel:
        request = mpb.WatchRequest(agent_id=agent, cursor=cursor)
        return list(MemoryServiceStub(channel).Watch(request, timeout=30))


def verify(daemon: Daemon, needles: list[str]) -> lpb.VerifyErasureResponse:
    with daemon.channel() as channel:
        return LifecycleServiceStub(channel).VerifyErasure(
            lpb.VerifyErasureRequest(needles=needles)
        )


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("erase")
    env: dict[str, str | None] = {
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        # Several segments, all of them kept for the change feed.
        "MEMORYD_DURABILITY__SEGMENT_MB": "1",
        "MEMORYD_DURABILITY__CHECKPOINT_INTERVAL_S": "0.2",
    }
    d = Daemon(data_dir=root / "data", env=env)
    d.start()
    yield d
    d.kill()


def test_erasing_an_agent_leaves_no_byte_of_it_and_keeps_the_others(daemon: Daemon) -> None:
    marker, kept = f"zqerase{uuid.uuid4().hex[:12]}", f"zqkeep{uuid.uuid4().hex[:12]}"
    agent, other = f"gone-{uuid.uuid4().hex[:8]}", f"kept-{uuid.uuid4().hex[:8]}"
    seed(daemon, agent, marker)
    seed(daemon, other, kept)
    erased_vectors = vectors(daemon, agent)
    ids = sorted(erased_vectors)
    assert len(ids) == 4  # three memories and the key's mirror
    # The views and the key mirror are written in the background: wait for them, so
    # the erasure has every kind of copy to remove.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        places = {r.path.split("/")[0] for r in verify(daemon, [marker]).residue}
        if {"wal", "lancedb", "memory_root", "as_of"} <= places:
            break
        time.sleep(0.2)
    # as_of: the memory history's file (docs/as-of.md) holds every version too.
    assert {"wal", "lancedb", "memory_root", "as_of"} <= places, places

    before = watch(daemon, other)[0].cursor  # a change-feed cursor from before the erase
    with daemon.channel() as channel:
        life = LifecycleServiceStub(channel)
        with pytest.raises(grpc.RpcError) as bad:
            life.Erase(lpb.EraseRequest(agent_id=agent))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "ids" in (bad.value.details() or "")

        preview = life.Erase(lpb.EraseRequest(agent_id=agent, whole_agent=True, dry_run=True))
        assert preview.dry_run and sorted(preview.ids) == ids
        assert verify(daemon, [marker]).residue  # a dry run changes nothing

        # Another agent writes throughout the erasure: nothing it was answered for may
        # be lost with the log segments the erasure drops.
        writer = Writer(daemon, f"busy-{uuid.uuid4().hex[:8]}")
        writer.start()
        while len(writer.acknowledged) < 3:
            time.sleep(0.01)
        receipt = life.Erase(lpb.EraseRequest(agent_id=agent, whole_agent=True))
        time.sleep(0.2)
        writer.stop.set()
        writer.join()
    places = {p.name: p.count for p in receipt.places}
    assert sorted(receipt.ids) == ids and not receipt.dry_run and len(receipt.digest) == 64
    assert places["store.memories"] == 4
    assert places["records.key"] >= 1 and places["records.session"] >= 1
    assert places["files.memory_root"] >= 1 and places["log.segments"] >= 1
    assert places["store.memories.old_versions"] >= 1
    assert places["history.memory_versions"] >= 4 and places["files.memory_history"] == 1
    assert set(places) >= {"records.state", "records.profile", "records.working"}

    data = daemon.data_dir
    check = verify(daemon, [marker, *ids])
    assert check.files_scanned > 0
    # The audit log keeps ids (never content): the erased ids are found there only.
    assert {(r.path, r.needle > 0) for r in check.residue} == {("audit/audit.jsonl", True)}
    assert byte_count(data, marker.encode()) == {}
    for memory_id, vector in erased_vectors.items():
        assert set(byte_count(data, memory_id.encode())) == {"audit/audit.jsonl"}
        assert byte_count(data, vector[:64]) == {}, memory_id
    # The log segments the cursor points into are gone: it expires (docs/erasure.md),
    # and a watch from now works.
    with pytest.raises(grpc.RpcError) as expired:
        watch(daemon, other, before)
    assert expired.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "cursor expired" in (expired.value.details() or "")
    assert watch(daemon, other)[0].caught_up
    # The other agent: untouched, on disk and in its export.
    assert verify(daemon, [kept]).residue
    assert kept.encode() in export(daemon, agent_id=other)

    daemon.kill()  # no final checkpoint: what survives is what the log kept
    daemon.start()
    assert byte_count(data, marker.encode()) == {}
    busy = vectors(daemon, writer.agent)
    assert len(writer.acknowledged) > 3 and set(writer.acknowledged) <= set(busy)
    assert marker.encode() not in export(daemon, all_agents=True)
    assert marker.encode() not in export(daemon, agent_id=agent)
    assert kept.encode() in export(daemon, agent_id=other)


def test_erasing_memories_by_id(daemon: Daemon) -> None:
    marker, agent = f"zqids{uuid.uuid4().hex[:12]}", f"ids-{uuid.uuid4().hex[:8]}"
    with daemon.channel() as channel:
        memory, life = MemoryServiceStub(channel), LifecycleServiceStub(channel)
        gone = memory.Remember(
            mpb.RememberRequest(agent_id=agent, content=f"{marker} secret", source=USER)
        ).memory.id
        stays = memory.Remember(
            mpb.RememberRequest(agent_id=agent, content="an ordinary fact", source=USER)
        ).memory.id
        receipt = life.Erase(lpb.EraseRequest(agent_id=agent, ids=[gone, "no-such-id"]))
        assert list(receipt.ids) == [gone]
        got = memory.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=stays))
        assert got.memory.content == "an ordinary fact"
    assert {r.path for r in verify(daemon, [marker, gone]).residue} == {"audit/audit.jsonl"}
    assert not verify(daemon, [marker]).residue


def test_erasing_a_subject_removes_every_copy_and_only_what_holds_it(daemon: Daemon) -> None:
    """An email address in a memory's text, another's metadata, a key's history, a
    session and working memory: all of it goes, and nothing that does not hold it."""
    email = f"Jane.{uuid.uuid4().hex[:10]}@Example.com"
    agent = f"subject-{uuid.uuid4().hex[:8]}"
    with daemon.channel() as channel:
        memory, life = MemoryServiceStub(channel), LifecycleServiceStub(channel)

        def remember(text: str, **kw: object) -> str:
            request = mpb.RememberRequest(agent_id=agent, content=text, source=USER, **kw)  # type: ignore[arg-type]
            return str(memory.Remember(request).memory.id)

        in_text = remember(f"write to {email} about the invoice")
        in_metadata = remember("the customer asked for a refund", metadata_json=json_text(email))
        unrelated = remember("the office closes at six")
        for value in (email.lower(), "no address any more"):  # the history holds it
            entry = memory.SetMemory(
                mpb.SetMemoryRequest(
                    agent_id=agent,
                    key="/user/contact",
                    content=struct_pb2.Value(string_value=value),
                    source=USER,
                )
            ).entry
            # A read waits for the key's mirror (embedded behind the answer), so each
            # version's mirror is stored, and its as-of history holds the address too.
            memory.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=entry.memory_id))
        memory.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=agent,
                key="/user/city",
                content=struct_pb2.Value(string_value="Lisbon"),
                source=USER,
            )
        )
        memory.AppendMessages(
            mpb.AppendMessagesRequest(
                agent_id=agent,
                session_id="mail",
                messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=f"cc {email}")],
            )
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            residue = {r.path.split("/")[0] for r in verify(daemon, [email.lower()]).residue}
            if {"memory_root", "as_of"} <= residue:
                break
            time.sleep(0.2)
        assert {"memory_root", "as_of"} <= residue

        with pytest.raises(grpc.RpcError) as bad:
            life.Erase(lpb.EraseRequest(agent_id=agent, subject="ab"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        receipt = life.Erase(lpb.EraseRequest(agent_id=agent, subject=email.upper()))
        places = {p.name: p.count for p in receipt.places}
        assert {in_text, in_metadata} <= set(receipt.ids) and unrelated not in receipt.ids
        assert places["records.key"] == 1 and places["records.key_event"] == 2
        assert places["records.session"] == 1
        assert places["history.memory_versions"] >= 2 and places["files.memory_history"] == 1
        # What does not hold the subject stays.
        kept = memory.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=unrelated))
        assert kept.memory.content == "the office closes at six"
        city = memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/user/city"))
        assert city.entry.content.string_value == "Lisbon"
        with pytest.raises(grpc.RpcError) as gone:
            memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/user/contact"))
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND

    for spelling in (email, email.lower()):
        assert not verify(daemon, [spelling]).residue
        assert byte_count(daemon.data_dir, spelling.encode()) == {}
    # The key mirror is rebuilt from the records left: the other key is back.
    deadline = time.monotonic() + 30
    while not verify(daemon, ["Lisbon"]).residue and time.monotonic() < deadline:
        time.sleep(0.2)
    assert any(r.path.startswith("memory_root") for r in verify(daemon, ["Lisbon"]).residue)
    assert not verify(daemon, [email.lower()]).residue


def json_text(email: str) -> str:
    return '{"contact": "' + email + '"}'


def _set(memory: MemoryServiceStub, agent: str, key: str, value: str) -> None:
    request = mpb.SetMemoryRequest(agent_id=agent, key=key, source=USER)
    request.content.string_value = value
    memory.SetMemory(request)


def test_erasing_keys_under_a_prefix_removes_every_version_and_keeps_the_rest(
    daemon: Daemon,
) -> None:
    """Two keys under /people (two versions each, one then tombstoned) and one beside
    it: a dry run counts and changes nothing; the erasure removes both keys' slots,
    every history version and mirror memory, and no byte of their values is left."""
    marker, agent = f"zqkeys{uuid.uuid4().hex[:12]}", f"keys-{uuid.uuid4().hex[:8]}"
    with daemon.channel() as channel:
        memory, life = MemoryServiceStub(channel), LifecycleServiceStub(channel)
        for key in ("/people/ann/email", "/people/bob/phone"):
            for version in (1, 2):
                _set(memory, agent, key, f"{marker} {key} v{version}")
        tombstone = mpb.SetMemoryRequest(agent_id=agent, key="/people/bob/phone", source=USER)
        tombstone.content_json = "null"
        memory.SetMemory(tombstone)
        _set(memory, agent, "/peoples/list", "kept beside the prefix")
        _set(memory, agent, "/places/home", "Lisbon street")
        request = lpb.EraseRequest(agent_id=agent, key_prefix="/people", dry_run=True)
        dry = life.Erase(request)
        places = {p.name: p.count for p in dry.places}
        assert (places["records.key"], places["records.key_event"]) == (2, 5)
        assert dry.dry_run and len(dry.ids) == 1  # ann's mirror (bob's went with his tombstone)
        assert memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/people/ann/email"))
        request.dry_run = False
        receipt = life.Erase(request)
        assert {p.name: p.count for p in receipt.places}["records.key_event"] == 5
        assert list(receipt.ids) == list(dry.ids) and receipt.digest
        for key in ("/people/ann/email", "/people/bob/phone"):
            with pytest.raises(grpc.RpcError) as gone:
                memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key=key))
            assert gone.value.code() == grpc.StatusCode.NOT_FOUND
            with pytest.raises(grpc.RpcError) as no_history:
                memory.KeyHistory(mpb.KeyHistoryRequest(agent_id=agent, key=key))
            assert no_history.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as mirror:
            memory.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=receipt.ids[0]))
        assert mirror.value.code() == grpc.StatusCode.NOT_FOUND
        for kept in ("/peoples/list", "/places/home"):
            assert memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key=kept)).entry.version
        with pytest.raises(grpc.RpcError) as bad:
            life.Erase(lpb.EraseRequest(agent_id=agent, key_prefix="/people/../places"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert not verify(daemon, [marker]).residue
    assert byte_count(daemon.data_dir, marker.encode()) == {}


def test_erasing_a_subject_in_every_agent_of_the_tenant(daemon: Daemon) -> None:
    """all_agents: the subject goes from every agent holding it (a memory of one, a key
    of another) in one receipt; what does not hold it stays; it must name a subject."""
    email = f"sam.{uuid.uuid4().hex[:10]}@example.net"
    first, second = (f"tenant-{uuid.uuid4().hex[:8]}" for _ in range(2))
    with daemon.channel() as channel:
        memory, life = MemoryServiceStub(channel), LifecycleServiceStub(channel)
        held = memory.Remember(
            mpb.RememberRequest(agent_id=first, content=f"mail {email} today", source=USER)
        ).memory.id
        kept = memory.Remember(
            mpb.RememberRequest(agent_id=second, content="an unrelated note", source=USER)
        ).memory.id
        _set(memory, second, "/contacts/sam", email)
        with pytest.raises(grpc.RpcError) as bad:
            life.Erase(lpb.EraseRequest(all_agents=True, whole_agent=True))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        dry = life.Erase(lpb.EraseRequest(all_agents=True, subject=email, dry_run=True))
        receipt = life.Erase(lpb.EraseRequest(all_agents=True, subject=email))
        assert held in receipt.ids and kept not in receipt.ids
        assert list(dry.ids) == list(receipt.ids)
        assert {p.name: p.count for p in receipt.places}["records.key"] == 1
        with pytest.raises(grpc.RpcError) as gone:
            memory.GetMemory(mpb.GetMemoryRequest(agent_id=first, id=held))
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND
        assert memory.GetMemory(mpb.GetMemoryRequest(agent_id=second, id=kept)).memory.id
    assert not verify(daemon, [email]).residue
    assert byte_count(daemon.data_dir, email.encode()) == {}
