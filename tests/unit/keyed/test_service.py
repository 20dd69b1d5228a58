"""KeyedMemoryService over the in-process stores: every rule of SetMemory and reads."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memoryd.domain.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
)
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyHistoryQuery, KeyListQuery, KeyWrite
from memoryd.domain.models import (
    MemoryFilter,
    MemoryType,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.records import RecordKind
from memoryd.domain.requests import RecallQuery
from memoryd.security.settings import QuotaSettings
from memoryd.service.keyed.docs import mirror_id

from .conftest import Keyed, scope_for

USER_SOURCE = Provenance(ProvenanceKind.USER)

S = scope_for()
DENTIST = "/user/calendar/2026-02-23_10-00_dentist"
WEB = Provenance(
    ProvenanceKind.WEB,
    name="wikipedia",
    retrieved_at=datetime(2026, 1, 1, tzinfo=UTC),
    locator="https://en.wikipedia.org/wiki/Tooth",
)


def fields(err: InvalidArgument) -> dict[str, str]:
    return {v.field: v.description for v in err.violations}


async def stored_nothing(k: Keyed) -> None:
    for kind in (RecordKind.KEY, RecordKind.KEY_EVENT, RecordKind.COUNTER):
        assert await k.records.count_records(S.partition, kind) == 0
    assert await k.store.count(S.partition, MemoryFilter(include_archived=True)) == 0


async def test_set_then_get(keyed: Keyed) -> None:
    content = {"summary": "Dentist appointment on 23 Feb 2026 at 10:00", "type": "episode"}
    entry = await keyed.service.set(
        S,
        KeyWrite("//user//calendar/2026-02-23_10-00_dentist", Json.of(content), source=USER_SOURCE),
    )
    assert entry.key == DENTIST and entry.valid and entry.version == 1
    assert entry.content == content and entry.security_level is SecurityLevel.INTERNAL
    assert entry.memory_id == mirror_id("t1", "a1", DENTIST)
    got = await keyed.service.get(S, DENTIST)
    assert got == entry


@pytest.mark.parametrize(
    "content", [{}, [], "", 0, 1.5, True, False, "text", [None, {"a": []}], {"n": None}]
)
async def test_any_json_value_except_null_is_content(keyed: Keyed, content: Any) -> None:
    await keyed.service.set(S, KeyWrite("/k", Json.of(content), source=USER_SOURCE))
    got = await keyed.service.get(S, "/k")
    assert got.valid and got.content == content and type(got.content) is type(content)


async def test_versions_are_monotonic_per_partition(keyed: Keyed) -> None:
    versions = [
        (await keyed.service.set(S, KeyWrite(f"/k{i % 3}", Json.of(i), source=USER_SOURCE))).version
        for i in range(7)
    ]
    assert versions == list(range(1, 8))
    other = scope_for(agent="a2")
    assert (
        await keyed.service.set(other, KeyWrite("/k0", Json.of("x"), source=USER_SOURCE))
    ).version == 1
    # A restarted service continues from the stored counter.
    restarted = keyed.new_service()
    assert (await restarted.set(S, KeyWrite("/k9", Json.of(1), source=USER_SOURCE))).version == 8


async def test_null_writes_a_tombstone(keyed: Keyed) -> None:
    first = await keyed.service.set(
        S, KeyWrite("/a/b", Json.of({"text": "hello"}), source=USER_SOURCE)
    )
    await keyed.service.set(S, KeyWrite("/a/c", Json.of(1), source=USER_SOURCE))
    tomb = await keyed.service.set(S, KeyWrite("/a/b", Json.of(None), source=USER_SOURCE))
    assert not tomb.valid and tomb.content is None and tomb.memory_id == ""
    assert tomb.version == 3
    with pytest.raises(NotFound):
        await keyed.service.get(S, "/a/b")
    listing = await keyed.service.list(S, KeyListQuery("/a/"))
    assert [e.key for e in listing.entries] == ["/a/c"]
    history = await keyed.service.history(S, KeyHistoryQuery("/a/b"))
    assert [(e.version, e.valid, e.content) for e in history.entries] == [
        (1, True, {"text": "hello"}),
        (3, False, None),
    ]
    # The mirror is gone with it.
    assert await keyed.store.get(S.partition, [first.memory_id]) == []
    # Writing again revives the key (and its mirror, under the same id).
    again = await keyed.service.set(S, KeyWrite("/a/b", Json.of("back"), source=USER_SOURCE))
    assert (await keyed.service.get(S, "/a/b")).content == "back"
    assert [m.content for m in await keyed.store.get(S.partition, [again.memory_id])] == ["back"]


async def test_tombstone_of_a_never_written_key_is_recorded(keyed: Keyed) -> None:
    entry = await keyed.service.set(S, KeyWrite("/never", Json.of(None), source=USER_SOURCE))
    assert entry.version == 1 and not entry.valid
    with pytest.raises(NotFound):
        await keyed.service.get(S, "/never")
    assert len((await keyed.service.history(S, KeyHistoryQuery("/never"))).entries) == 1


async def test_if_version(keyed: Keyed) -> None:
    with pytest.raises(FailedPrecondition, match="does not exist: use 0"):
        await keyed.service.set(S, KeyWrite("/k", Json.of(1), if_version=3, source=USER_SOURCE))
    await stored_nothing(keyed)
    first = await keyed.service.set(S, KeyWrite("/k", Json.of(1), if_version=0, source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/other", Json.of(1), source=USER_SOURCE))
    with pytest.raises(FailedPrecondition):
        await keyed.service.set(S, KeyWrite("/k", Json.of(2), if_version=0, source=USER_SOURCE))
    second = await keyed.service.set(
        S, KeyWrite("/k", Json.of(2), if_version=first.version, source=USER_SOURCE)
    )
    tomb = await keyed.service.set(
        S, KeyWrite("/k", Json.of(None), if_version=second.version, source=USER_SOURCE)
    )
    # A tombstone keeps its version: if_version=0 does not "create" over it.
    with pytest.raises(FailedPrecondition):
        await keyed.service.set(S, KeyWrite("/k", Json.of(3), if_version=0, source=USER_SOURCE))
    await keyed.service.set(
        S, KeyWrite("/k", Json.of(3), if_version=tomb.version, source=USER_SOURCE)
    )
    assert (await keyed.service.get(S, "/k")).content == 3
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite("/k", Json.of(4), if_version=-1, source=USER_SOURCE))
    assert "if_version" in fields(err.value)


async def test_concurrent_creates_with_if_version_zero_admit_exactly_one(keyed: Keyed) -> None:
    results = await asyncio.gather(
        *(
            keyed.service.set(S, KeyWrite("/race", Json.of(i), if_version=0, source=USER_SOURCE))
            for i in range(20)
        ),
        return_exceptions=True,
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(r, FailedPrecondition) for r in results if r not in winners)
    assert len((await keyed.service.history(S, KeyHistoryQuery("/race"))).entries) == 1


async def test_concurrent_writes_get_distinct_versions_and_last_one_wins(keyed: Keyed) -> None:
    entries = await asyncio.gather(
        *(
            keyed.service.set(S, KeyWrite(f"/c/{i % 4}", Json.of(i), source=USER_SOURCE))
            for i in range(24)
        )
    )
    assert sorted(e.version for e in entries) == list(range(1, 25))
    for slot in range(4):
        mine = [e for e in entries if e.key == f"/c/{slot}"]
        latest = max(mine, key=lambda e: e.version)
        got = await keyed.service.get(S, f"/c/{slot}")
        assert got.version == latest.version and got.content == latest.content
        # The mirror matches the slot: same version, same content.
        [mirror] = await keyed.store.get(S.partition, [got.memory_id])
        assert mirror.version == got.version and mirror.content == str(got.content)


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "must not be empty"),
        ("relative/key", "start with '/'"),
        ("/dir/", "names a directory"),
        ("/a/../etc/passwd", "'..'"),
        ("/a/./b", "'.'"),
        ("/a\x00b", "NUL"),
        ("/a\x1bb", "control"),
        ("/" + "x" * 600, "bytes"),
    ],
)
async def test_bad_keys_name_the_field_and_store_nothing(
    keyed: Keyed, key: str, reason: str
) -> None:
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite(key, Json.of({"a": 1}), source=USER_SOURCE))
    assert list(fields(err.value)) == ["key"]
    assert reason in fields(err.value)["key"]
    await stored_nothing(keyed)
    with pytest.raises(InvalidArgument):
        await keyed.service.get(S, key)
    if not key.endswith("/"):  # a directory's history is every key below it
        with pytest.raises(InvalidArgument):
            await keyed.service.history(S, KeyHistoryQuery(key or "x"))


async def test_provenance_required_for_web_tool_file(keyed: Keyed) -> None:
    for kind in (ProvenanceKind.WEB, ProvenanceKind.TOOL, ProvenanceKind.FILE):
        with pytest.raises(InvalidArgument) as err:
            await keyed.service.set(
                S, KeyWrite("/k", Json.of(1), source=Provenance(kind, name="x"))
            )
        assert set(fields(err.value)) == {"source.retrieved_at", "source.locator"}
    await stored_nothing(keyed)
    entry = await keyed.service.set(S, KeyWrite("/k", Json.of(1), source=WEB))
    assert entry.source == WEB
    assert (await keyed.service.get(S, "/k")).source == WEB
    [mirror] = await keyed.store.get(S.partition, [entry.memory_id])
    assert mirror.source == WEB


async def test_provenance_required_under_kb(keyed: Keyed) -> None:
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(
            S, KeyWrite("/kb/teeth", Json.of({"text": "32 teeth"}), source=USER_SOURCE)
        )
    assert set(fields(err.value)) == {"source.name", "source.retrieved_at", "source.locator"}
    user = Provenance(ProvenanceKind.USER, name="chat")
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite("/kb/teeth", Json.of({"text": "32"}), source=user))
    assert set(fields(err.value)) == {"source.retrieved_at", "source.locator"}
    await stored_nothing(keyed)
    await keyed.service.set(S, KeyWrite("/kb/teeth", Json.of({"text": "32 teeth"}), source=WEB))
    # Deleting asserts nothing: a tombstone needs no provenance.
    await keyed.service.set(S, KeyWrite("/kb/teeth", Json.of(None), source=USER_SOURCE))
    # Only the /kb/ directory itself, not look-alikes.
    await keyed.service.set(S, KeyWrite("/kbase/x", Json.of(1), source=USER_SOURCE))


async def test_reserved_content_fields_feed_the_mirror(keyed: Keyed) -> None:
    content = {
        "summary": "Dentist appointment on 23 Feb 2026 at 10:00",
        "text": "ignored: the summary wins",
        "type": "episode",
        "importance": 0.9,
        "tags": [" health ", "calendar", "health"],
        "expired_at": "2026-02-23T11:00:00Z",
    }
    entry = await keyed.service.set(
        S,
        KeyWrite(
            DENTIST,
            Json.of(content),
            security_level=SecurityLevel.CONFIDENTIAL,
            namespace="u1",
            source=USER_SOURCE,
        ),
    )
    [m] = await keyed.store.get(S.partition, [entry.memory_id], with_vectors=True)
    assert m.content == content["summary"] and m.key == DENTIST
    assert m.memory_type is MemoryType.EPISODE and m.importance == 0.9
    assert m.tags == ("health", "calendar")
    assert m.expires_at == datetime(2026, 2, 23, 11, tzinfo=UTC)
    assert m.security_level is SecurityLevel.CONFIDENTIAL and m.namespace == "u1"
    assert m.version == entry.version and m.vector is not None
    [slot] = await keyed.records.get_records(S.partition, RecordKind.KEY, [DENTIST])
    assert slot.expires_at == m.expires_at


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ({"text": "plain text"}, "plain text"),
        ({"summary": "", "text": "fallback"}, "fallback"),
        ({"summary": 5, "b": [1, 2]}, '{"summary":5,"b":[1,2]}'),
        ({}, "{}"),
        ("a string", "a string"),
        ([1, "два"], '[1,"два"]'),
        (42, "42"),
    ],
)
async def test_mirror_text(keyed: Keyed, content: Any, text: str) -> None:
    entry = await keyed.service.set(S, KeyWrite("/k", Json.of(content), source=USER_SOURCE))
    [m] = await keyed.store.get(S.partition, [entry.memory_id])
    assert m.content == text and m.memory_type is MemoryType.FACT and m.importance == 0.5


async def test_unknown_type_is_content_of_its_own(keyed: Keyed) -> None:
    entry = await keyed.service.set(
        S, KeyWrite("/k", Json.of({"type": "meeting", "text": "x"}), source=USER_SOURCE)
    )
    [m] = await keyed.store.get(S.partition, [entry.memory_id])
    assert m.memory_type is MemoryType.FACT


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({"importance": 10.5}, "content.importance"),
        ({"importance": -0.1}, "content.importance"),
        ({"importance": "high"}, "content.importance"),
        ({"importance": True}, "content.importance"),
        ({"tags": "a,b"}, "content.tags"),
        ({"tags": [1]}, "content.tags"),
        ({"tags": [""]}, "content.tags[0]"),
        ({"expired_at": "next tuesday"}, "content.expired_at"),
        ({"expired_at": 1700000000}, "content.expired_at"),
        ({"big": "x" * 70_000}, "content"),
    ],
)
async def test_bad_content_fields(keyed: Keyed, content: Any, field: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite("/k", Json.of(content), source=USER_SOURCE))
    assert field in fields(err.value)
    await stored_nothing(keyed)


async def test_rewriting_a_key_replaces_its_mirror(keyed: Keyed) -> None:
    await keyed.service.set(
        S, KeyWrite("/pref/drink", Json.of({"text": "The user drinks tea"}), source=USER_SOURCE)
    )
    entry = await keyed.service.set(
        S, KeyWrite("/pref/drink", Json.of({"text": "The user drinks coffee"}), source=USER_SOURCE)
    )
    everything = MemoryFilter(include_archived=True)
    assert await keyed.store.count(S.partition, everything) == 1
    outcome = await keyed.memories.recall(S, RecallQuery(query="what does the user drink coffee"))
    assert outcome.results[0].memory.id == entry.memory_id
    assert outcome.results[0].memory.content == "The user drinks coffee"


async def test_expired_keys_are_not_recalled_nor_read(keyed: Keyed) -> None:
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    old = await keyed.service.set(
        S,
        KeyWrite(
            "/old/one", Json.of({"text": "an old reminder", "expired_at": past}), source=USER_SOURCE
        ),
    )
    await keyed.service.set(S, KeyWrite("/kept", Json.of("k"), source=USER_SOURCE))
    outcome = await keyed.memories.recall(S, RecallQuery(query="an old reminder"))
    assert old.memory_id not in {r.memory.id for r in outcome.results}
    # GetKey and ListKeys read it as missing, as DefaultRead and recall do (it used
    # to stay until compaction); a directory holding only it is not listed.
    with pytest.raises(NotFound):
        await keyed.service.get(S, "/old/one")
    listing = await keyed.service.list(S, KeyListQuery("/", recursive=True))
    assert [e.key for e in listing.entries] == ["/kept"]
    root = await keyed.service.list(S, KeyListQuery("/"))
    assert root.directories == [] and [e.key for e in root.entries] == ["/kept"]
    # The history keeps the write; its version still counts for if_version.
    history = await keyed.service.history(S, KeyHistoryQuery("/old/one"))
    assert [e.version for e in history.entries] == [old.version]
    with pytest.raises(FailedPrecondition):
        await keyed.service.set(
            S, KeyWrite("/old/one", Json.of(1), source=USER_SOURCE, if_version=0)
        )
    again = await keyed.service.set(
        S, KeyWrite("/old/one", Json.of(2), source=USER_SOURCE, if_version=old.version)
    )
    assert (await keyed.service.get(S, "/old/one")).version == again.version


async def test_clearance(keyed: Keyed) -> None:
    low = scope_for(clearance=SecurityLevel.INTERNAL)
    with pytest.raises(PermissionDenied, match="security_level"):
        await keyed.service.set(
            low,
            KeyWrite("/x", Json.of(1), security_level=SecurityLevel.RESTRICTED, source=USER_SOURCE),
        )
    await stored_nothing(keyed)
    await keyed.service.set(
        S,
        KeyWrite(
            "/s/secret", Json.of("s"), security_level=SecurityLevel.RESTRICTED, source=USER_SOURCE
        ),
    )
    await keyed.service.set(S, KeyWrite("/s/open", Json.of("o"), source=USER_SOURCE))
    await keyed.service.set(
        S,
        KeyWrite(
            "/hidden/only",
            Json.of("h"),
            security_level=SecurityLevel.RESTRICTED,
            source=USER_SOURCE,
        ),
    )
    with pytest.raises(NotFound):
        await keyed.service.get(low, "/s/secret")
    with pytest.raises(NotFound):
        await keyed.service.history(low, KeyHistoryQuery("/s/secret"))
    listing = await keyed.service.list(low, KeyListQuery("/", recursive=True))
    assert [e.key for e in listing.entries] == ["/s/open"]
    root = await keyed.service.list(low, KeyListQuery("/"))
    assert root.directories == ["/s/"] and root.entries == []
    everything = await keyed.service.history(low, KeyHistoryQuery("/"))
    assert [e.key for e in everything.entries] == ["/s/open"]
    # A key the caller cannot read is, to it, a key that does not exist: if_version
    # must be 0, and a write becomes the key's value at the caller's level; the hidden
    # value stays in the history, at its own level.
    with pytest.raises(FailedPrecondition, match="does not exist: use 0"):
        await keyed.service.set(
            low, KeyWrite("/s/secret", Json.of("mine"), if_version=1, source=USER_SOURCE)
        )
    mine = await keyed.service.set(
        low, KeyWrite("/s/secret", Json.of("mine"), if_version=0, source=USER_SOURCE)
    )
    assert (await keyed.service.get(S, "/s/secret")).content == "mine"
    assert mine.security_level == SecurityLevel.INTERNAL
    history = await keyed.service.history(S, KeyHistoryQuery("/s/secret"))
    assert [e.content for e in history.entries] == ["s", "mine"]
    assert [
        e.content for e in (await keyed.service.history(low, KeyHistoryQuery("/s/secret"))).entries
    ] == ["mine"]


async def test_partitions_are_isolated(keyed: Keyed) -> None:
    other_agent, other_tenant = scope_for(agent="a2"), scope_for(tenant="t2")
    await keyed.service.set(S, KeyWrite("/k", Json.of("mine"), source=USER_SOURCE))
    for other in (other_agent, other_tenant):
        with pytest.raises(NotFound):
            await keyed.service.get(other, "/k")
        with pytest.raises(NotFound):
            await keyed.service.history(other, KeyHistoryQuery("/k"))
        assert (await keyed.service.list(other, KeyListQuery("/", recursive=True))).entries == []
        # The same key elsewhere is another slot (and another mirror).
        theirs = await keyed.service.set(
            other, KeyWrite("/k", Json.of("theirs"), source=USER_SOURCE)
        )
        assert theirs.memory_id != mirror_id("t1", "a1", "/k")
    assert (await keyed.service.get(S, "/k")).content == "mine"


async def test_key_quota(keyed: Keyed) -> None:
    keyed.quotas = QuotaSettings(max_keys_per_partition=2)
    service = keyed.new_service()
    await service.set(S, KeyWrite("/a", Json.of(1), source=USER_SOURCE))
    await service.set(
        S, KeyWrite("/b", Json.of(None), source=USER_SOURCE)
    )  # a tombstone occupies a slot too
    await service.set(S, KeyWrite("/a", Json.of(2), source=USER_SOURCE))  # rewriting is always fine
    with pytest.raises(ResourceExhausted, match="max_keys_per_partition"):
        await service.set(S, KeyWrite("/c", Json.of(1), source=USER_SOURCE))
    await service.set(S, KeyWrite("/b", Json.of(3), source=USER_SOURCE))


async def test_a_cancelled_caller_does_not_cut_a_write_in_half(keyed: Keyed) -> None:
    """Key records written means the mirror is written too, even if the caller leaves."""
    committed, release = asyncio.Event(), asyncio.Event()
    real_upsert = keyed.store.upsert

    async def slow_upsert(partition, memories):  # type: ignore[no-untyped-def]
        committed.set()  # the key records are in: the mirror is next
        await release.wait()
        await real_upsert(partition, memories)

    keyed.store.upsert = slow_upsert  # type: ignore[method-assign]
    caller = asyncio.create_task(
        keyed.service.set(S, KeyWrite("/k", Json.of({"text": "kept whole"}), source=USER_SOURCE))
    )
    await committed.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()
    await asyncio.gather(*keyed.service._applying)
    entry = await keyed.service.get(S, "/k")
    [mirror] = await keyed.store.get(S.partition, [entry.memory_id])
    assert mirror.content == "kept whole" and mirror.version == entry.version


@pytest.mark.parametrize(
    ("raw", "stored"), [(6, 0.6), (8, 0.8), (10, 1.0), (7.5, 0.75), (0.3, 0.3), (1, 1.0), (0, 0.0)]
)
async def test_importance_on_the_design_scale_of_0_to_10(
    keyed: Keyed, raw: float, stored: float
) -> None:
    """Issue 22: the design's examples write "importance": 6 and 8, which were
    rejected; above 1 (up to 10) it is on the 0-10 scale."""
    entry = await keyed.service.set(
        S,
        KeyWrite(
            "/user/preference/style",
            Json.of({"summary": "s", "importance": raw}),
            source=USER_SOURCE,
        ),
    )
    assert entry.content["importance"] == raw  # the content itself is kept as written
    m = await keyed.memories.get(S, entry.memory_id)
    assert m.importance == pytest.approx(stored)


async def test_source_is_required_on_every_write_tombstones_included(keyed: Keyed) -> None:
    """Issue 22: a write without a source was stored (and an unspecified kind became
    "user"); now it is INVALID_ARGUMENT naming source, and nothing is stored."""
    for content in ({"summary": "Dentist"}, None):
        with pytest.raises(InvalidArgument) as err:
            await keyed.service.set(S, KeyWrite(DENTIST, Json.of(content)))
        assert "source" in fields(err.value)
    await stored_nothing(keyed)
    await keyed.service.set(
        S, KeyWrite(DENTIST, Json.of({"summary": "Dentist"}), source=USER_SOURCE)
    )
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite(DENTIST, Json.of(None)))
    assert list(fields(err.value)) == ["source"]
    assert (await keyed.service.get(S, DENTIST)).valid  # the tombstone was not written


@pytest.mark.parametrize(
    "text",
    ["12345678901234567", "1", '{"step": 2}', '{"a": 1.50, "b": 1e2, "c": "\\u00e9", "d": -0}'],
)
async def test_content_json_reads_back_as_written(keyed: Keyed, text: str) -> None:
    """Issue 22: content passed through doubles (12345678901234567 came back as
    1.2345678901234568e+16, 1 as 1.0); the JSON text is stored and returned as
    written, whitespace between tokens aside."""
    written = await keyed.service.set(S, KeyWrite("/k", Json.parse(text), source=USER_SOURCE))
    expected = text.replace(": ", ":").replace(", ", ",")
    assert written.content_json == expected
    assert (await keyed.service.get(S, "/k")).content_json == expected
    history = await keyed.service.history(S, KeyHistoryQuery("/k"))
    assert [e.content_json for e in history.entries] == [expected]


async def test_content_json_that_is_not_json_is_refused_where_it_enters(keyed: Keyed) -> None:
    """The adapter makes the Json (api/convert, mcp/tools); a text it refuses never
    becomes a write, and the error names the field."""
    for text in ("{", "NaN", '{"a": 1, "a": 2}', "1e999", "[" * 100_000, "1" + "0" * 400):
        with pytest.raises(InvalidArgument) as err:
            Json.from_text(text, "content_json")
        assert list(fields(err.value)) == ["content_json"], text
    await stored_nothing(keyed)


async def test_content_json_null_is_a_tombstone(keyed: Keyed) -> None:
    await keyed.service.set(S, KeyWrite("/k", Json.parse("[1]"), source=USER_SOURCE))
    tomb = await keyed.service.set(S, KeyWrite("/k", Json.parse(" null "), source=USER_SOURCE))
    assert not tomb.valid and tomb.content_json == "null"
