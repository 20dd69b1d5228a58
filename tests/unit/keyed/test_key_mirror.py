"""The live file mirror (service/keyed/mirror.py) over the in-process stores."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoryd.config import LimitsSettings
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyHistoryQuery, KeyWrite
from memoryd.domain.models import Provenance, ProvenanceKind, SecurityLevel
from memoryd.service.keyed.mirror import KeyMirror, keyed_read_back, last_logged_version
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.keyed.tree import envelope_line

from .conftest import Keyed, scope_for

S = scope_for()
USER = Provenance(ProvenanceKind.USER)


@pytest.fixture
async def mirrored(
    keyed: Keyed, tmp_path: Path
) -> AsyncIterator[tuple[KeyedMemoryService, KeyMirror, Path]]:
    mirror = KeyMirror(tmp_path / "memory", keyed.records, LimitsSettings())
    await mirror.start()
    service = keyed.new_service(observers=[mirror])
    try:
        yield service, mirror, tmp_path / "memory" / "t1" / "a1"
    finally:
        await mirror.close()


def index_keys(root: Path) -> set[str]:
    """The keys the index holds now; a file the mirror removes mid-walk is gone, not an error."""
    keys: set[str] = set()
    for path in (root / "index").rglob("*.json"):
        try:
            keys.add(json.loads(path.read_text())["key"])
        except FileNotFoundError:
            continue
    return keys


def log_lines(root: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (root / "log.jsonl").read_text().splitlines()]


async def until(check: object, what: str) -> None:
    for _ in range(1000):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def test_writes_tombstones_and_hidden_levels(
    mirrored: tuple[KeyedMemoryService, KeyMirror, Path],
) -> None:
    service, _, root = mirrored
    await service.set(S, KeyWrite("/user/name", Json.parse('{"n": 1}'), source=USER))
    await service.set(S, KeyWrite("/user/name", Json.parse('"Alice"'), source=USER))
    await service.set(S, KeyWrite("/user/old", Json.of("x"), source=USER))
    await service.set(S, KeyWrite("/user/old", Json.of(None), source=USER))
    await service.set(
        S, KeyWrite("/secret", Json.of("s"), source=USER, security_level=SecurityLevel.RESTRICTED)
    )
    assert index_keys(root) == {"/user/name"}
    name = json.loads((root / "index" / "user" / "name.json").read_text())
    assert name["content"] == "Alice" and name["version"] == 2
    lines = log_lines(root)
    # Every shown write in order; the RESTRICTED key (above INTERNAL) is left out.
    assert [(line["key"], line["valid"]) for line in lines] == [
        ("/user/name", True),
        ("/user/name", True),
        ("/user/old", True),
        ("/user/old", False),
    ]
    assert '"content":{"n": 1}' not in (root / "log.jsonl").read_text()  # compacted text
    assert '"content":{"n":1}' in (root / "log.jsonl").read_text()
    # Rewritten above the mirror's clearance: its file goes, it does not stay stale.
    await service.set(
        S,
        KeyWrite(
            "/user/name", Json.of("Bob"), source=USER, security_level=SecurityLevel.CONFIDENTIAL
        ),
    )
    assert index_keys(root) == set()
    assert "Bob" not in (root / "log.jsonl").read_text()


async def test_repair_fixes_what_a_crash_or_a_hand_left(
    keyed: Keyed, mirrored: tuple[KeyedMemoryService, KeyMirror, Path], tmp_path: Path
) -> None:
    service, _, root = mirrored
    for i in range(6):
        await service.set(S, KeyWrite(f"/k/{i}", Json.of({"i": i}), source=USER))
    # Writes the files never saw (a crash after the store commit), and damage.
    bare = keyed.new_service()
    await bare.set(S, KeyWrite("/k/7", Json.of({"i": 7}), source=USER))
    await bare.set(S, KeyWrite("/k/0", Json.of(None), source=USER))
    text = (root / "log.jsonl").read_text()
    (root / "log.jsonl").write_text(text + '{"key":"/k/torn","ver')
    (root / "index" / "k" / "3.json").unlink()
    (root / "index" / "k" / "stray.json").write_text("{}")
    (root / "index" / "k" / "5.json").write_text('{"key":"/k/5","stale":true}\n')

    fresh = KeyMirror(tmp_path / "memory", keyed.records, LimitsSettings())
    await fresh.start()
    try:
        await until(lambda: fresh.repairs >= 1, "the start-up repair")
    finally:
        await fresh.close()
    assert index_keys(root) == {f"/k/{i}" for i in (1, 2, 3, 4, 5, 7)}
    assert json.loads((root / "index" / "k" / "5.json").read_text())["content"] == {"i": 5}
    assert [line["version"] for line in log_lines(root)] == list(range(1, 9))
    state = [json.loads(line)["key"] for line in (root / "state.jsonl").read_text().splitlines()]
    assert state == [f"/k/{i}" for i in (1, 2, 3, 4, 5, 7)]
    assert last_logged_version(root / "log.jsonl") == 8


async def test_an_expired_key_leaves_the_index_when_it_expires(
    mirrored: tuple[KeyedMemoryService, KeyMirror, Path],
) -> None:
    service, _, root = mirrored
    soon = (datetime.now(UTC) + timedelta(seconds=0.5)).isoformat()
    await service.set(
        S, KeyWrite("/task/today", Json.of({"text": "call", "expired_at": soon}), source=USER)
    )
    await service.set(S, KeyWrite("/task/later", Json.of({"text": "later"}), source=USER))
    assert index_keys(root) == {"/task/today", "/task/later"}
    await until(lambda: index_keys(root) == {"/task/later"}, "the expiry")
    assert [line["key"] for line in log_lines(root)] == ["/task/today", "/task/later"]


async def test_rewrites_in_a_row_share_one_repair(
    keyed: Keyed, mirrored: tuple[KeyedMemoryService, KeyMirror, Path]
) -> None:
    service, mirror, root = mirrored
    await service.set(S, KeyWrite("/a", Json.of(1), source=USER))
    before = mirror.repairs
    for _ in range(20):  # an import's batches
        async with service.exclusive(S.partition):
            pass
    await until(lambda: mirror.repairs > before, "the repair after the rewrites")
    await asyncio.sleep(0.05)
    assert mirror.repairs - before <= 2
    assert index_keys(root) == {"/a"}


# ---------------------------------------------------------------- names and directories (issue 33)

DENTIST = "/user/calendar/2026-02-23_10-00_牙科复诊"


async def test_names_are_readable_and_directories_stable(
    mirrored: tuple[KeyedMemoryService, KeyMirror, Path],
) -> None:
    """set_memory v2.1 §6.2: ``ls memory_root/index/user/calendar/`` lists the entries
    by name, UTF-8 as written; tombstoning the last key keeps its directory."""
    service, mirror, root = mirrored
    await service.set(S, KeyWrite(DENTIST, Json.of({"text": "明天10点牙科复诊"}), source=USER))
    calendar = root / "index" / "user" / "calendar"
    assert sorted(os.listdir(calendar)) == ["2026-02-23_10-00_牙科复诊.json"]
    await service.set(S, KeyWrite(DENTIST, Json.of(None), source=USER))
    assert calendar.is_dir() and os.listdir(calendar) == []
    # A repair (a restart) keeps it too: the key is still stored, as a tombstone.
    await service.set(S, KeyWrite("/user/calendar/x/y", Json.of(1), source=USER))
    await service.set(S, KeyWrite("/user/calendar/x/y", Json.of(None), source=USER))
    before = mirror.repairs
    async with service.exclusive(S.partition):
        pass  # a lifecycle rewrite: the mirror repairs the partition
    await until(lambda: mirror.repairs > before, "the repair after the rewrite")
    assert (calendar / "x").is_dir() and os.listdir(calendar / "x") == []


async def test_a_percent_encoded_tree_is_renamed_in_place(keyed: Keyed, tmp_path: Path) -> None:
    """A memory_root written before names kept UTF-8: the agent's directory (its id
    percent-encoded) is renamed, its index files get their readable names, its
    log.jsonl is kept (not written twice) and the old directories are gone."""
    agent = scope_for(agent="助手:1")
    bare = keyed.new_service()
    await bare.set(agent, KeyWrite(DENTIST, Json.of({"text": "牙科"}), source=USER))
    root = tmp_path / "memory"
    old = root / "t1" / "%E5%8A%A9%E6%89%8B%3A1"
    old_file = old / "index" / "user" / "calendar"
    old_file = old_file / "2026-02-23_10-00_%E7%89%99%E7%A7%91%E5%A4%8D%E8%AF%8A.json"
    old_file.parent.mkdir(parents=True)
    old_file.write_text("{}\n")
    first = (await bare.history(agent, KeyHistoryQuery(DENTIST))).entries[0]
    (old / "log.jsonl").write_text(envelope_line(first))

    mirror = KeyMirror(root, keyed.records, LimitsSettings())
    await mirror.start()
    try:
        await until(lambda: mirror.repairs >= 1, "the start-up repair")
    finally:
        await mirror.close()
    new = root / "t1" / "助手:1"
    assert sorted(os.listdir(root / "t1")) == ["助手:1"]
    assert os.listdir(new / "index" / "user" / "calendar") == ["2026-02-23_10-00_牙科复诊.json"]
    assert [line["key"] for line in log_lines(new)] == [DENTIST]


HOSTILE = [
    "/../../escape",
    "/a/../../../etc/passwd",
    "/..\\..\\escape",
    "/\\..\\/x",
    "//etc//passwd",
    "/t2/a1/index/stolen",
    "/%2E%2E/%2e%2e/x",
    "/.%2E/x",
    "/~/x",
    "/x\u202e/y\u2028z",
]


async def test_no_key_leaves_its_partition(
    keyed: Keyed, mirrored: tuple[KeyedMemoryService, KeyMirror, Path], tmp_path: Path
) -> None:
    """Keys that try to climb out (``..``, absolute paths, ``\\``, encoded dots,
    another partition's path) are refused or land inside the writer's own index/;
    the other tenant's and agent's trees hold only their own keys."""
    service, _, root = mirrored
    other_tenant, other_agent = scope_for(tenant="t2"), scope_for(agent="a2")
    await service.set(other_tenant, KeyWrite("/mine", Json.of(1), source=USER))
    await service.set(other_agent, KeyWrite("/mine", Json.of(2), source=USER))
    written = []
    for key in HOSTILE:
        try:
            entry = await service.set(S, KeyWrite(key, Json.of(key), source=USER))
        except InvalidArgument:
            continue
        written.append(entry.key)
    assert "/etc/passwd" in written and len(written) >= 6
    memory = (tmp_path / "memory").resolve()
    every_file = {p.resolve() for p in memory.rglob("*") if p.is_file()}
    assert all(p.is_relative_to(memory) for p in every_file)
    mine = {p for p in every_file if p.is_relative_to(root.resolve())}
    assert index_keys(root) == set(written)
    assert {json.loads(p.read_text())["key"] for p in mine if p.parent.name != "a1"} == set(written)
    assert index_keys(tmp_path / "memory" / "t2" / "a1") == {"/mine"}
    assert index_keys(tmp_path / "memory" / "t1" / "a2") == {"/mine"}
    assert sorted(os.listdir(memory)) == ["t1", "t2"]
    assert sorted(os.listdir(memory / "t1")) == ["a1", "a2"]


async def test_a_hand_edited_index_file_is_read_back_not_reverted(
    keyed: Keyed, tmp_path: Path
) -> None:
    """The `memory` tool's file edited by hand, then a rewrite (Compact) repairs the
    partition: the edit becomes the key's next version (provenance file)."""
    mirror = KeyMirror(tmp_path / "memory", keyed.records, LimitsSettings())
    service = keyed.new_service(observers=[mirror])
    mirror.read_back = keyed_read_back(service, SecurityLevel.INTERNAL)
    await mirror.start()
    try:
        root = tmp_path / "memory" / "t1" / "a1"
        notes = "/memories/notes.md"
        await service.set(S, KeyWrite(notes, Json.of("# Notes\n- buy milk\n"), source=USER))
        await service.set(S, KeyWrite("/other", Json.of("kept"), source=USER))
        path = root / "index" / "memories" / "notes.md.json"
        envelope = json.loads(path.read_text())
        read_version = envelope["version"]
        envelope["content"] = "# Notes\n- buy oat milk\n"
        path.write_text(json.dumps(envelope) + "\n")
        # A stale envelope (an older version) is the store's to replace, not an edit.
        other = root / "index" / "other.json"
        stale = json.loads(other.read_text())
        stale["version"] -= 1
        stale["content"] = "stale"
        other.write_text(json.dumps(stale) + "\n")

        await mirror.keys_rewritten(S.partition)  # as Compact and other rewrites do
        await until(lambda: service_has(path, "oat milk", read_version), "the edit read back")

        entry = await service.get(S, notes)
        assert entry.content == "# Notes\n- buy oat milk\n" and entry.version > read_version
        assert json.loads(path.read_text())["version"] == entry.version
        assert entry.source is not None and entry.source.kind is ProvenanceKind.FILE
        assert entry.source.locator == "t1/a1/index/memories/notes.md.json"
        assert json.loads(other.read_text())["content"] == "kept"
        assert (await service.get(S, "/other")).version == stale["version"] + 1
    finally:
        await mirror.close()


def service_has(path: Path, text: str, after: int) -> bool:
    held = json.loads(path.read_text())
    return text in held["content"] and held["version"] > after
