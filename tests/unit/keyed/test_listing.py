"""ListKeys (one level like `ls`, or recursive) and KeyHistory paging."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.errors import InvalidArgument, NotFound
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyHistoryQuery, KeyListing, KeyListQuery, KeyWrite
from memoryd.domain.models import Provenance, ProvenanceKind
from memoryd.domain.principal import CallScope
from memoryd.service.keyed.service import KeyedMemoryService

from .conftest import Keyed, scope_for

USER_SOURCE = Provenance(ProvenanceKind.USER)

S = scope_for()


async def list_all(
    service: KeyedMemoryService, scope: CallScope, prefix: str, recursive: bool, page: int
) -> tuple[list[str], list[str], int]:
    """Every entry and directory, following page tokens; and the number of pages."""
    entries: list[str] = []
    dirs: list[str] = []
    token, pages = "", 0
    while True:
        listing: KeyListing = await service.list(
            scope, KeyListQuery(prefix, recursive, page_size=page, page_token=token)
        )
        pages += 1
        assert len(listing.entries) + len(listing.directories) <= page
        entries += [e.key for e in listing.entries]
        dirs += listing.directories
        token = listing.next_page_token
        if not token:
            return entries, dirs, pages
        assert pages < 1000


async def test_ls_one_level(keyed: Keyed) -> None:
    for key in [
        "/user/calendar/2026-02-23_10-00_dentist",
        "/user/calendar/2026-03-01_09-00_standup",
        "/user/name",
        "/user/prefs/style/colour",
        "/user/prefs/drink",
        "/user0",
        "/users/x",
        "/top",
    ]:
        await keyed.service.set(S, KeyWrite(key, Json.of({"text": key}), source=USER_SOURCE))
    user = await keyed.service.list(S, KeyListQuery("/user/"))
    assert [e.key for e in user.entries] == ["/user/name"]
    assert user.directories == ["/user/calendar/", "/user/prefs/"]
    assert user.next_page_token == ""
    # No trailing slash: still the directory (like `ls /user`).
    assert await keyed.service.list(S, KeyListQuery("/user")) == user
    root = await keyed.service.list(S, KeyListQuery(""))
    assert [e.key for e in root.entries] == ["/top", "/user0"]
    assert root.directories == ["/user/", "/users/"]
    cal = await keyed.service.list(S, KeyListQuery("/user/calendar/"))
    assert [e.key for e in cal.entries] == [
        "/user/calendar/2026-02-23_10-00_dentist",
        "/user/calendar/2026-03-01_09-00_standup",
    ]
    rec = await keyed.service.list(S, KeyListQuery("/user/", recursive=True))
    assert rec.directories == []
    assert [e.key for e in rec.entries] == [
        "/user/calendar/2026-02-23_10-00_dentist",
        "/user/calendar/2026-03-01_09-00_standup",
        "/user/name",
        "/user/prefs/drink",
        "/user/prefs/style/colour",
    ]
    assert (await keyed.service.list(S, KeyListQuery("/nothing/"))).entries == []


async def test_directories_of_only_tombstones_are_hidden(keyed: Keyed) -> None:
    await keyed.service.set(S, KeyWrite("/d/gone/a", Json.of(1), source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/d/gone/b", Json.of(1), source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/d/half/a", Json.of(1), source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/d/half/b", Json.of(1), source=USER_SOURCE))
    for key in ("/d/gone/a", "/d/gone/b", "/d/half/a"):
        await keyed.service.set(S, KeyWrite(key, Json.of(None), source=USER_SOURCE))
    listing = await keyed.service.list(S, KeyListQuery("/d/"))
    assert listing.directories == ["/d/half/"]


async def test_bad_list_requests(keyed: Keyed) -> None:
    for bad in ("user/", "/a/../", "/a\x00/"):
        with pytest.raises(InvalidArgument) as err:
            await keyed.service.list(S, KeyListQuery(bad))
        assert [v.field for v in err.value.violations] == ["prefix"]
    for size in (0, -1, 501):
        with pytest.raises(InvalidArgument) as err:
            await keyed.service.list(S, KeyListQuery("/", page_size=size))
        assert [v.field for v in err.value.violations] == ["page_size"]


async def test_page_tokens_are_bound_to_query_and_caller(keyed: Keyed) -> None:
    for i in range(5):
        await keyed.service.set(S, KeyWrite(f"/p/{i}", Json.of(i), source=USER_SOURCE))
    first = await keyed.service.list(S, KeyListQuery("/p/", page_size=2))
    assert first.next_page_token
    for other_scope, query in [
        (S, KeyListQuery("/q/", page_size=2, page_token=first.next_page_token)),
        (S, KeyListQuery("/p/", True, page_size=2, page_token=first.next_page_token)),
        (scope_for(agent="a2"), KeyListQuery("/p/", page_size=2, page_token=first.next_page_token)),
        (S, KeyListQuery("/p/", page_size=2, page_token=first.next_page_token + "x")),
    ]:
        with pytest.raises(InvalidArgument) as err:
            await keyed.service.list(other_scope, query)
        assert [v.field for v in err.value.violations] == ["page_token"]
    with pytest.raises(InvalidArgument):
        await keyed.service.history(S, KeyHistoryQuery("/p/0", page_token=first.next_page_token))


async def test_history_pages_oldest_first(keyed: Keyed) -> None:
    written = []
    for i in range(7):
        written.append(
            await keyed.service.set(
                S, KeyWrite("/h", Json.of(None if i == 3 else i), source=USER_SOURCE)
            )
        )
        await keyed.service.set(
            S, KeyWrite("/h/child", Json.of(i), source=USER_SOURCE)
        )  # a key below: not /h's history
        await keyed.service.set(S, KeyWrite("/h0", Json.of(i), source=USER_SOURCE))
    seen, token = [], ""
    while True:
        page = await keyed.service.history(S, KeyHistoryQuery("/h", page_size=3, page_token=token))
        assert len(page.entries) <= 3
        seen += page.entries
        token = page.next_page_token
        if not token:
            break
    assert seen == written
    assert [e.valid for e in seen] == [True, True, True, False, True, True, True]
    with pytest.raises(NotFound):
        await keyed.service.history(S, KeyHistoryQuery("/never"))


async def test_history_of_a_directory(keyed: Keyed) -> None:
    await keyed.service.set(S, KeyWrite("/a/x", Json.of(1), source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/b", Json.of(1), source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/a/x", Json.of(None), source=USER_SOURCE))
    await keyed.service.set(S, KeyWrite("/a/y/z", Json.of(2), source=USER_SOURCE))
    page = await keyed.service.history(S, KeyHistoryQuery("/a/"))
    assert [(e.key, e.version) for e in page.entries] == [("/a/x", 1), ("/a/x", 3), ("/a/y/z", 4)]
    everything = await keyed.service.history(S, KeyHistoryQuery("/"))
    assert len(everything.entries) == 4
    assert (await keyed.service.history(S, KeyHistoryQuery("/none/"))).entries == []


# ---------------------------------------------------------------- property

segment = st.sampled_from(["a", "b", "ab", "a0", "é", "漢", "z z", "%", "~", "a.b"])
paths = st.lists(segment, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    written=st.dictionaries(paths, st.booleans(), max_size=30),
    prefix=st.lists(segment, max_size=2).map(lambda parts: "/" + "".join(p + "/" for p in parts)),
    page=st.integers(1, 6),
)
async def test_paging_matches_a_reference_listing(
    keyed: Keyed, written: dict[str, bool], prefix: str, page: int
) -> None:
    """Every page-size gives the same listing as the reference, each item once."""
    scope = scope_for(agent=uuid.uuid4().hex)  # a fresh partition per example
    for key, alive in written.items():
        await keyed.service.set(scope, KeyWrite(key, Json.of({"k": key}), source=USER_SOURCE))
        if not alive:
            await keyed.service.set(scope, KeyWrite(key, Json.of(None), source=USER_SOURCE))
    live = sorted((k for k, alive in written.items() if alive), key=lambda k: k.encode())
    below = [k for k in live if k.startswith(prefix)]

    entries, dirs, _ = await list_all(keyed.service, scope, prefix, True, page)
    assert entries == below and dirs == []

    entries, dirs, _ = await list_all(keyed.service, scope, prefix, False, page)
    want_entries = [k for k in below if "/" not in k[len(prefix) :]]
    want_dirs = sorted(
        {prefix + k[len(prefix) :].split("/")[0] + "/" for k in below if k not in want_entries},
        key=lambda d: d.encode(),
    )
    assert entries == want_entries
    assert dirs == want_dirs


async def test_one_level_listing_skips_big_subtrees(keyed: Keyed) -> None:
    for i in range(300):
        await keyed.service.set(S, KeyWrite(f"/d/sub/{i:04d}", Json.of(i), source=USER_SOURCE))
    for key in ("/d/a", "/d/sub0", "/d/sub\U0010ffff", "/d/zz/x"):
        await keyed.service.set(S, KeyWrite(key, Json.of(1), source=USER_SOURCE))
    reads: list[int] = []
    real = keyed.records.list_records

    async def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        rows = await real(*args, **kwargs)
        reads.append(len(rows))
        return rows

    keyed.records.list_records = counting  # type: ignore[method-assign]
    listing = await keyed.service.list(S, KeyListQuery("/d/"))
    assert [e.key for e in listing.entries] == ["/d/a", "/d/sub0", "/d/sub\U0010ffff"]
    assert listing.directories == ["/d/sub/", "/d/zz/"]
    # The 300 keys below /d/sub/ were not all read: the listing jumped over them.
    assert sum(reads) < 300
    entries, dirs, pages = await list_all(keyed.service, S, "/d/", False, 1)
    assert (entries, dirs, pages) == (
        ["/d/a", "/d/sub0", "/d/sub\U0010ffff"],
        ["/d/sub/", "/d/zz/"],
        5,
    )
