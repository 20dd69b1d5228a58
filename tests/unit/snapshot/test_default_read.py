"""DefaultRead: valid, unexpired keys, by recency then importance then tag overlap,
one line each, within the token limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoryd.config import LimitsSettings
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.keyed import KeyEntry, KeyWrite
from memoryd.domain.models import Provenance, ProvenanceKind, SecurityLevel
from memoryd.domain.snapshot import DefaultReadRequest
from memoryd.service.default_read import rank_lines
from memoryd.service.tokens import TokenizerCounter
from tests.unit.snapshot.world import World, scope_for, world

USER_SOURCE = Provenance(ProvenanceKind.USER)

A = scope_for("agent-a")


async def put(w: World, key: str, content: object, **kw: object) -> None:
    await w.keyed.set(A, KeyWrite(key=key, content=content, **kw, source=USER_SOURCE))  # type: ignore[arg-type]


async def test_lines_skip_tombstones_and_expired_entries() -> None:
    soon = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    async with world() as w:
        await put(
            w, "/user/style", {"summary": "Short answers,\n  code first.", "type": "preference"}
        )
        await put(w, "/user/old", "gone soon")
        await put(w, "/user/old", None)
        await put(w, "/task/today", {"text": "Book the dentist", "expired_at": soon})
        await put(w, "/numbers", [1, 2, 3])
        now = await w.default_read.read(A, DefaultReadRequest())
        later = await w.default_read.read(
            A, DefaultReadRequest(current_time=datetime.now(UTC) + timedelta(hours=2))
        )
    assert [line.key for line in now.lines] == ["/numbers", "/task/today", "/user/style"]
    assert now.text.splitlines() == [
        "/numbers [fact]: [1,2,3]",
        "/task/today [fact]: Book the dentist",
        "/user/style [preference]: Short answers, code first.",
    ]
    assert [line.key for line in later.lines] == ["/numbers", "/user/style"]
    assert now.tokens_used == w.counter.count(now.text)


async def test_order_recency_then_importance_then_tags() -> None:
    async with world() as w:
        await put(w, "/a", {"text": "a", "importance": 0.2, "tags": ["x"]})
        await put(w, "/b", {"text": "b", "importance": 0.9})
        await put(w, "/c", {"text": "c", "importance": 0.2, "tags": ["x", "y"]})
        ordered = await w.default_read.read(A, DefaultReadRequest())
    assert [line.key for line in ordered.lines] == ["/c", "/b", "/a"]


def test_equal_recency_ranks_by_importance_then_tag_overlap() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)

    def entry(key: str, content: object, at: datetime = when) -> KeyEntry:
        return KeyEntry(key=key, content=content, valid=True, version=1, updated_at=at)

    entries = [
        entry("/a", {"text": "a", "importance": 0.2, "tags": ["x"]}),
        entry("/b", {"text": "b", "importance": 0.9}),
        entry("/c", {"text": "c", "importance": 0.2, "tags": ["x", "y"]}),
        entry("/d", {"text": "d", "importance": 0.2}),
        entry("/e", {"text": "e"}, at=when - timedelta(seconds=1)),
    ]
    lines = rank_lines(entries, when, ["x", "y"], LimitsSettings(), 80)
    assert [line.key for line in lines] == ["/b", "/c", "/a", "/d", "/e"]


async def test_token_limit_cuts_whole_lines() -> None:
    async with world(counter=TokenizerCounter()) as w:
        for i in range(30):
            await put(w, f"/notes/n{i:02d}", f"note number {i} about the project plan")
        service = w.default_read
        for limit in (1, 5, 17, 60, 300):
            result = await service.read(A, DefaultReadRequest(token_limit=limit))
            assert result.tokens_used <= limit
            assert result.tokens_used == w.counter.count(result.text)
            assert len(result.text.splitlines()) == len(result.lines)
        big = await service.read(A, DefaultReadRequest(token_limit=10_000))
    assert len(big.lines) == 30


async def test_prefix_clearance_and_isolation() -> None:
    low = scope_for("agent-a", clearance=SecurityLevel.INTERNAL)
    async with world() as w:
        await put(w, "/user/a", "visible")
        await put(w, "/user/secret", "hidden", security_level=SecurityLevel.RESTRICTED)
        await put(w, "/other/b", "elsewhere")
        result = await w.default_read.read(low, DefaultReadRequest(prefix="/user/"))
        other = await w.default_read.read(scope_for("agent-b"), DefaultReadRequest())
    assert [line.key for line in result.lines] == ["/user/a"]
    assert other.lines == [] and other.text == ""


async def test_bad_requests_name_the_field() -> None:
    async with world() as w:
        for req, field in (
            (DefaultReadRequest(token_limit=0), "token_limit"),
            (DefaultReadRequest(tags=("",)), "tags[0]"),
            (DefaultReadRequest(prefix="/a/../b"), "prefix"),
        ):
            with pytest.raises(InvalidArgument) as err:
                await w.default_read.read(A, req)
            assert err.value.violations[0].field == field
