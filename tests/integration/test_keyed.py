"""Keyed memory over real gRPC against a real daemon (LanceDB on disk, local model),
and memoryctl's key commands, ls and export-tree."""

from __future__ import annotations

import json
import math
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2
from typer.testing import CliRunner, Result

from memoryd.cli.memoryctl import app
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub

from ..conftest import Daemon
from .test_memory_api import violations

DENTIST = "/user/calendar/2026-02-23_10-00_dentist"
DENTIST_SUMMARY = "Dentist appointment on 23 Feb 2026 at 10:00"
OTHER_KEYS = {
    "/user/calendar/2026-03-01_09-00_standup": {"summary": "Team stand-up meeting on 1 March"},
    "/user/calendar/2026-03-05_18-30_flight": {"summary": "Flight to Lisbon on 5 March evening"},
    "/user/preference/drink": {"summary": "The user prefers green tea to coffee"},
    "/user/name": "Alice",
}
TIMEOUT = "60"
HASHING = {"MEMORYD_EMBEDDER": "hashing"}


def fresh_agent() -> str:
    return f"keys-{uuid.uuid4().hex[:10]}"


def value(data: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    json_format.ParseDict(data, out)
    return out


USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)


def put(stub: MemoryServiceStub, agent: str, key: str, data: Any, **fields: Any) -> mpb.KeyEntry:
    fields.setdefault("source", USER)
    request = mpb.SetMemoryRequest(agent_id=agent, key=key, content=value(data), **fields)
    entry: mpb.KeyEntry = stub.SetMemory(request).entry
    return entry


def code_of(call: Callable[[], Any]) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call()
    code: grpc.StatusCode = err.value.code()
    return code


def all_keys(stub: MemoryServiceStub, agent: str) -> list[str]:
    request = mpb.ListKeysRequest(agent_id=agent, prefix="/", recursive=True, page_size=500)
    return [e.key for e in stub.ListKeys(request).entries]


def history_of(stub: MemoryServiceStub, agent: str, key: str) -> list[mpb.KeyEntry]:
    return list(stub.KeyHistory(mpb.KeyHistoryRequest(agent_id=agent, key=key)).entries)


def memory_count(stub: MemoryServiceStub, agent: str) -> int:
    request = mpb.ListMemoriesRequest(agent_id=agent, page_size=500, include_archived=True)
    return len(stub.ListMemories(request).memories)


Invoke = Callable[..., Result]


@pytest.fixture
def ctl(shared_daemon: Daemon) -> Invoke:
    runner = CliRunner()
    env = {"MEMORYD_ADDRESS": shared_daemon.address, "MEMORYD_AGENT": None, "COLUMNS": None}

    def invoke(*args: str) -> Result:
        return runner.invoke(app, ["--timeout", TIMEOUT, *args], env=env)

    return invoke


def ok_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# ---------------------------------------------------------------- the seed scenario


