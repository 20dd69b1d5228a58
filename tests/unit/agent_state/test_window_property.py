"""GetSessionWindow is never over budget: a property over random sessions and budgets."""

from __future__ import annotations

import asyncio
import uuid

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memoryd.config import LimitsSettings, SessionSettings
from memoryd.domain.agent_state import FixedZoneKind, MessageDraft, MessageRole, SessionWindow
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.tokens import EstimateCounter, TokenCounter, TokenizerCounter
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import Summarizer, message_line
from memoryd.service.sessions.window import fixed_line
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.unit.agent_state.conftest import FakeClock
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
COUNTERS: dict[str, TokenCounter] = {
    "estimate": EstimateCounter(),
    "tokenizer": TokenizerCounter(),
}
WORDS = st.sampled_from(
    [
        "dentist",
        "appointment",
        "Monday",
        "10:00",
        "牙医",
        "预约",
        "ok",
        "!",
        "🌍",
        "x" * 30,
        "re-run",
    ]
)
TEXT = st.lists(WORDS, min_size=1, max_size=40).map(" ".join)
MESSAGE = st.builds(
    MessageDraft,
    role=st.sampled_from(list(MessageRole)),
    content=TEXT,
    name=st.sampled_from(["", "search"]),
)
FIXED = st.tuples(st.sampled_from(list(FixedZoneKind)), TEXT)


def used_tokens(counter: TokenCounter, window: SessionWindow) -> int:
    total = sum(counter.count(fixed_line(e)) for e in window.fixed_zone)
    total += counter.count(window.summary) if window.summary else 0
    return total + sum(counter.count(message_line(m)) for m in window.recent)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    counter_name=st.sampled_from(sorted(COUNTERS)),
    fixed=st.lists(FIXED, max_size=4),
    batches=st.lists(st.lists(MESSAGE, min_size=1, max_size=6), max_size=8),
    budget=st.integers(min_value=1, max_value=400),
    threshold=st.integers(min_value=3, max_value=12),
    merge=st.booleans(),
)
def test_window_is_never_over_budget(
    memories: MemoryService,
    counter_name: str,
    fixed: list[tuple[FixedZoneKind, str]],
    batches: list[list[MessageDraft]],
    budget: int,
    threshold: int,
    merge: bool,
) -> None:
    counter = COUNTERS[counter_name]
    config = SessionSettings(
        compress_threshold_messages=threshold,
        keep_recent_messages=threshold // 2,
        context_budget_tokens=300,
        summary_max_tokens=60,
        merge_adjacent_messages=merge,
    )

    async def scenario() -> None:
        records = InMemoryRecordStore()
        await records.open()
        sessions = SessionService(
            records=records,
            memories=memories,  # not used by append/inject/window
            summarizer=Summarizer(counter=counter, max_tokens=config.summary_max_tokens, llm=None),
            counter=counter,
            settings=config,
            limits=LimitsSettings(),
            page_tokens=PageTokenCodec(b"p" * 32),
            clock=FakeClock(),
        )
        session_id = uuid.uuid4().hex
        for kind, content in fixed:
            await sessions.inject(A, session_id, kind, content)
        appended = []
        for batch in batches:
            await sessions.append(A, session_id, batch)
            appended.extend(batch)
        if not fixed and not batches:
            return
        window = await sessions.window(A, session_id, token_budget=budget)
        assert window.tokens_used <= budget
        assert window.tokens_used == used_tokens(counter, window)
        assert window.token_counter == counter.name
        # The recent turns are the newest ones, contiguous and in order (merged runs
        # cover merged_from_seq..seq); only the newest may be cut, and then it says so.
        covered = [
            seq for m in window.recent for seq in range(m.merged_from_seq or m.seq, m.seq + 1)
        ]
        assert covered == list(range(len(appended) - len(covered) + 1, len(appended) + 1))
        cut = any("newest turn" in d.reason for d in window.degraded)
        for i, m in enumerate(window.recent):
            whole = "\n\n".join(
                c
                for c in (
                    appended[s - 1].content for s in range(m.merged_from_seq or m.seq, m.seq + 1)
                )
                if c
            )
            if cut and i == len(window.recent) - 1:
                assert m.content.endswith("[…]") or m.content == ""
                assert whole.startswith(m.content.removesuffix(" […]").removesuffix("[…]"))
            else:
                assert m.content == whole
        # Nothing falls between the summary and the turns shown.
        if covered:
            assert window.summarized_through_seq == covered[0] - 1
        whole_zone = sum(counter.count(fixed_line(e)) for e in window.fixed_zone)
        truncated = any(d.component == "token_budget" for d in window.degraded)
        event(f"summary present: {bool(window.summary)}")
        event(f"truncated: {truncated}")
        event(f"recent kept: {len(window.recent) == len(appended)}")
        if whole_zone < sum(counter.count(f"{k.value}: {c}") for k, c in _effective_zone(fixed)):
            assert truncated
        await records.close()

    asyncio.run(scenario())


def _effective_zone(
    fixed: list[tuple[FixedZoneKind, str]],
) -> list[tuple[FixedZoneKind, str]]:
    """The zone after replacements: one trigger, one focus, every instruction."""
    zone: list[tuple[FixedZoneKind, str]] = []
    for kind, content in fixed:
        if kind is not FixedZoneKind.INSTRUCTION:
            zone = [(k, c) for k, c in zone if k is not kind]
        zone.append((kind, content))
    return zone
