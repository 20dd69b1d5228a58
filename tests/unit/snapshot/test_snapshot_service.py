"""BuildSnapshot: sections, de-duplication, priority, budget cuts, rendering, isolation
and degradation."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from memoryd.domain.agent_state import (
    FixedZoneKind,
    MessageDraft,
    MessageRole,
    WorkingMemoryWrite,
    WorkingScope,
)
from memoryd.domain.errors import InvalidArgument, StoreError, Unavailable
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyListQuery
from memoryd.domain.models import SecurityLevel
from memoryd.domain.requests import MemoryDraft, MemoryPatch
from memoryd.domain.snapshot import (
    DefaultReadRequest,
    SnapshotFormat,
    SnapshotRequest,
    SnapshotSection,
)
from memoryd.service.common.tokens import TokenizerCounter
from tests.unit.snapshot.world import World, scope_for, world

A = scope_for("agent-a")
S = SnapshotSection
SCOPE = WorkingScope("thread-1", "doc-9")


async def remember(w: World, text: str, **kw: object) -> str:
    outcome = await w.memories.remember(A, MemoryDraft(content=text, **kw))  # type: ignore[arg-type]
    return outcome.memory.id


async def populate(w: World) -> dict[str, str]:
    ids = {
        "pinned": await remember(
            w, "The user is allergic to peanuts.", tags=("pinned",), importance=0.9
        ),
        "dentist": await remember(w, "The dentist appointment is on Monday at 10:00."),
        "colour": await remember(w, "The user prefers dark blue slides."),
    }
    await w.profiles.set(A, "You are a careful assistant.\nAnswer briefly.")
    await w.working.set(
        A, WorkingMemoryWrite(scope=SCOPE, content=Json.of({"goal": "book the dentist"}))
    )
    await w.sessions.inject(A, "s1", FixedZoneKind.TRIGGER, "The dentist's office called.")
    await w.sessions.append(
        A,
        "s1",
        [
            MessageDraft(MessageRole.USER, "Can you move my dentist appointment?"),
            MessageDraft(MessageRole.ASSISTANT, "Yes: which day suits you?"),
        ],
    )
    return ids


def request(**kw: object) -> SnapshotRequest:
    base: dict[str, object] = {
        "trigger": "When is the dentist appointment?",
        "scope": SCOPE,
        "session_id": "s1",
        "token_budget": 2000,
    }
    base.update(kw)
    return SnapshotRequest(**base)  # type: ignore[arg-type]


async def test_every_section_in_default_priority_and_markdown() -> None:
    async with world() as w:
        ids = await populate(w)
        snap = await w.snapshots.build(A, request(semantic_limit=1))
    sections = [u.section for u in snap.usage]
    assert sections == [S.PINNED, S.PROFILE, S.WORKING, S.SEMANTIC, S.RECENT, S.SESSION]
    text = snap.text
    assert text.index("## Pinned memories") < text.index("## Agent profile")
    assert "- The user is allergic to peanuts." in text
    assert '{"goal":"book the dentist"}' in text
    assert "trigger: The dentist's office called." in text
    assert "user: Can you move my dentist appointment?" in text
    # The session keeps chronological order, even though the newest is packed first.
    assert text.index("user: Can you") < text.index("assistant: Yes")
    semantic = [i.id for i in snap.items if i.section is S.SEMANTIC]
    assert semantic == [ids["dentist"]]
    assert [i.id for i in snap.items if i.section is S.RECENT] == [ids["colour"]]
    # The pinned memory is recalled too but shown once, in its first section.
    pinned_everywhere = [i for i in snap.items if i.id == ids["pinned"]]
    assert [i.section for i in pinned_everywhere] == [S.PINNED]
    assert any(o.id == ids["pinned"] and o.reason == "duplicate" for o in snap.omitted)
    assert snap.tokens_used == w.counter.count(text) <= snap.token_budget
    assert sum(u.tokens for u in snap.usage) <= snap.tokens_used + len(snap.usage)


async def test_xml_rendering_escapes_content() -> None:
    async with world() as w:
        await remember(w, 'Use <b>bold</b> & "quotes" \x01here', tags=("pinned",))
        snap = await w.snapshots.build(
            A, SnapshotRequest(format=SnapshotFormat.XML, sections=(S.PINNED,))
        )
    assert snap.text == (
        "<long_term_memory>\n<pinned>\n"
        '<memory type="fact">Use &lt;b&gt;bold&lt;/b&gt; &amp; "quotes" here</memory>\n'
        "</pinned>\n</long_term_memory>"
    )
    assert snap.items[0].text == 'Use <b>bold</b> & "quotes" \x01here'


async def test_priority_changes_fill_and_render_order() -> None:
    async with world() as w:
        ids = await populate(w)
        snap = await w.snapshots.build(A, request(priority=(S.SESSION, S.SEMANTIC)))
    assert [u.section for u in snap.usage] == [S.SESSION, S.SEMANTIC, S.PROFILE, S.WORKING]
    # The pinned memory is a semantic hit too: it now shows there, not under pinned.
    assert (S.SEMANTIC, ids["pinned"]) in {(i.section, i.id) for i in snap.items}
    assert any(o.section is S.PINNED and o.reason == "duplicate" for o in snap.omitted)


async def test_budget_cuts_whole_items_then_truncates_one() -> None:
    long_text = "The quarterly report covers revenue, costs and hiring plans in detail. " * 30
    async with world() as w:
        await remember(w, "Short pinned fact about the user.", tags=("pinned",), importance=1.0)
        big = await remember(w, long_text, tags=("pinned",), importance=0.8)
        small = await remember(w, "Another short pinned fact.", tags=("pinned",), importance=0.5)
        snap = await w.snapshots.build(A, SnapshotRequest(sections=(S.PINNED,), token_budget=60))
    by_id = {i.id: i for i in snap.items}
    # The big one does not fit whole: the smaller one after it still gets in whole,
    # then the big one is truncated into the room left.
    assert not by_id[small].truncated
    assert by_id[big].truncated and by_id[big].text.endswith("…")
    assert long_text.startswith(by_id[big].text[:-1].rstrip())
    assert snap.tokens_used <= 60
    assert [i.id for i in snap.items].index(big) == 1  # shown in its rank order


async def test_tiny_budgets_never_overflow() -> None:
    async with world(counter=TokenizerCounter()) as w:
        await populate(w)
        for budget in range(1, 40):
            for fmt in SnapshotFormat:
                snap = await w.snapshots.build(A, request(token_budget=budget, format=fmt))
                assert snap.tokens_used <= budget
                assert snap.tokens_used == w.counter.count(snap.text)
                if not snap.items:
                    assert snap.text == ""
                    assert all(o.reason in ("budget", "duplicate") for o in snap.omitted)


async def test_session_keeps_the_newest_turns_when_short_of_budget() -> None:
    async with world() as w:
        await w.sessions.append(
            A,
            "s2",
            [
                MessageDraft(MessageRole.USER, f"message number {i} about the trip")
                for i in range(8)
            ],
        )
        snap = await w.snapshots.build(
            A, SnapshotRequest(sections=(S.SESSION,), session_id="s2", token_budget=40)
        )
    kept = [i.id for i in snap.items]
    assert kept and "message:8" in kept
    assert "message:1" not in kept
    assert re.findall(r"message number (\d)", snap.text) == sorted(
        re.findall(r"message number (\d)", snap.text)
    )


async def test_archived_expired_and_above_clearance_memories_never_appear() -> None:
    low = scope_for("agent-a", clearance=SecurityLevel.INTERNAL)
    async with world() as w:
        secret = await remember(
            w, "Secret pinned note", tags=("pinned",), security_level=SecurityLevel.RESTRICTED
        )
        archived = await remember(w, "Archived pinned note", tags=("pinned",))
        await w.memories.update(
            A, archived, MemoryPatch(fields=frozenset({"archived"}), values={"archived": True})
        )
        visible = await remember(w, "Visible pinned note", tags=("pinned",))
        snap = await w.snapshots.build(low, SnapshotRequest(trigger="pinned note"))
        lowered = await w.snapshots.build(
            A, SnapshotRequest(trigger="note", max_security_level=SecurityLevel.INTERNAL)
        )
    for s in (snap, lowered):
        ids = {i.id for i in s.items} | {o.id for o in s.omitted}
        assert visible in ids
        assert secret not in ids and archived not in ids
        assert "Secret" not in s.text and "Archived" not in s.text


async def test_recent_window_and_limits() -> None:
    async with world() as w:
        for i in range(8):
            await remember(w, f"Recent event number {i} happened today.")
        snap = await w.snapshots.build(
            A, SnapshotRequest(sections=(S.RECENT,), recent_limit=3, token_budget=500)
        )
        assert [i.text for i in snap.items] == [
            f"Recent event number {i} happened today." for i in (7, 6, 5)
        ]
        w.clock.advance(days=2)
        later = await w.snapshots.build(A, SnapshotRequest(sections=(S.RECENT,)))
        assert later.items == []
        wide = await w.snapshots.build(
            A, SnapshotRequest(sections=(S.RECENT,), recent_window=timedelta(days=3))
        )
        assert len(wide.items) == 5


async def test_semantic_from_embedding_and_limit() -> None:
    async with world() as w:
        ids = await populate(w)
        vector = (await w.embedder.embed(["dentist appointment Monday"]))[0]
        snap = await w.snapshots.build(
            A,
            SnapshotRequest(sections=(S.SEMANTIC,), trigger_embedding=vector, semantic_limit=1),
        )
    assert [i.id for i in snap.items] == [ids["dentist"]]


async def test_embedder_down_degrades_to_full_text() -> None:
    async with world() as w:
        ids = await populate(w)
        w.embedder.down = True
        snap = await w.snapshots.build(A, request())
    assert any(d.component == "embedder" for d in snap.degraded)
    assert ids["dentist"] in {i.id for i in snap.items if i.section is S.SEMANTIC}


async def test_a_section_the_record_store_cannot_serve_is_left_out_and_said_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with world() as w:
        ids = await populate(w)

        async def unreadable(*args: object, **kwargs: object) -> None:
            raise StoreError("records table unreadable (test)")

        monkeypatch.setattr(w.records, "get_records", unreadable)
        monkeypatch.setattr(w.records, "list_records", unreadable)
        snap = await w.snapshots.build(A, request())
        # Every record-backed read answers UNAVAILABLE: never "not found" or "empty".
        reads = [
            w.profiles.get(A),
            w.working.get(A, SCOPE),
            w.sessions.window(A, "s1"),
            w.state.load(A, "s1"),
            w.keyed.get(A, "/user/style"),
            w.keyed.list(A, KeyListQuery("/")),
            w.default_read.read(A, DefaultReadRequest()),
        ]
        for read in reads:
            with pytest.raises(Unavailable):
                await read
    sections = {i.section for i in snap.items}
    assert S.PROFILE not in sections and S.WORKING not in sections and S.SESSION not in sections
    assert ids["pinned"] in {i.id for i in snap.items}  # memory sections still served
    left_out = [d.reason for d in snap.degraded if d.component == "store"]
    assert sorted(r.split(" ")[0] for r in left_out) == ["profile", "session", "working"]


async def test_session_summary_without_llm_is_reported() -> None:
    async with world() as w:
        await w.sessions.append(
            A, "s3", [MessageDraft(MessageRole.USER, f"turn {i} of a long talk") for i in range(40)]
        )
        snap = await w.snapshots.build(A, SnapshotRequest(sections=(S.SESSION,), session_id="s3"))
    assert any(i.id == "summary" for i in snap.items)
    assert any(d.component == "llm" for d in snap.degraded)


async def test_missing_inputs() -> None:
    async with world() as w:
        await populate(w)
        # Asking for every section: the ones without input are skipped.
        snap = await w.snapshots.build(A, SnapshotRequest())
        assert {u.section for u in snap.usage} == {S.PINNED, S.PROFILE, S.RECENT}
        # Naming a section without its input is an error naming the field.
        for req, field in (
            (SnapshotRequest(sections=(S.WORKING,)), "scope"),
            (SnapshotRequest(sections=(S.SESSION,)), "session_id"),
            (SnapshotRequest(sections=(S.SEMANTIC,)), "trigger"),
            (SnapshotRequest(token_budget=0), "token_budget"),
            (SnapshotRequest(token_budget=10**9), "token_budget"),
            (SnapshotRequest(priority=(S.PINNED, S.PINNED)), "priority[1]"),
            (SnapshotRequest(semantic_limit=1000), "semantic_limit"),
            (SnapshotRequest(recent_window=timedelta(0)), "recent_window"),
        ):
            with pytest.raises(InvalidArgument) as err:
                await w.snapshots.build(A, req)
            assert err.value.violations[0].field == field, req
        # Unknown scope or session: simply empty sections.
        empty = await w.snapshots.build(
            A,
            SnapshotRequest(
                sections=(S.WORKING, S.SESSION), scope=WorkingScope("nope"), session_id="nope"
            ),
        )
        assert empty.items == [] and empty.text == ""


async def test_other_agents_memories_never_appear() -> None:
    async with world() as w:
        await populate(w)
        other = await w.snapshots.build(scope_for("agent-b"), request())
    assert other.items == [] and other.text == ""