def test_seed_scenario(ctl: Invoke) -> None:
    agent = fresh_agent()
    for key, data in OTHER_KEYS.items():
        assert (
            ctl("key", "set", key, json.dumps(data), "--source", "user", "--agent", agent).exit_code
            == 0
        )
    dentist = json.dumps({"summary": DENTIST_SUMMARY, "type": "episode"})
    made = ctl("key", "set", DENTIST, dentist, "--source", "user", "--agent", agent)
    assert made.exit_code == 0, made.output
    assert made.stdout.startswith(f"Set {DENTIST} (version ")

    # Found by `ls /user/calendar/` (the table and the JSON).
    table = ctl("ls", "/user/calendar/", "--agent", agent)
    assert table.exit_code == 0, table.output
    assert "2026-02-23_10-00_dentist" in table.stdout and DENTIST_SUMMARY in table.stdout
    listed = ok_json(ctl("ls", "/user/calendar/", "--agent", agent, "--json"))
    assert DENTIST in [e["key"] for e in listed["entries"]]
    root = ok_json(ctl("ls", "/user/", "--agent", agent, "--json"))
    assert root["directories"] == ["/user/calendar/", "/user/preference/"]

    # Found by recall as the top hit.
    hits = ok_json(ctl("recall", "when is my dentist appointment?", "--agent", agent, "--json"))
    top = hits["results"][0]["memory"]
    assert top["content"] == DENTIST_SUMMARY and top["key"] == DENTIST
    assert top["memory_type"] == "MEMORY_TYPE_EPISODE"

    # Tombstoned: gone from reads and recall, present in history.
    gone = ctl("key", "set", DENTIST, "null", "--source", "agent:reminder_done", "--agent", agent)
    assert gone.exit_code == 0 and gone.stdout.startswith(f"Deleted {DENTIST}")
    missing = ctl("key", "get", DENTIST, "--agent", agent)
    assert missing.exit_code == 1 and "NOT_FOUND" in missing.stderr
    listed = ok_json(ctl("ls", "/user/calendar/", "--agent", agent, "--json"))
    assert DENTIST not in [e["key"] for e in listed["entries"]]
    hits = ok_json(ctl("recall", "when is my dentist appointment?", "--agent", agent, "--json"))
    assert DENTIST not in [r["memory"]["key"] for r in hits["results"]]
    history = ok_json(ctl("key", "history", DENTIST, "--agent", agent, "--json"))["entries"]
    assert [e["valid"] for e in history] == [True, False]
    assert history[0]["content"]["summary"] == DENTIST_SUMMARY
    assert history[1]["content"] is None and int(history[1]["version"]) > int(history[0]["version"])
    table = ctl("key", "history", DENTIST, "--agent", agent)
    assert "(deleted)" in table.stdout and DENTIST_SUMMARY in table.stdout


# ---------------------------------------------------------------- gRPC rules


