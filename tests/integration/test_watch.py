"""Watch over real gRPC (one daemon: LanceDB on disk, api keys of two tenants): order,
resume after a disconnect, after a SIGTERM and after a SIGKILL restart on the same data
dir, no cross-tenant changes, clearance and masking, foreign and garbage cursors, and
an expired cursor (docs/watch.md)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

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

USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
ALL = ("read", "write", "admin")
A_ADMIN = KeySpec("watch-a-admin-0123456789abcdef", "a-admin", "ta", "*", "restricted", ALL)
A_LOW = KeySpec("watch-a-low-0123456789abcdef00", "a-low", "ta", "*", "public", ("read",))
B_ADMIN = KeySpec("watch-b-admin-0123456789abcdef", "b-admin", "tb", "*", "restricted", ALL)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("watch")
    config = write_config(
        root / "config.yaml",
        api_key_config(
            [A_ADMIN, A_LOW, B_ADMIN], maintenance={"enabled": False}, masking={"enabled": True}
        ),
    )
    # Small segments and a small retention: the expiry test rolls a few in seconds.
    env: dict[str, str | None] = {
        "MEMORYD_DURABILITY__SEGMENT_MB": "1",
        "MEMORYD_DURABILITY__FEED_RETENTION_MB": "1",
        "MEMORYD_DURABILITY__CHECKPOINT_INTERVAL_S": "0.2",
    }
    d = Daemon(data_dir=root / "data", env=env, config_file=config)
    d.start()
    yield d
    d.kill()


def stub(daemon: Daemon) -> tuple[grpc.Channel, MemoryServiceStub]:
    channel = daemon.channel()
    return channel, MemoryServiceStub(channel)


def watch(daemon: Daemon, key: KeySpec, agent: str, **request: Any) -> list[mpb.WatchResponse]:
    """Every message of a catch-up watch (it ends at its caught-up mark)."""
    channel, memory = stub(daemon)
    with channel:
        request_ = mpb.WatchRequest(agent_id=agent, **request)
        return list(memory.Watch(request_, metadata=key.metadata, timeout=30))


def changes(messages: list[mpb.WatchResponse]) -> list[tuple[str, str]]:
    return [
        (mpb.ChangeKind.Name(c.kind), c.memory_id or c.key) for m in messages for c in m.changes
    ]


def head(daemon: Daemon, key: KeySpec, agent: str, **request: Any) -> str:
    """The cursor of a watch from now (its first message, caught up)."""
    first = watch(daemon, key, agent, **request)[0]
    assert first.caught_up and not first.changes
    return first.cursor


def remember(daemon: Daemon, agent: str, text: str, key: KeySpec = A_ADMIN, **kw: Any) -> str:
    channel, memory = stub(daemon)
    with channel:
        request = mpb.RememberRequest(agent_id=agent, content=text, source=USER, **kw)
        return str(memory.Remember(request, metadata=key.metadata).memory.id)


def fresh_agent() -> str:
    return f"w-{uuid.uuid4().hex[:8]}"


def test_every_change_in_order_then_resumed_from_any_cursor(daemon: Daemon) -> None:
    agent = fresh_agent()
    start = head(daemon, A_ADMIN, agent)
    ids = [
        remember(daemon, agent, f"fact number {i} about topic {uuid.uuid4().hex}") for i in range(4)
    ]
    channel, memory = stub(daemon)
    with channel:
        meta = A_ADMIN.metadata
        memory.UpdateMemory(
            mpb.UpdateMemoryRequest(
                agent_id=agent,
                memory=pb.Memory(id=ids[1], content="changed"),
                update_mask={"paths": ["content"]},
            ),
            metadata=meta,
        )
        memory.ForgetMemories(
            mpb.ForgetMemoriesRequest(agent_id=agent, ids=[ids[2]]), metadata=meta
        )
        setting = mpb.SetMemoryRequest(agent_id=agent, key="/user/colour", source=USER)
        setting.content_json = '"green"'
        memory.SetMemory(setting, metadata=meta)
        setting.content_json = "null"
        memory.SetMemory(setting, metadata=meta)
    got = watch(daemon, A_ADMIN, agent, cursor=start)
    seen = changes(got)
    memory_events = [c for c in seen if c[1] in ids]
    assert memory_events == [
        ("CHANGE_KIND_MEMORY_CREATED", ids[0]),
        ("CHANGE_KIND_MEMORY_CREATED", ids[1]),
        ("CHANGE_KIND_MEMORY_CREATED", ids[2]),
        ("CHANGE_KIND_MEMORY_CREATED", ids[3]),
        ("CHANGE_KIND_MEMORY_UPDATED", ids[1]),
        ("CHANGE_KIND_MEMORY_DELETED", ids[2]),
    ]
    keys = [c for c in seen if c[1] == "/user/colour"]
    assert keys == [
        ("CHANGE_KIND_KEY_SET", "/user/colour"),
        ("CHANGE_KIND_KEY_DELETED", "/user/colour"),
    ]
    updated = next(
        c
        for m in got
        for c in m.changes
        if c.memory_id == ids[1] and c.kind == mpb.CHANGE_KIND_MEMORY_UPDATED
    )
    assert updated.memory.content == "changed" and updated.agent_id == agent
    # Resumed from each message's cursor: exactly what followed it.
    done = 0
    for message in got:
        done += len(message.changes)
        assert changes(watch(daemon, A_ADMIN, agent, cursor=message.cursor)) == seen[done:]
    # From the last cursor: nothing, then the watch says it is caught up.
    tail = watch(daemon, A_ADMIN, agent, cursor=got[-1].cursor)
    assert [(m.caught_up, len(m.changes)) for m in tail] == [(True, 0)]


def test_a_write_split_over_messages_resumes_inside_it(daemon: Daemon) -> None:
    """A batch of 300 is one log entry; its changes come 256 to a message, and the
    cursor between them names the entry and how many of its changes were delivered."""
    agent = fresh_agent()
    start = head(daemon, A_ADMIN, agent)
    channel, memory = stub(daemon)
    with channel:
        items = [
            mpb.RememberRequest(content=f"item {i} {uuid.uuid4().hex}", source=USER)
            for i in range(300)
        ]
        batch = memory.RememberBatch(
            mpb.RememberBatchRequest(agent_id=agent, items=items), metadata=A_ADMIN.metadata
        )
    made = [r.memory.id for r in batch.results]
    got = [m for m in watch(daemon, A_ADMIN, agent, cursor=start) if m.changes]
    assert [len(m.changes) for m in got] == [256, 44]
    assert [i for _, i in changes(got)] == made
    rest = changes(watch(daemon, A_ADMIN, agent, cursor=got[0].cursor))
    assert [i for _, i in rest] == made[256:]


def test_live_watch_sees_writes_made_while_it_waits(daemon: Daemon) -> None:
    agent = fresh_agent()
    channel, memory = stub(daemon)
    with channel:
        responses = memory.Watch(
            mpb.WatchRequest(agent_id=agent, follow=True), metadata=A_ADMIN.metadata, timeout=30
        )
        first = next(responses)
        assert first.caught_up
        made = remember(daemon, agent, "written while a watcher waits")
        live = next(responses)
        responses.cancel()
    assert changes([live]) == [("CHANGE_KIND_MEMORY_CREATED", made)]


def test_no_change_of_another_tenant_or_agent(daemon: Daemon) -> None:
    agent = fresh_agent()
    other = fresh_agent()
    b_start = head(daemon, B_ADMIN, agent)
    b_wide = head(daemon, B_ADMIN, "", tenant_wide=True)
    a_start = head(daemon, A_ADMIN, agent)
    remember(daemon, agent, "tenant A's secret plan")
    remember(daemon, other, "another agent of tenant A")
    assert changes(watch(daemon, B_ADMIN, agent, cursor=b_start)) == []
    assert changes(watch(daemon, B_ADMIN, "", cursor=b_wide, tenant_wide=True)) == []
    assert changes(watch(daemon, B_ADMIN, agent, start=mpb.WATCH_START_OLDEST)) == []
    mine = changes(watch(daemon, A_ADMIN, agent, cursor=a_start))
    assert len(mine) == 1
    wide = changes(watch(daemon, A_ADMIN, "", start=mpb.WATCH_START_OLDEST, tenant_wide=True))
    assert {c[0] for c in wide} >= {"CHANGE_KIND_MEMORY_CREATED"} and len(wide) >= 2


def test_clearance_filters_and_masking_applies(daemon: Daemon) -> None:
    agent = fresh_agent()
    start = head(daemon, A_LOW, agent)
    remember(
        daemon, agent, "restricted launch code 4242", security_level=pb.SECURITY_LEVEL_RESTRICTED
    )
    public = remember(
        daemon, agent, "write to alice@example.com", security_level=pb.SECURITY_LEVEL_PUBLIC
    )
    got = [c for m in watch(daemon, A_LOW, agent, cursor=start) for c in m.changes]
    assert [c.memory_id for c in got] == [public]
    assert "alice@example.com" not in got[0].memory.content
    with pytest.raises(grpc.RpcError) as denied:
        watch(daemon, A_LOW, "", tenant_wide=True)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_a_deletion_above_the_watchers_clearance_is_not_shown_to_have_happened(
    daemon: Daemon,
) -> None:
    """Deleted memories (ForgetMemories), a key's tombstone with its mirror memory (one
    transaction, deleted unread) and purged keys (Reset) carry the level they were
    stored at: the low-clearance watcher sees none of the restricted ones (no id, no
    key path) and every one of its own level; the admin sees them all."""
    agent = fresh_agent()
    low_start, admin_start = head(daemon, A_LOW, agent), head(daemon, A_ADMIN, agent)
    restricted = pb.SECURITY_LEVEL_RESTRICTED
    hidden = remember(daemon, agent, "restricted launch code 4242", security_level=restricted)
    shown = remember(daemon, agent, "the public cafe opens at nine", security_level=1)
    channel, memory = stub(daemon)
    with channel:
        meta = A_ADMIN.metadata
        for key, level in (("/vault/quokka", restricted), ("/lobby/menu", 1)):
            setting = mpb.SetMemoryRequest(agent_id=agent, key=key, source=USER)
            setting.security_level = level
            setting.content_json = '"a text value with a mirror"'
            memory.SetMemory(setting, metadata=meta)
            setting.content_json = "null"  # a tombstone: the mirror goes in the same entry
            memory.SetMemory(setting, metadata=meta)
            setting.content_json = '"again"'
            memory.SetMemory(setting, metadata=meta)
        forget = mpb.ForgetMemoriesRequest(agent_id=agent, ids=[hidden, shown])
        memory.ForgetMemories(forget, metadata=meta)
        lifecycle = LifecycleServiceStub(channel)
        # Reset deletes every key's slot (an Erase would too, and shred the log: every
        # cursor into it expires).
        lifecycle.Reset(lpb.ResetRequest(agent_id=agent, confirm=True), metadata=meta)
    everything = [c for m in watch(daemon, A_ADMIN, agent, cursor=admin_start) for c in m.changes]
    seen = [c for m in watch(daemon, A_LOW, agent, cursor=low_start) for c in m.changes]
    deleted = mpb.CHANGE_KIND_MEMORY_DELETED
    hidden_mirrors = {c.memory_id for c in everything if c.memory.key == "/vault/quokka"}
    assert hidden_mirrors, "the restricted key has a mirror memory"
    hidden_ids = {hidden, *hidden_mirrors}
    # The admin sees each restricted deletion: the forgotten memory, the mirror
    # deleted with the tombstone, the key's tombstone and its purge by the reset.
    assert (deleted, hidden) in {(c.kind, c.memory_id) for c in everything}
    assert {c.memory_id for c in everything if c.kind == deleted} >= hidden_ids
    purged = [c for c in everything if c.key == "/vault/quokka" and not c.HasField("key_entry")]
    assert purged and all(c.kind == mpb.CHANGE_KIND_KEY_DELETED for c in purged)
    # The low watcher: nothing of any of them, every change at its level.
    rendered = str(seen)
    assert "quokka" not in rendered
    assert not [i for i in hidden_ids if i in rendered]
    assert (deleted, shown) in {(c.kind, c.memory_id) for c in seen}
    lobby = [c.kind for c in seen if c.key == "/lobby/menu"]
    assert lobby.count(mpb.CHANGE_KIND_KEY_DELETED) == 2  # its tombstone and its purge
    lobby_mirrors = {c.memory_id for c in seen if c.memory.key == "/lobby/menu"}
    assert lobby_mirrors and lobby_mirrors <= {c.memory_id for c in seen if c.kind == deleted}


@pytest.mark.parametrize(
    "cursor_of",
    ["garbage", "tampered", "other tenant", "other agent", "tenant-wide"],
)
def test_a_cursor_not_issued_for_this_watch_is_invalid(daemon: Daemon, cursor_of: str) -> None:
    agent = fresh_agent()
    cursor = head(daemon, A_ADMIN, agent)
    key, asked, wide = A_ADMIN, agent, False
    if cursor_of == "garbage":
        cursor = "not-a-cursor"
    elif cursor_of == "tampered":
        cursor = cursor[:-3] + ("AAA" if not cursor.endswith("AAA") else "BBB")
    elif cursor_of == "other tenant":
        key = B_ADMIN
    elif cursor_of == "other agent":
        asked = fresh_agent()
    else:
        asked, wide = "", True
    with pytest.raises(grpc.RpcError) as err:
        watch(daemon, key, asked, cursor=cursor, tenant_wide=wide)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cursor" in violations(err.value)


def test_resumes_after_sigterm_and_after_sigkill_restarts(daemon: Daemon) -> None:
    agent = fresh_agent()
    cursor = head(daemon, A_ADMIN, agent)
    made = [remember(daemon, agent, f"before the restarts {i}") for i in range(3)]
    daemon.stop()
    daemon.start()
    made += [remember(daemon, agent, f"between the restarts {i}") for i in range(2)]
    daemon.kill()  # SIGKILL: acknowledged writes are in the log, replayed at start
    daemon.start()
    made.append(remember(daemon, agent, "after the restarts"))
    seen = changes(watch(daemon, A_ADMIN, agent, cursor=cursor))
    assert seen == [("CHANGE_KIND_MEMORY_CREATED", i) for i in made]


def test_a_cursor_older_than_the_retention_expires(daemon: Daemon) -> None:
    agent = fresh_agent()
    cursor = head(daemon, A_ADMIN, agent)
    remember(daemon, agent, "the first change")
    channel, memory = stub(daemon)
    with channel:
        filler = "x" * 6000
        for batch in range(6):  # ~3.6 MB: segments of 1 MiB roll, the oldest go
            drafts = [
                mpb.RememberRequest(content=f"{batch}-{i} {uuid.uuid4().hex} {filler}", source=USER)
                for i in range(100)
            ]
            memory.RememberBatch(
                mpb.RememberBatchRequest(agent_id=fresh_agent(), items=drafts),
                metadata=A_ADMIN.metadata,
            )
    # The checkpoint (every 0.2 s) deletes the old segments once the store has them.
    code, details = None, ""
    for _ in range(50):
        try:
            watch(daemon, A_ADMIN, agent, cursor=cursor)
        except grpc.RpcError as exc:
            code, details = exc.code(), exc.details() or ""
            break
        time.sleep(0.1)
    assert code == grpc.StatusCode.FAILED_PRECONDITION, details
    assert "cursor expired" in details


def test_no_gap_no_duplicate_across_sigkills_with_concurrent_writers(daemon: Daemon) -> None:
    """Writers on four agents write while the daemon is SIGKILLed three times; a
    tenant-wide watcher follows throughout, reconnecting with its last cursor. Every
    acknowledged write is in the feed exactly once, each writer's in its order, and
    the live watcher saw exactly what a catch-up read from its first cursor sees."""
    agents = [fresh_agent() for _ in range(4)]
    start = head(daemon, A_ADMIN, "", tenant_wide=True)
    stop = threading.Event()
    acknowledged: dict[str, list[str]] = {a: [] for a in agents}
    live: list[tuple[str, str]] = []

    def write(agent: str) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                # Unrelated words: no deduplication or contradiction changes another.
                text = f"{uuid.uuid4().hex} {uuid.uuid4().hex} {n}"
                acknowledged[agent].append(remember(daemon, agent, text))
            except grpc.RpcError:
                time.sleep(0.05)  # the daemon is down: not acknowledged, maybe durable

    last: list[str] = []

    def follow() -> None:
        cursor = start
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                channel, memory = stub(daemon)
                with channel:
                    request = mpb.WatchRequest(cursor=cursor, tenant_wide=True, follow=True)
                    for message in memory.Watch(request, metadata=A_ADMIN.metadata, timeout=60):
                        cursor = message.cursor
                        live.extend(changes([message]))
                        if last and live and live[-1][1] == last[0]:
                            return
            except grpc.RpcError:
                time.sleep(0.05)

    writers = [threading.Thread(target=write, args=(a,)) for a in agents]
    watcher = threading.Thread(target=follow)
    for t in (*writers, watcher):
        t.start()
    try:
        for _ in range(3):
            time.sleep(1.0)
            daemon.kill()
            daemon.start()
        time.sleep(1.0)
    finally:
        stop.set()
        for t in writers:
            t.join(60)
        last.append(remember(daemon, agents[0], "the last write, after every writer stopped"))
        acknowledged[agents[0]].append(last[0])
        watcher.join(120)
    seen = [c for c in changes(watch(daemon, A_ADMIN, "", cursor=start, tenant_wide=True))]
    assert {kind for kind, _ in seen} == {"CHANGE_KIND_MEMORY_CREATED"}, seen
    ids = [i for _, i in seen]
    assert len(ids) == len(set(ids))  # no duplicate
    for agent, mine in acknowledged.items():
        assert mine, f"{agent} wrote nothing"
        in_feed = [i for i in ids if i in set(mine)]
        assert in_feed == mine  # no gap, in the writer's order
    assert live == seen  # the live watcher, across three crashes, saw the same


def _write_agent_state(daemon: Daemon, agent: str) -> None:
    """Working memory set and deleted, the profile, a session's messages, fixed zone
    and saved state, then the session ended."""
    channel, memory = stub(daemon)
    with channel:
        meta, scope = A_ADMIN.metadata, pb.WorkingMemoryScope(thread_id="t1")
        working = mpb.SetWorkingMemoryRequest(
            agent_id=agent, scope=scope, content_json='{"step": 1, "mail": "bob@example.org"}'
        )
        memory.SetWorkingMemory(working, metadata=meta)
        memory.DeleteWorkingMemory(
            mpb.DeleteWorkingMemoryRequest(agent_id=agent, scope=scope), metadata=meta
        )
        profile = mpb.SetProfileRequest(agent_id=agent, content="# Helper\nwrite bob@example.org\n")
        memory.SetProfile(profile, metadata=meta)
        said = mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="hello there")
        append = mpb.AppendMessagesRequest(agent_id=agent, session_id="s1", messages=[said])
        memory.AppendMessages(append, metadata=meta)
        inject = mpb.InjectInstructionRequest(
            agent_id=agent,
            session_id="s1",
            kind=mpb.FIXED_ZONE_KIND_INSTRUCTION,
            content="answer briefly",
        )
        memory.InjectInstruction(inject, metadata=meta)
        component = spb.StateComponent(name="planner", state_json='{"next": "bob@example.org"}')
        save = spb.SaveStateRequest(agent_id=agent, session_id="s1", components=[component])
        SnapshotServiceStub(channel).SaveState(save, metadata=meta)
        memory.EndSession(mpb.EndSessionRequest(agent_id=agent, session_id="s1"), metadata=meta)


def test_agent_state_changes_in_order_exactly_once_per_cursor(daemon: Daemon) -> None:
    """Working memory, the profile, a session and its saved state are in the feed, in
    the order they were written, across a SIGKILL restart; every message's cursor
    resumes with exactly what followed it; a low-clearance watcher sees the same
    changes, masked."""
    agent = fresh_agent()
    start, low_start = head(daemon, A_ADMIN, agent), head(daemon, A_LOW, agent)
    _write_agent_state(daemon, agent)
    daemon.kill()  # acknowledged, so in the log: replayed, and in the feed after it
    daemon.start()
    got = watch(daemon, A_ADMIN, agent, cursor=start)
    every = [c for m in got for c in m.changes]
    assert [mpb.ChangeKind.Name(c.kind).removeprefix("CHANGE_KIND_") for c in every] == [
        "WORKING_MEMORY_SET",
        "WORKING_MEMORY_DELETED",
        "PROFILE_SET",
        "SESSION_UPDATED",  # messages appended
        "SESSION_UPDATED",  # an instruction in the fixed zone
        "STATE_SAVED",
        "SESSION_UPDATED",  # ended
    ]
    working, gone, profile, *session, state, _ = every
    assert json.loads(working.working_memory.content_json) == {"step": 1, "mail": "bob@example.org"}
    assert working.working_memory_scope.thread_id == "t1" == gone.working_memory_scope.thread_id
    assert not gone.HasField("working_memory")
    assert profile.profile.content.startswith("# Helper") and profile.profile.etag
    assert {c.session_id for c in (*session, state)} == {"s1"}
    assert (state.component, state.state.name) == ("planner", "planner")
    assert json.loads(state.state.state_json) == {"next": "bob@example.org"}
    assert all(c.agent_id == agent for c in every)
    done = 0
    for message in got:
        done += len(message.changes)
        rest = [c for m in watch(daemon, A_ADMIN, agent, cursor=message.cursor) for c in m.changes]
        assert rest == every[done:]
    low = [c for m in watch(daemon, A_LOW, agent, cursor=low_start) for c in m.changes]
    assert [c.kind for c in low] == [c.kind for c in every]
    assert "bob@example.org" in str(every) and "bob@example.org" not in str(low)
    assert "[email]" in low[0].working_memory.content_json
