"""The user_memory snapshot format: the layered-memory design's context block (seed 001,
§4.2 _format_memories_for_context), with the document's own example memories (§3.2)."""

from __future__ import annotations

from memoryd.domain.models import MemoryType
from memoryd.domain.requests import MemoryDraft
from memoryd.domain.snapshot import SnapshotFormat, SnapshotRequest, SnapshotSection
from memoryd.service.common.tokens import TokenizerCounter
from tests.unit.snapshot.world import World, scope_for, world

A = scope_for("agent-a")
S = SnapshotSection
#: MEMORY_EXAMPLES of the document, one per type.
EXAMPLES = [
    (MemoryType.PREFERENCE, "用户偏好使用蓝色配色方案"),
    (MemoryType.FACT, "用户的公司名称是'TechCorp'，主营AI产品"),  # noqa: RUF001 (the document's text)
    (MemoryType.PATTERN, "用户通常在周一上午9-11点使用Agent做周报"),
    (MemoryType.SKILL, "Deep Research任务：先web_search → read_url → summarize"),  # noqa: RUF001
]


async def remember_examples(w: World) -> None:
    for memory_type, content in reversed(EXAMPLES):
        await w.memories.remember(
            A, MemoryDraft(content=content, memory_type=memory_type, tags=("pinned",))
        )
    await w.memories.remember(A, MemoryDraft(content="用户的公司在上海", tags=("pinned",)))


async def test_memories_grouped_by_type_under_user_memory() -> None:
    async with world() as w:
        await remember_examples(w)
        await w.profiles.set(A, "You are an AI assistant with long-term memory.")
        snap = await w.snapshots.build(
            A,
            SnapshotRequest(format=SnapshotFormat.USER_MEMORY, sections=(S.PINNED, S.PROFILE)),
        )
    facts = sorted([EXAMPLES[1][1], "用户的公司在上海"])
    pinned_facts = [i.text for i in snap.items if i.text in facts]
    assert snap.text == "\n\n".join(
        [
            "# USER MEMORY",
            f"## User Preferences\n- {EXAMPLES[0][1]}",
            "## Known Facts\n" + "\n".join(f"- {t}" for t in pinned_facts),
            f"## User Patterns\n- {EXAMPLES[2][1]}",
            f"## Proven Skills\n- {EXAMPLES[3][1]}",
            "## Agent profile\nYou are an AI assistant with long-term memory.",
        ]
    )
    assert sorted(pinned_facts) == facts
    assert {u.section: u.items for u in snap.usage} == {S.PINNED: 5, S.PROFILE: 1}
    assert sum(u.tokens for u in snap.usage) <= snap.tokens_used
    assert snap.tokens_used == w.counter.count(snap.text)


async def test_the_budget_holds_and_whole_groups_go_first() -> None:
    async with world(counter=TokenizerCounter()) as w:
        await remember_examples(w)
        full = await w.snapshots.build(
            A, SnapshotRequest(format=SnapshotFormat.USER_MEMORY, sections=(S.PINNED,))
        )
        for budget in range(1, full.tokens_used + 2):
            snap = await w.snapshots.build(
                A,
                SnapshotRequest(
                    format=SnapshotFormat.USER_MEMORY, sections=(S.PINNED,), token_budget=budget
                ),
            )
            assert snap.tokens_used <= budget
            assert snap.tokens_used == w.counter.count(snap.text)
            if snap.items:
                assert snap.text.startswith("# USER MEMORY\n\n## ")
        assert snap.text == full.text
