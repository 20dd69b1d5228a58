"""DefaultRead: valid, unexpired keys ranked by recency, importance and tag overlap,
one line each under an [Agent Memory] header, within the token limit."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from memoryd.config import LimitsSettings
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.models import Provenance, ProvenanceKind, SecurityLevel
from memoryd.domain.snapshot import DefaultReadRequest
from memoryd.service.common.tokens import TokenizerCounter
from memoryd.service.keyed.index import KeyIndexes
from tests.unit.snapshot.world import World, scope_for, world

USER_SOURCE = Provenance(ProvenanceKind.USER)

A = scope_for("agent-a")


async def put(w: World, key: str, content: object, **kw: object) -> None:
    await w.keyed.set(A, KeyWrite(key=key, content=Json.of(content), **kw, source=USER_SOURCE))  # type: ignore[arg-type]


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
    # The design's output: a header, then "key type summary" (no type: no label).
    assert now.text.splitlines() == [
        "[Agent Memory]",
        "/numbers [1,2,3]",
        "/task/today Book the dentist",
        "/user/style preference Short answers, code first.",
    ]
    assert [line.type for line in now.lines] == ["", "", "preference"]
    assert now.lines[0].content_json == "[1,2,3]"
    assert [line.key for line in later.lines] == ["/numbers", "/user/style"]
    assert now.tokens_used == w.counter.count(now.text)


async def test_importance_and_tags_count_among_keys_written_together() -> None:
    async with world() as w:
        await put(w, "/a", {"text": "a", "importance": 0.2, "tags": ["x"]})
        await put(w, "/b", {"text": "b", "importance": 0.9})
        await put(w, "/c", {"text": "c", "importance": 0.4, "tags": ["x", "y"]})
        ordered = await w.default_read.read(A, DefaultReadRequest())
        tagged = await w.default_read.read(A, DefaultReadRequest(tags=("x", "y")))
    # Written within milliseconds: importance decides, then the newer key.
    assert [line.key for line in ordered.lines] == ["/b", "/c", "/a"]
    # Scores 0.6 recency + 0.25 importance + 0.15 tag share: b 0.825, c 0.7, a 0.65;
    # with tags x and y c gets 0.15 (0.85) and a 0.075 (0.725): c overtakes b.
    assert [line.key for line in tagged.lines] == ["/c", "/b", "/a"]
    assert ordered.lines[0].score > ordered.lines[1].score


async def test_token_limit_cuts_whole_lines() -> None:
    async with world(counter=TokenizerCounter()) as w:
        for i in range(30):
            await put(w, f"/notes/n{i:02d}", f"note number {i} about the project plan")
        service = w.default_read
        for limit in (1, 5, 17, 60, 300):
            result = await service.read(A, DefaultReadRequest(token_limit=limit))
            assert result.tokens_used <= limit
            assert result.tokens_used == w.counter.count(result.text)
            assert len(result.text.splitlines()) == len(result.lines) + bool(result.lines)
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


async def test_indexes_warm_up_at_start_and_follow_the_store() -> None:
    """Loaded in the background at start (an agent's first read does not wait for
    it), then fed by writes; a write it did not see (another process on a shared
    store) makes a validating index reload."""
    async with world() as w:
        for i in range(5):
            await put(w, f"/n/{i}", {"summary": f"note {i}"})
        fresh = KeyIndexes(w.records, LimitsSettings(), validate=True)
        fresh.start()
        try:
            for _ in range(500):
                if fresh.loads:
                    break
                await asyncio.sleep(0.01)
            assert fresh.loads == 1
            index = await fresh.get(A.partition)
            assert sorted(index.keys) == [f"/n/{i}" for i in range(5)] and fresh.loads == 1
            # Written through the world's own service: this index was not told.
            await put(w, "/n/new", {"summary": "new"})
            index = await fresh.get(A.partition)
            assert "/n/new" in index.keys and fresh.loads == 2
        finally:
            await fresh.close()
