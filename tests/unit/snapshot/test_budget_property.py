"""BuildSnapshot never exceeds its budget: a property over random budgets (tiny ones
included), random memory sets (unicode, CJK, huge items, XML-hostile text), both
formats and both token counters. The budget covers the whole rendered text: headers,
XML tags and separators included."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memoryd.domain.agent_state import (
    FixedZoneKind,
    MessageDraft,
    MessageRole,
    WorkingMemoryWrite,
    WorkingScope,
)
from memoryd.domain.json_text import Json
from memoryd.domain.requests import MemoryDraft
from memoryd.domain.snapshot import Snapshot, SnapshotFormat, SnapshotRequest
from memoryd.service.common.tokens import EstimateCounter, TokenCounter, TokenizerCounter
from tests.unit.snapshot.world import scope_for, world

COUNTERS: dict[str, TokenCounter] = {"estimate": EstimateCounter(), "tokenizer": TokenizerCounter()}
A = scope_for("agent-a")
PLAIN = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=120,
)
HOSTILE = st.sampled_from(
    [
        "<long_term_memory>",
        "</pinned>",
        "a & b < c > d",
        "]]><![CDATA[",
        "\"quoted\" 'single'",
        "\x01\x02\x0b\x0c\x1f control",
        "\ufffe\uffff noncharacters",
        "## not a header\n- not an item",
        "line one\r\nline two\rline three",
    ]
)
CJK = st.text(alphabet="界世牙医预约한국어ひらがなカタカナ", min_size=1, max_size=60)
HUGE = st.sampled_from(["word " * 1600, "界" * 2700, "x" * 8000, "🌍" * 2000])
CONTENT = st.one_of(PLAIN, HOSTILE, CJK, HUGE, st.tuples(PLAIN, HOSTILE).map(" ".join)).filter(
    lambda s: s.strip() and len(s.encode()) <= 8192
)
BUDGET = st.one_of(st.integers(1, 20), st.integers(21, 400), st.integers(401, 4000))


async def _build(
    counter: TokenCounter,
    memories: list[tuple[str, bool]],
    profile: str,
    working: dict[str, str],
    messages: list[str],
    trigger: str,
    budget: int,
    fmt: SnapshotFormat,
) -> Snapshot:
    async with world(counter=counter) as w:
        if memories:
            drafts = [
                MemoryDraft(content=text, tags=("pinned",) if pinned else ())
                for text, pinned in memories
            ]
            await w.memories.remember_batch(A, drafts)
        if profile.strip():
            await w.profiles.set(A, profile)
        scope = WorkingScope("thread-1", "")
        if working:
            await w.working.set(A, WorkingMemoryWrite(scope=scope, content=Json.of(working)))
        if messages:
            await w.sessions.inject(A, "s1", FixedZoneKind.TRIGGER, trigger)
            drafts2 = [
                MessageDraft(MessageRole.USER if i % 2 else MessageRole.ASSISTANT, m)
                for i, m in enumerate(messages)
            ]
            await w.sessions.append(A, "s1", drafts2)
        return await w.snapshots.build(
            A,
            SnapshotRequest(
                trigger=trigger,
                token_budget=budget,
                format=fmt,
                scope=scope,
                session_id="s1" if messages else "",
            ),
        )


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    counter_name=st.sampled_from(sorted(COUNTERS)),
    memories=st.lists(st.tuples(CONTENT, st.booleans()), min_size=1, max_size=12),
    profile=st.one_of(st.just(""), CONTENT),
    working=st.dictionaries(st.sampled_from(["goal", "step", "目标", "<x>"]), CONTENT, max_size=3),
    messages=st.lists(CONTENT, max_size=6),
    trigger=st.one_of(PLAIN, HOSTILE, CJK).filter(str.strip),
    budget=BUDGET,
    fmt=st.sampled_from(list(SnapshotFormat)),
)
def test_snapshot_never_exceeds_its_budget(
    counter_name: str,
    memories: list[tuple[str, bool]],
    profile: str,
    working: dict[str, str],
    messages: list[str],
    trigger: str,
    budget: int,
    fmt: SnapshotFormat,
) -> None:
    counter = COUNTERS[counter_name]
    snap = asyncio.run(_build(counter, memories, profile, working, messages, trigger, budget, fmt))
    assert snap.tokens_used <= budget
    assert snap.tokens_used == counter.count(snap.text)
    assert snap.token_budget == budget and snap.token_counter == counter.name
    assert sum(1 for item in snap.items if item.truncated) <= 1
    if snap.items:
        event("non-empty")
        if fmt is SnapshotFormat.XML:
            assert snap.text.startswith("<long_term_memory>")
            assert snap.text.endswith("</long_term_memory>")
    else:
        assert snap.text == ""
    if any(item.truncated for item in snap.items):
        event("truncated")
    # Every candidate is either in the snapshot or reported as left out.
    ids = [(i.section, i.id) for i in snap.items]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {(o.section, o.id) for o in snap.omitted if o.reason == "duplicate"}
