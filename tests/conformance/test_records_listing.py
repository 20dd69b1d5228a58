"""RecordStore listing: byte order of the UTF-8 key, prefix filter, ``after`` paging."""

from __future__ import annotations

import itertools
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.models import Partition
from memoryd.domain.records import RecordKind
from memoryd.storage.records import KeyPage, RecordStore

from .records_support import rec, utf8_sorted

P = Partition("tenant", "agent")

#: Keys whose code-point, UTF-16 and locale orders differ, plus "\x00" separators
#: (as history records use) and characters around the surrogate gap.
TRICKY = [
    "/a",
    "/a\x00",
    "/a\x00001",
    "/a\x00002",
    "/a\x00\x00",
    "/a\x01",
    "/a/",
    "/a/b",
    "/a0",
    "/aa",
    "/A",
    "/Z",
    "/ä",
    "/é",
    "/\u00ff",
    "/\u0100",
    "/\ud7ff",
    "/\ue000",
    "/\uffff",
    "/\U00010000",
    "/🙂",
    "/漢字",
    "/\U0010ffff",
    "/\U0010ffff\U0010ffff",
    "/\U0010ffffx",
    "",
    "/",
    "'",
    "%",
    "_",
]


async def page_through(
    store: RecordStore, p: Partition, prefix: str, page: int, kind: RecordKind = RecordKind.KEY
) -> list[str]:
    seen: list[str] = []
    after: str | None = None
    while True:
        rows = await store.list_records(p, kind, KeyPage(prefix=prefix, after=after, limit=page))
        assert len(rows) <= page
        seen.extend(r.key for r in rows)
        if len(rows) < page:
            return seen
        after = rows[-1].key


async def test_list_is_ordered_by_utf8_bytes(record_store: RecordStore) -> None:
    await record_store.put_records(P, [rec(k) for k in reversed(TRICKY)])
    listed = [
        r.key for r in await record_store.list_records(P, RecordKind.KEY, KeyPage(limit=1000))
    ]
    assert listed == utf8_sorted(TRICKY)


async def test_prefix_selects_exactly_the_keys_starting_with_it(record_store: RecordStore) -> None:
    await record_store.put_records(P, [rec(k) for k in TRICKY])
    for prefix in [*TRICKY, "/a\x00\x00\x00", "/b", "/\U0010ffff\U0010ffff\U0010ffff"]:
        listed = await record_store.list_records(
            P, RecordKind.KEY, KeyPage(prefix=prefix, limit=1000)
        )
        expected = utf8_sorted([k for k in TRICKY if k.startswith(prefix)])
        assert [r.key for r in listed] == expected, repr(prefix)


async def test_after_is_exclusive_and_need_not_exist(record_store: RecordStore) -> None:
    await record_store.put_records(P, [rec(k) for k in TRICKY])
    ordered = utf8_sorted(TRICKY)
    for after in [*TRICKY, "/a\x00000", "/zzz", "\U0010ffff" * 3]:
        listed = await record_store.list_records(
            P, RecordKind.KEY, KeyPage(after=after, limit=1000)
        )
        assert [r.key for r in listed] == [k for k in ordered if k.encode() > after.encode()]


async def test_limit_cuts_in_key_order(record_store: RecordStore) -> None:
    await record_store.put_records(P, [rec(k) for k in TRICKY])
    listed = await record_store.list_records(P, RecordKind.KEY, KeyPage(prefix="/a", limit=3))
    assert [r.key for r in listed] == ["/a", "/a\x00", "/a\x00\x00"]


async def test_history_style_keys_page_in_version_order(record_store: RecordStore) -> None:
    # Two keys where one is a prefix of the other: "\x00" keeps their histories apart.
    events = [
        f"{key}\x00{version:020d}" for key in ("/k", "/k/x", "/k0") for version in (1, 2, 10, 11)
    ]
    await record_store.put_records(P, [rec(e, kind=RecordKind.KEY_EVENT) for e in events])
    history = await page_through(record_store, P, "/k\x00", 3, RecordKind.KEY_EVENT)
    assert [int(e.rsplit("\x00", 1)[1]) for e in history] == [1, 2, 10, 11]
    assert all(e.startswith("/k\x00") for e in history)


key_chars = st.sampled_from(["a", "b", "/", "\x00", "ä", "漢", "🙂", "'", "\U0010ffff", "z"])
key_text = st.text(key_chars, min_size=0, max_size=6)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    keys=st.sets(key_text, min_size=0, max_size=25),
    prefix=key_text.map(lambda s: s[:2]),
    page=st.integers(1, 7),
)
async def test_paging_visits_each_record_once(
    record_store: RecordStore, keys: set[str], prefix: str, page: int
) -> None:
    p = Partition("tenant", uuid.uuid4().hex)  # a fresh partition per example
    await record_store.put_records(p, [rec(k) for k in keys])
    seen = await page_through(record_store, p, prefix, page)
    assert seen == utf8_sorted([k for k in keys if k.startswith(prefix)])
    assert len(seen) == len(set(seen))


async def test_paging_while_writing_never_repeats(record_store: RecordStore) -> None:
    """Keyset paging: records added behind the cursor are not revisited."""
    await record_store.put_records(P, [rec(f"/k/{i:03d}") for i in range(0, 40, 2)])
    seen: list[str] = []
    after: str | None = None
    odd = itertools.count(1, 2)
    while True:
        rows = await record_store.list_records(
            P, RecordKind.KEY, KeyPage(prefix="/k/", after=after, limit=5)
        )
        seen.extend(r.key for r in rows)
        if len(rows) < 5:
            break
        after = rows[-1].key
        await record_store.put_records(P, [rec(f"/k/{next(odd):03d}")])
    assert len(seen) == len(set(seen))
    assert seen == sorted(seen)
