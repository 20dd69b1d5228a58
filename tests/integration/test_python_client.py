"""The Python client (clients/python) against LIVE daemons over real gRPC: every RPC
family, sync and async, typed errors, API keys, TLS and mTLS, Unix sockets, and the
example agent loop."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from memoryd_client import (
    TOOL_NAMES,
    AsyncMemorydClient,
    AsyncMemoryTools,
    FailedPreconditionError,
    InvalidArgumentError,
    MemorydClient,
    NotFoundError,
    TlsConfig,
    ToolContext,
    UnauthenticatedError,
    UnavailableError,
)
from memoryd_client.transport import API_KEY_ENV
from tests.conftest import REPO, Daemon
from tests.security.support import CertFactory, KeySpec, api_key_config, write_config, write_pem

EXAMPLE = REPO / "clients" / "python" / "examples" / "agent_loop.py"
KEY = KeySpec("pyclient-key-9d8c7b", "py", "acme", "*", "restricted", ("read", "write", "admin"))


def agent() -> str:
    return f"py-{uuid.uuid4().hex[:10]}"


def test_every_family_through_the_sync_client(shared_daemon: Daemon) -> None:
    a = agent()
    with MemorydClient(shared_daemon.address) as client:
        assert client.health() == "SERVING"
        stored = client.remember(a, "The user prefers green tea in the afternoon", tags=["drink"])
        assert stored.memory.content.startswith("The user") and not stored.deduplicated
        hits = client.recall(a, "what does the user drink?")
        assert hits[0].memory.id == stored.memory.id and 0 < hits[0].score <= 1
        assert hits.embedding_model and hits[0].components.similarity > 0
        memory = client.get(a, stored.memory.id)
        assert memory.tags == ("drink",) and memory.memory_type == "fact"
        assert memory.created_at is not None and memory.created_at.tzinfo is not None
        updated = client.update(a, memory.id, importance=0.9, if_version=memory.version)
        assert updated.importance == 0.9 and updated.version == memory.version + 1
        with pytest.raises(FailedPreconditionError):
            client.update(a, memory.id, importance=0.1, if_version=memory.version)
        assert [m.id for m in client.list(a)] == [memory.id]
        # Keyed memory.
        entry = client.set_memory(a, "/user/drink", {"tea": "green"}, source={"kind": "user"})
        assert entry.content == {"tea": "green"} and entry.valid
        assert client.get_key(a, "/user/drink").version == entry.version
        assert client.list_keys(a, "/").directories == ("/user/",)
        client.set_memory(a, "/user/drink", None, source={"kind": "user"})
        assert [e.valid for e in client.key_history(a, "/user/drink")] == [True, False]
        # Working memory and profile.
        wm = client.set_working_memory(a, {"step": "plan"}, thread_id="t1")
        assert client.get_working_memory(a, thread_id="t1").content == wm.content
        assert [w.thread_id for w in client.list_working_memory_scopes(a)] == ["t1"]
        assert client.delete_working_memory(a, thread_id="t1") is True
        profile = client.set_profile(a, "# Tea bot", if_match="none")
        with pytest.raises(FailedPreconditionError):
            client.set_profile(a, "# Coffee bot", if_match="none")
        assert client.get_profile(a).etag == profile.etag
        # Sessions and snapshots.
        assert client.append_messages(a, "s1", [("user", "Hello"), ("assistant", "Hi")])
        client.inject_instruction(a, "s1", "Answer in one line", kind="focus")
        window = client.get_session_window(a, "s1")
        assert [m.content for m in window.recent] == ["Hello", "Hi"]
        assert window.as_chat()[0]["role"] == "system"
        snapshot = client.build_snapshot(a, "tea time", session_id="s1", token_budget=300)
        assert "green tea" in snapshot.text and snapshot.tokens_used <= 300
        assert client.memory_context(a, "tea time").source == "snapshot"
        client.set_memory(a, "/user/city", "Lisbon", source={"kind": "user"})
        assert "Lisbon" in client.default_read(a).text
        client.save_state(a, "s1", {"planner": {"stage": 2}})
        assert client.load_state(a, "s1")["planner"].state == {"stage": 2}
        assert client.end_session(a, "s1").summary is not None
        # Lifecycle.
        stats = client.get_stats(a)
        assert stats.memories >= 2 and stats.keys == 1
        assert client.archive(a, ids=[memory.id]) == 1
        assert client.restore(a, ids=[memory.id]) == 1
        progress: list[str] = []
        assert client.compact(a, on_progress=lambda p: progress.append(p.phase)).store_optimized
        assert progress
        assert client.run_maintenance(a).finished_at is not None
        records = list(client.export(a))
        assert records[0].WhichOneof("record") == "header"
        copy = agent()
        assert client.import_records(records, target_agent_id=copy).imported >= 2
        assert client.get(copy, memory.id).content == memory.content
        assert client.forget(a, [memory.id]) == [memory.id]
        # Typed errors with the daemon's request id and field violations.
        with pytest.raises(NotFoundError) as missing:
            client.get(a, memory.id)
        assert missing.value.request_id
        with pytest.raises(InvalidArgumentError) as bad:
            client.remember(a, "")
        assert [v.field for v in bad.value.field_violations] == ["content"]


async def test_the_async_client_and_tools(shared_daemon: Daemon) -> None:
    a = agent()
    async with AsyncMemorydClient(shared_daemon.address) as client:
        await client.remember(a, "Deploys happen on Tuesdays")
        hits = await client.recall(a, "when are deploys?")
        assert hits[0].memory.content == "Deploys happen on Tuesdays"
        kinds = [r.WhichOneof("record") async for r in client.export(a)]
        assert kinds[0] == "header" and "memory" in kinds
        names = [*TOOL_NAMES, "record_messages", "memory"]
        tools = AsyncMemoryTools(client, ToolContext(agent_id=a, session_id="s"), names)
        out = json.loads(await tools.handle_tool_call("recall", '{"query": "deploy day"}'))
        assert out["memories"][0]["content"] == "Deploys happen on Tuesdays"
        # The session log: record_messages (issue 21: `record` is long-term memory now).
        message = '{"messages": [{"role": "user", "content": "hi"}]}'
        await tools.handle_tool_call("record_messages", message)
        window = json.loads(await tools.handle_tool_call("retrieve", '{"source": "session"}'))
        assert window["messages"] == [{"role": "user", "content": "hi"}]
        kept = json.loads(
            await tools.handle_tool_call(
                "record", '{"messages": [{"role": "user", "content": "Deploy freeze in May"}]}'
            )
        )
        found = json.loads(await tools.handle_tool_call("retrieve", '{"query": "deploy freeze"}'))
        assert found["memories"][0]["id"] == kept["ids"][0]
        edited = await tools.handle_tool_call(
            "memory", '{"command": "create", "path": "/memories/a.md", "file_text": "x"}'
        )
        assert json.loads(edited)["version"] == 1
        messages = await client.with_memory([{"role": "user", "content": "deploy day?"}], a)
        assert "Tuesdays" in messages[0]["content"]


def test_example_agent_loop_runs_against_a_daemon(shared_daemon: Daemon) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--address", shared_daemon.address, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    turns = json.loads(result.stdout)
    assert len(turns) == 4
    assert turns[0]["system"] == "You are a travel assistant. Be concise."  # nothing yet
    assert "Ada prefers short answers" in turns[1]["system"]  # the snapshot remembers
    assert turns[2]["answer"] == "You asked for: Ada prefers short answers."
    assert "Lisbon" in turns[3]["system"]
    assert "I'm planning a trip to Lisbon" in turns[3]["answer"]  # the recorded session


def test_example_agentscope_modes_runs_against_a_daemon(shared_daemon: Daemon) -> None:
    """AgentScope's three long-term memory modes (issue 21): the model's own record and
    retrieve tools, the framework's retrieve-before and record-after, and both."""
    example = REPO / "clients" / "python" / "examples" / "agentscope_modes.py"
    result = subprocess.run(
        [sys.executable, str(example), "--address", shared_daemon.address, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    modes = json.loads(result.stdout)
    agent = modes["agent_control"]
    assert (
        agent[0]["tools"] == ["record", "retrieve"]
        and agent[0]["prompt"] == "You are a helpful assistant."
    )
    assert agent[0]["tool_results"][0]["ids"]  # recorded to long-term memory
    assert agent[2]["answer"] == "You like green tea."  # its own retrieve found it
    static = modes["static_control"]
    assert all(turn["tools"] == [] for turn in static)
    assert "green tea" in static[2]["prompt"]  # injected before the reply
    assert static[2]["answer"] == "You like green tea (from memory)."
    both = modes["both"]
    assert "green tea" in both[2]["prompt"] and both[2]["answer"] == "You like green tea."


@pytest.fixture
def ca() -> CertFactory:
    return CertFactory()


def test_api_key_over_tls(
    daemon_factory: type[Daemon], tmp_path: Path, ca: CertFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = write_pem(tmp_path, "server", ca.issue("localhost", ips=["127.0.0.1"]))
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca.ca_pem)
    config = api_key_config([KEY])
    config["auth"]["tls"] = {"cert_file": str(cert), "key_file": str(key)}
    d = daemon_factory(config_file=write_config(tmp_path / "c.yaml", config))
    d.start()
    tls = TlsConfig(ca_file=ca_file)
    with MemorydClient(d.address, api_key=KEY.raw, tls=tls) as client:
        assert client.remember("a1", "over tls").memory.tenant_id == "acme"
    with MemorydClient(d.address, tls=tls) as client, pytest.raises(UnauthenticatedError):
        client.list("a1")
    monkeypatch.setenv(API_KEY_ENV, KEY.raw)
    with MemorydClient(d.address, tls=tls) as client:
        assert len(client.list("a1")) == 1
    # No TLS towards a TLS port: no connection (and no retry storm: one short deadline).
    with (
        MemorydClient(d.address, api_key=KEY.raw, timeout=5) as plain,
        pytest.raises(UnavailableError),
    ):
        plain.list("a1")


def test_mtls_with_certificate_files(
    daemon_factory: type[Daemon], tmp_path: Path, ca: CertFactory
) -> None:
    cert, key = write_pem(tmp_path, "server", ca.issue("localhost", ips=["127.0.0.1"]))
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca.ca_pem)
    subject = {"subject": "client-a", "name": "a", "tenant_id": "t-a", "clearance": "restricted"}
    config = {
        "embedder": "hashing",
        "auth": {
            "mode": "mtls",
            "tls": {"cert_file": str(cert), "key_file": str(key), "client_ca_file": str(ca_file)},
            "mtls": {"subjects": [subject]},
        },
    }
    d = daemon_factory(config_file=write_config(tmp_path / "c.yaml", config))
    d.start()
    client_cert, client_key = write_pem(tmp_path, "client", ca.issue("client-a"))
    tls = TlsConfig(ca_file=ca_file, cert_file=client_cert, key_file=client_key)
    with MemorydClient(d.address, tls=tls) as client:
        assert client.remember("x", "mutual").memory.tenant_id == "t-a"
    with pytest.raises(ValueError, match="both cert_file and key_file"):
        MemorydClient(d.address, tls=TlsConfig(ca_file=ca_file, cert_file=client_cert))


def test_unix_socket(daemon_factory: type[Daemon]) -> None:
    socket_dir = Path(tempfile.mkdtemp(prefix="memoryd-py-"))  # sun_path is short
    d = daemon_factory(
        listen=f"unix:{socket_dir}/memoryd.sock", env={"MEMORYD_EMBEDDER": "hashing"}
    )
    d.start()
    with MemorydClient(str(socket_dir / "memoryd.sock")) as client:
        assert client.target == f"unix:{socket_dir}/memoryd.sock"
        assert client.remember("a", "via the socket").memory.content == "via the socket"
