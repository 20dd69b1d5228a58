"""SaveState / LoadState: named JSON components per session, versioned, size-limited."""

from __future__ import annotations

import pytest

from memoryd.config import SnapshotSettings
from memoryd.domain.errors import InvalidArgument, ResourceExhausted
from memoryd.domain.json_text import Json
from memoryd.domain.snapshot import StateWrite
from tests.unit.snapshot.world import scope_for, world

A = scope_for("agent-a")


async def test_save_load_versions_last_write_wins() -> None:
    async with world() as w:
        first = await w.state.save(
            A,
            "s1",
            [
                StateWrite("planner", Json.of({"step": 1})),
                StateWrite("cache", Json.of({"hits": [1, 2]})),
            ],
        )
        assert [(c.name, c.version) for c in first] == [("planner", 1), ("cache", 1)]
        w.clock.advance(seconds=5)
        second = await w.state.save(
            A, "s1", [StateWrite("planner", Json.of({"step": 2, "done": False}))]
        )
        assert second[0].version == 2 and second[0].updated_at > first[0].updated_at
        loaded = await w.state.load(A, "s1")
        assert [(c.name, c.state, c.version) for c in loaded] == [
            ("cache", {"hits": [1, 2]}, 1),
            ("planner", {"step": 2, "done": False}, 2),
        ]
        assert [c.name for c in await w.state.load(A, "s1", ["planner", "missing"])] == ["planner"]
        assert await w.state.load(A, "other-session") == []
        assert await w.state.load(scope_for("agent-b"), "s1") == []


async def test_limits_and_validation() -> None:
    settings = SnapshotSettings(max_state_bytes=64, max_state_components=2)
    async with world(snapshot=settings) as w:
        cases = [
            ("", [StateWrite("a", Json.of({}))], "session_id"),
            ("s\x01", [StateWrite("a", Json.of({}))], "session_id"),
            ("s1", [], "components"),
            ("s1", [StateWrite("", Json.of({}))], "components[0].name"),
            (
                "s1",
                [StateWrite("a", Json.of({})), StateWrite("a", Json.of({}))],
                "components[1].name",
            ),
            ("s1", [StateWrite("a", Json.of({"blob": "x" * 100}))], "components[0].state"),
            ("s1", [StateWrite(str(i), Json.of({})) for i in range(3)], "components"),
        ]
        for session, writes, field in cases:
            with pytest.raises(InvalidArgument) as err:
                await w.state.save(A, session, writes)
            assert err.value.violations[0].field == field
        await w.state.save(A, "s1", [StateWrite("a", Json.of({})), StateWrite("b", Json.of({}))])
        await w.state.save(
            A, "s1", [StateWrite("a", Json.of({"again": True}))]
        )  # an update is fine
        with pytest.raises(ResourceExhausted, match="max_state_components"):
            await w.state.save(A, "s1", [StateWrite("c", Json.of({}))])
        with pytest.raises(InvalidArgument):
            await w.state.load(A, "s1", ["bad\x00name"])


async def test_state_is_kept_as_its_writers_text() -> None:
    text = '{"price":1.50,"e":1e2,"id":12345678901234567,"z":-0,"n":{"a":[1.0]}}'
    async with world() as w:
        saved = await w.state.save(A, "s1", [StateWrite("planner", Json.parse(text))])
        assert saved[0].state_json == text
        loaded = await w.state.load(A, "s1")
        assert [c.state_json for c in loaded] == [text]
        assert loaded[0].state["price"] == 1.5
        # A value without text (a Struct on the wire) is stored as its JSON.
        await w.state.save(A, "s1", [StateWrite("cache", Json.of({"hits": 2}))])
        assert [c.state_json for c in await w.state.load(A, "s1", ["cache"])] == ['{"hits":2}']
