"""Context expansion through the operation door: a neighbour turn is a result like any
other, so a low-clearance caller never gets one above its clearance, gets the ones it
may see masked, and never another agent's turn of the same session."""

from __future__ import annotations

from memoryd.domain.models import SecurityLevel
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.operations import Door, Services
from memoryd.operations import memories as ops
from memoryd.security.masking import Masker
from memoryd.security.settings import MaskingSettings
from tests.unit.operations.test_door import WithLow, call_as
from tests.unit.service.helpers import Harness, harness, scope_for  # noqa: F401 (fixture)

TURNS = [
    ("Ana: write to me at alice@example.com", SecurityLevel.INTERNAL),
    ("Ben: I ran the Lisbon marathon on Sunday", SecurityLevel.INTERNAL),
    ("Ana: the door code is 4711", SecurityLevel.RESTRICTED),
    ("Ben: see you at noon", SecurityLevel.INTERNAL),
]


async def test_neighbours_pass_the_doors_clearance_masking_and_partition(
    harness: Harness,  # noqa: F811
) -> None:
    door = Door(
        Services(memories=harness.service), WithLow(), masker=Masker(MaskingSettings(enabled=True))
    )
    for agent in ("a1", "a2"):  # a2: the same session id, another agent
        for seq, (text, level) in enumerate(TURNS, start=1):
            draft = MemoryDraft(
                f"{agent} {text}", security_level=level, session_id="run-1", sequence=seq
            )
            if agent == "a1":
                await door.run(ops.REMEMBER, call_as("writer"), agent, lambda d=draft: d)
            else:
                await harness.service.remember(scope_for(agent), draft)
    query = RecallQuery("Lisbon marathon", limit=3, context_window=1)
    full = await door.run(ops.RECALL, call_as("writer"), "a1", lambda: query)
    # The hit, then the turns either side of it (equal relevance: either order).
    first, *around = [r.memory.content for r in full.value.results]
    assert first == f"a1 {TURNS[1][0]}" and set(around) == {
        f"a1 {TURNS[0][0]}",
        f"a1 {TURNS[2][0]}",
    }
    low = await door.run(ops.RECALL, call_as("low"), "a1", lambda: query)
    contents = [r.memory.content for r in low.value.results]
    assert contents[:2] == [f"a1 {TURNS[1][0]}", "a1 Ana: write to me at [email]"]
    assert not any("4711" in c or c.startswith("a2 ") for c in contents)