def test_set_get_round_trips_json(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    samples: list[Any] = [
        {},
        [],
        "",
        {"nested": {"list": [1, 2.5, None, True, "漢字 🙂"], "empty": {}}},
        -7,
    ]
    for i, data in enumerate(samples):
        entry = put(memory_stub, agent, f"/json/{i}", data)
        assert entry.valid and entry.memory_id
        got = memory_stub.GetKey(mpb.GetKeyRequest(agent_id=agent, key=f"/json/{i}")).entry
        assert json_format.MessageToDict(got.content) == data
    versions = [e.version for e in history_of(memory_stub, agent, "/")]
    assert versions == list(range(1, len(samples) + 1))


def test_normalised_keys(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    entry = put(memory_stub, agent, "//user///name", "Bob")
    assert entry.key == "/user/name"
    got = memory_stub.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/user//name")).entry
    assert got.version == entry.version


BAD_INPUT: list[tuple[str, dict[str, Any], set[str]]] = [
    ("no content", {"key": "/k"}, {"content_json"}),
    ("relative key", {"key": "k", "content": value(1)}, {"key"}),
    ("directory key", {"key": "/k/", "content": value(1)}, {"key"}),
    ("dot-dot", {"key": "/a/../b", "content": value(1)}, {"key"}),
    ("NUL", {"key": "/a\x00b", "content": value(1)}, {"key"}),
    ("control", {"key": "/a\x07b", "content": value(1)}, {"key"}),
    ("too long", {"key": "/" + "a/" * 300 + "b", "content": value(1)}, {"key"}),
    ("NaN", {"key": "/k", "content": struct_pb2.Value(number_value=math.nan)}, {"content"}),
    ("bad JSON text", {"key": "/k", "content_json": "{'a': 1}"}, {"content_json"}),
    ("both forms", {"key": "/k", "content_json": "1", "content": value(1)}, {"content_json"}),
    (
        "web source without provenance",
        {
            "key": "/k",
            "content": value({"text": "x"}),
            "source": pb.Provenance(kind=pb.PROVENANCE_KIND_WEB),
        },
        {"source.name", "source.retrieved_at", "source.locator"},
    ),
    (
        "/kb/ without provenance",
        {"key": "/kb/fact", "content": value({"text": "x"})},
        {"source.name", "source.retrieved_at", "source.locator"},
    ),
    ("bad importance", {"key": "/k", "content": value({"importance": 11})}, {"content.importance"}),
    (
        "bad expiry",
        {"key": "/k", "content": value({"expired_at": "soon"})},
        {"content.expired_at"},
    ),
    # Issue 22: a write without a source was stored; an unspecified kind became "user".
    ("no source", {"key": "/k", "content": value(1), "source": None}, {"source"}),
    ("no source, tombstone", {"key": "/k", "content_json": "null", "source": None}, {"source"}),
    (
        "unspecified source kind",
        {"key": "/k", "content": value(1), "source": pb.Provenance(name="x")},
        {"source.kind"},
    ),
]


@pytest.mark.parametrize(("case", "fields", "named"), BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_names_the_field_and_stores_nothing(
    memory_stub: MemoryServiceStub, case: str, fields: dict[str, Any], named: set[str]
) -> None:
    agent = fresh_agent()
    fields = {"source": USER, **fields}
    if fields["source"] is None:
        del fields["source"]
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.SetMemory(mpb.SetMemoryRequest(agent_id=agent, **fields))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set(violations(err.value)) == named
    assert all_keys(memory_stub, agent) == []
    assert history_of(memory_stub, agent, "/") == []
    assert memory_count(memory_stub, agent) == 0


def test_if_version_conflicts(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    first = put(memory_stub, agent, "/counter", 1, if_version=0)
    assert code_of(lambda: put(memory_stub, agent, "/counter", 2, if_version=0)) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    second = put(memory_stub, agent, "/counter", 2, if_version=first.version)
    assert code_of(lambda: put(memory_stub, agent, "/counter", 3, if_version=first.version)) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    got = memory_stub.GetKey(mpb.GetKeyRequest(agent_id=agent, key="/counter")).entry
    content: Any = json_format.MessageToDict(got.content)
    assert got.version == second.version and content == 2
    assert len(history_of(memory_stub, agent, "/counter")) == 2


def test_other_agents_see_nothing(memory_stub: MemoryServiceStub) -> None:
    owner, other = fresh_agent(), fresh_agent()
    put(memory_stub, owner, "/secret/plan", {"summary": "The launch is planned for Friday"})
    assert (
        code_of(lambda: memory_stub.GetKey(mpb.GetKeyRequest(agent_id=other, key="/secret/plan")))
        == grpc.StatusCode.NOT_FOUND
    )
    assert (
        code_of(lambda: history_of(memory_stub, other, "/secret/plan")) == grpc.StatusCode.NOT_FOUND
    )
    assert all_keys(memory_stub, other) == []
    assert history_of(memory_stub, other, "/") == []
    recall = memory_stub.Recall(mpb.RecallRequest(agent_id=other, query="when is the launch?"))
    assert list(recall.results) == []
    # Its own write to the same key is its own slot, with its own version sequence.
    mine = put(memory_stub, other, "/secret/plan", "mine")
    assert mine.version == 1
    theirs = memory_stub.GetKey(mpb.GetKeyRequest(agent_id=owner, key="/secret/plan")).entry
    assert json_format.MessageToDict(theirs.content)["summary"].startswith("The launch")


def test_list_pages_and_tokens(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    keys = [f"/p/{i:02d}" for i in range(23)] + ["/p/sub/a", "/p/sub/b"]
    for key in keys:
        put(memory_stub, agent, key, key)
    seen_entries: list[str] = []
    seen_dirs: list[str] = []
    token = ""
    while True:
        page = memory_stub.ListKeys(
            mpb.ListKeysRequest(agent_id=agent, prefix="/p/", page_size=10, page_token=token)
        )
        assert len(page.entries) + len(page.directories) <= 10
        seen_entries += [e.key for e in page.entries]
        seen_dirs += list(page.directories)
        token = page.next_page_token
        if not token:
            break
    assert seen_entries == keys[:23] and seen_dirs == ["/p/sub/"]
    first = memory_stub.ListKeys(mpb.ListKeysRequest(agent_id=agent, prefix="/p/", page_size=5))
    foreign = mpb.ListKeysRequest(
        agent_id=fresh_agent(), prefix="/p/", page_size=5, page_token=first.next_page_token
    )
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.ListKeys(foreign)
    assert set(violations(err.value)) == {"page_token"}


# ---------------------------------------------------------------- export-tree

HOSTILE = {
    "/a b/c%d": 1,
    "/x/..y": 2,
    "/.hidden": 3,
    "/a": 4,
    "/a.json/b": 5,
    "/etc/passwd": 6,
    "/deep/" + "s" * 300 + "/leaf": 7,
    "/deep/" + "s" * 299 + "t/leaf": 8,
    "/漢字/🙂": 9,
    "/back\\slash/~tilde": 10,
}


def test_export_tree_layout(ctl: Invoke, memory_stub: MemoryServiceStub, tmp_path: Path) -> None:
    agent = fresh_agent()
    put(memory_stub, agent, DENTIST, {"summary": DENTIST_SUMMARY, "type": "episode"})
    put(memory_stub, agent, "/user/calendar/2026-03-01_09-00_standup", {"summary": "Stand-up"})
    put(memory_stub, agent, "/user/name", "Alice")
    put(memory_stub, agent, "/user/name", "Alicia")
    put(memory_stub, agent, "/user/old", "gone soon")
    put(memory_stub, agent, "/user/old", None)
    # Expired (content.expired_at passed), not yet compacted: not a live key either.
    put(memory_stub, agent, "/task/done", {"summary": "Paid", "expired_at": "2020-01-01T00:00:00Z"})
    for key, data in HOSTILE.items():
        put(memory_stub, agent, key, data)

    out = tmp_path / "export"
    done = ok_json(ctl("export-tree", str(out), "--agent", agent, "--json"))
    live = 4 + len(HOSTILE) - 1  # the tombstoned /user/old is not a live key
    assert done == {"dir": str(out.resolve()), "writes": 7 + len(HOSTILE), "keys": live}
    # Its directory stays, empty, as for every key still stored (tombstones too).
    assert os.listdir(out / "index" / "task") == []
    assert sorted(os.listdir(tmp_path)) == ["export"]  # nothing escaped DIR
    assert sorted(os.listdir(out)) == ["index", "log.jsonl", "state.jsonl"]

    # `ls DIR/index/user/calendar/` shows the appointments, with real ls too.
    calendar = out / "index" / "user" / "calendar"
    expected = ["2026-02-23_10-00_dentist.json", "2026-03-01_09-00_standup.json"]
    assert sorted(os.listdir(calendar)) == expected
    listing = subprocess.run(["ls", str(calendar)], capture_output=True, text=True, check=True)
    assert listing.stdout.split() == expected
    assert sorted(os.listdir(out / "index" / "user")) == ["calendar", "name.json"]
    dentist = json.loads((calendar / expected[0]).read_text())
    assert dentist["key"] == DENTIST and dentist["valid"] is True
    assert dentist["content"] == {"summary": DENTIST_SUMMARY, "type": "episode"}
    assert json.loads((out / "index" / "user" / "name.json").read_text())["content"] == "Alicia"

    # Every file parses, lies inside DIR/index and names a live key; no hidden files.
    index = (out / "index").resolve()
    files = [Path(root, name) for root, _, names in os.walk(out / "index") for name in names]
    assert len(files) == live
    contents = {}
    for path in files:
        assert path.resolve().is_relative_to(index)
        assert not any(part.startswith(".") for part in path.relative_to(index).parts)
        data = json.loads(path.read_text())
        contents[data["key"]] = data["content"]
    assert contents == {
        **{k: v for k, v in HOSTILE.items()},
        DENTIST: {"summary": DENTIST_SUMMARY, "type": "episode"},
        "/user/calendar/2026-03-01_09-00_standup": {"summary": "Stand-up"},
        "/user/name": "Alicia",
    }
    assert (out / "index" / "a b" / "c%25d.json").is_file()  # names as written
    assert (out / "index" / "漢字" / "🙂.json").is_file()
    assert (out / "index" / "back%5Cslash" / "%7Etilde.json").is_file()
    assert (out / "index" / "a.json").is_file() and (
        out / "index" / "a%2Ejson" / "b.json"
    ).is_file()
    long_dirs = os.listdir(out / "index" / "deep")
    assert len(long_dirs) == 2 and all(len(d.encode()) <= 200 and "~" in d for d in long_dirs)

    # state.jsonl: the latest valid state per key; log.jsonl: every write, oldest first.
    state = [json.loads(line) for line in (out / "state.jsonl").read_text().splitlines()]
    assert sorted(s["key"] for s in state) == sorted(contents)
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [e["version"] for e in log] == sorted(e["version"] for e in log)
    old = [e for e in log if e["key"] == "/user/old"]
    assert [(e["valid"], e["content"]) for e in old] == [(True, "gone soon"), (False, None)]
    assert [e["content"]["summary"] for e in log if e["key"] == "/task/done"] == ["Paid"]
    assert {"key", "ts", "valid", "source", "content"} <= set(log[0])

    # A second export refuses to mix with the first unless asked to replace it.
    again = ctl("export-tree", str(out), "--agent", agent)
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert ctl("export-tree", str(out), "--agent", agent, "--overwrite").exit_code == 0
    assert len([n for _, _, names in os.walk(out / "index") for n in names]) == live


# ---------------------------------------------------------------- daemons of their own


def test_keys_survive_a_restart(daemon_factory: Callable[..., Daemon], tmp_path: Path) -> None:
    data_dir = tmp_path / "keys-data"
    first = daemon_factory(data_dir=data_dir, env=HASHING)
    first.start()
    with first.channel() as channel:
        stub = MemoryServiceStub(channel)
        for i in range(20):  # enough writes for a background compaction
            put(stub, "a", f"/k/{i % 7}", {"text": f"value {i}"})
        put(stub, "a", "/k/0", None)
    assert first.stop() == 0

    second = daemon_factory(data_dir=data_dir, env=HASHING)
    second.start()
    with second.channel() as channel:
        stub = MemoryServiceStub(channel)
        assert all_keys(stub, "a") == [f"/k/{i}" for i in range(1, 7)]
        assert len(history_of(stub, "a", "/")) == 21
        # The version sequence continues where it stopped.
        assert put(stub, "a", "/k/new", 1).version == 22
        hits = stub.Recall(mpb.RecallRequest(agent_id="a", query="value 19", limit=3)).results
        assert hits[0].memory.key == "/k/5"


def test_clearance_over_grpc(daemon_factory: Callable[..., Daemon]) -> None:
    daemon = daemon_factory(env={**HASHING, "MEMORYD_SIDECAR__CLEARANCE": "internal"})
    daemon.start()
    with daemon.channel() as channel:
        stub = MemoryServiceStub(channel)
        secret = pb.SECURITY_LEVEL_RESTRICTED
        assert code_of(lambda: put(stub, "a", "/s", "x", security_level=secret)) == (
            grpc.StatusCode.PERMISSION_DENIED
        )
        assert all_keys(stub, "a") == []
        entry = put(stub, "a", "/s", "x", security_level=pb.SECURITY_LEVEL_PUBLIC)
        assert entry.security_level == pb.SECURITY_LEVEL_PUBLIC
